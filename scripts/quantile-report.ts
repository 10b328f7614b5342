/**
 * Quantile estimator report (spec 9.3): accuracy of P², the bounded sorted ring and the hybrid
 * against each window's exact p90, memory per instance, and cost per add.
 *
 * Regenerate docs/quantiles.md with:
 *   WRITE_REPORT=1 npx vitest run test/stats/quantile-report.test.ts
 *
 * Accuracy and computed memory are deterministic (seeded); heap and timing figures are measured
 * on the machine that runs it and are printed, never asserted.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import { Ewma, MedianFilter, P2Quantile, type QuantileEstimator, SortedRing, WindowQuantile } from '../src/internal';
import { DISTRIBUTIONS, exactQuantile, lognormalMs, mulberry32 } from '../test/stats/support/latency-samples';

/** p90: Envoy's and Uber's default, independently (spec 6). */
export const REPORT_QUANTILE = 0.9;
/** 10: a quiet key; 50: the default window (failsafe-go minSamples); 250: Uber's; 1000: busy. */
export const WINDOW_SIZES = [10, 50, 250, 1000] as const;
export const WINDOWS_PER_CELL = 200;
/** The KeyRegistry holds up to 1 000 limiters; the stats budget is 2 KB per key (issue 3). */
export const BUDGET_BYTES_PER_KEY = 2048;

export interface EstimatorSpec {
  readonly name: string;
  readonly create: () => QuantileEstimator;
}

export const ESTIMATORS: readonly EstimatorSpec[] = [
  { name: 'P²', create: () => new P2Quantile(REPORT_QUANTILE) },
  { name: 'ring 64', create: () => new SortedRing({ quantile: REPORT_QUANTILE, capacity: 64 }) },
  {
    name: 'hybrid 32',
    create: () => new WindowQuantile({ quantile: REPORT_QUANTILE, exactCapacity: 32 }),
  },
  {
    name: 'hybrid 64',
    create: () => new WindowQuantile({ quantile: REPORT_QUANTILE, exactCapacity: 64 }),
  },
];

/** Name of the pseudo-estimator "the window's exact p90" measured against the population p90. */
export const WINDOW_NOISE = 'window vs population';

export interface AccuracyCell {
  readonly distribution: string;
  readonly windowSize: number;
  /** An ESTIMATORS name, or WINDOW_NOISE. */
  readonly estimator: string;
  /** Median over windows of |estimate - exact| / exact. */
  readonly medianRelativeError: number;
  /** 95th percentile over windows of the same. */
  readonly p95RelativeError: number;
}

/** One seed per (distribution, window size) cell, so every estimator sees identical windows. */
export function cellSeed(distributionIndex: number, windowSize: number): number {
  return 0x5eed_0000 + distributionIndex * 10_007 + windowSize;
}

/** Draws per distribution for its population p90 (one long window of the same shape). */
const POPULATION_DRAWS = 200_000;

function summarise(distribution: string, windowSize: number, estimator: string, errors: Float64Array): AccuracyCell {
  const sorted = errors.sort();
  return {
    distribution,
    windowSize,
    estimator,
    medianRelativeError: exactQuantile(sorted, 0.5),
    p95RelativeError: exactQuantile(sorted, 0.95),
  };
}

/**
 * Every estimator's error against each window's exact p90, plus WINDOW_NOISE: how far the
 * window's exact p90 itself lies from the distribution's p90 (the noise no estimator can remove).
 */
export function measureAccuracy(windowsPerCell: number = WINDOWS_PER_CELL): AccuracyCell[] {
  const cells: AccuracyCell[] = [];
  const estimators = ESTIMATORS.map((spec) => ({ name: spec.name, instance: spec.create() }));
  DISTRIBUTIONS.forEach((distribution, distributionIndex) => {
    const population = exactQuantile(
      distribution.window(mulberry32(cellSeed(distributionIndex, 0)), POPULATION_DRAWS),
      REPORT_QUANTILE,
    );
    for (const windowSize of WINDOW_SIZES) {
      const random = mulberry32(cellSeed(distributionIndex, windowSize));
      const errors = estimators.map(() => new Float64Array(windowsPerCell));
      const noise = new Float64Array(windowsPerCell);
      for (let window = 0; window < windowsPerCell; window++) {
        const latenciesMs = distribution.window(random, windowSize);
        const exact = exactQuantile(latenciesMs, REPORT_QUANTILE);
        noise[window] = Math.abs(exact - population) / population;
        estimators.forEach(({ instance }, estimatorIndex) => {
          instance.reset();
          for (const latencyMs of latenciesMs) instance.add(latencyMs);
          (errors[estimatorIndex] as Float64Array)[window] = Math.abs(instance.value() - exact) / exact;
        });
      }
      cells.push(summarise(distribution.name, windowSize, WINDOW_NOISE, noise));
      estimators.forEach(({ name }, estimatorIndex) => {
        cells.push(summarise(distribution.name, windowSize, name, errors[estimatorIndex] as Float64Array));
      });
    }
  });
  return cells;
}

/**
 * Payload bytes of an instance: typed-array contents plus 8 bytes per number or boolean field,
 * recursing into owned objects (the hybrid owns a P2Quantile). V8 headers are not included;
 * `measureHeapBytes` gives the real figure.
 */
export function payloadBytes(instance: object): number {
  let bytes = 0;
  for (const field of Object.values(instance)) {
    if (ArrayBuffer.isView(field)) bytes += field.byteLength;
    else if (typeof field === 'number' || typeof field === 'boolean') bytes += 8;
    else if (typeof field === 'object' && field !== null) bytes += payloadBytes(field);
  }
  return bytes;
}

type CollectGarbage = () => void;

function garbageCollector(): CollectGarbage | undefined {
  try {
    v8.setFlagsFromString('--expose-gc');
    return vm.runInNewContext('gc') as CollectGarbage;
  } catch {
    return undefined;
  }
}

const HEAP_INSTANCES = 5_000;
const HEAP_REPEATS = 5;

/**
 * Heap bytes per live instance (V8 heap plus ArrayBuffer backing stores): growth over
 * HEAP_INSTANCES live instances, median of HEAP_REPEATS. NaN where gc cannot be exposed.
 */
export function measureHeapBytes(create: () => object): number {
  const collect = garbageCollector();
  if (collect === undefined) return Number.NaN;
  const used = (): number => {
    collect();
    collect();
    const usage = process.memoryUsage();
    return usage.heapUsed + usage.arrayBuffers;
  };
  const perInstance: number[] = [];
  for (let repeat = 0; repeat < HEAP_REPEATS; repeat++) {
    const held: object[] = new Array<object>(HEAP_INSTANCES);
    const before = used();
    for (let index = 0; index < HEAP_INSTANCES; index++) held[index] = create();
    const after = used();
    if (held.length !== HEAP_INSTANCES) throw new Error('unreachable: keeps `held` alive');
    perInstance.push((after - before) / HEAP_INSTANCES);
  }
  return exactQuantile(perInstance, 0.5);
}

export interface MemoryRow {
  readonly estimator: string;
  readonly payloadBytes: number;
  readonly heapBytes: number;
}

/** Everything src/stats keeps for one limiter key, with the given quantile estimator. */
function perKey(estimator: EstimatorSpec): { name: string; create: () => object } {
  return {
    name: `per key: ${estimator.name} + median + EWMA`,
    create: () => ({
      quantile: estimator.create(),
      median: new MedianFilter(3),
      smoothed: new Ewma({ alpha: 0.2, warmupSamples: 10 }),
    }),
  };
}

export const MEMORY_SUBJECTS: readonly { name: string; create: () => object }[] = [
  ...ESTIMATORS,
  { name: 'MedianFilter(3)', create: () => new MedianFilter(3) },
  { name: 'Ewma', create: () => new Ewma({ alpha: 0.2, warmupSamples: 10 }) },
  ...ESTIMATORS.map(perKey),
];

export function measureMemory(includeHeap: boolean): MemoryRow[] {
  return MEMORY_SUBJECTS.map(({ name, create }) => ({
    estimator: name,
    payloadBytes: payloadBytes(create()),
    heapBytes: includeHeap ? measureHeapBytes(create) : Number.NaN,
  }));
}

export interface CostRow {
  readonly subject: string;
  /** Median over runs of nanoseconds per add (window resets and value() calls included). */
  readonly nanosecondsPerAdd: number;
}

function medianOf(values: number[]): number {
  return exactQuantile(values, 0.5);
}

const COST_WINDOWS = 1_000;
const COST_RUNS = 15;

/** ns per add on COST_WINDOWS lognormal-s1.2 windows of `windowSize`, median of COST_RUNS runs. */
export function measureAddCost(windowSize: number): CostRow[] {
  const random = mulberry32(0xc057);
  const windows = Array.from({ length: COST_WINDOWS }, () => {
    const latenciesMs = new Float64Array(windowSize);
    for (let index = 0; index < windowSize; index++) latenciesMs[index] = lognormalMs(random, 10, 1.2);
    return latenciesMs;
  });
  const adds = windows.length * windowSize;
  const time = (run: () => void): number => {
    run(); // warm-up: let the JIT settle
    run();
    const runs: number[] = [];
    for (let repeat = 0; repeat < COST_RUNS; repeat++) {
      const startMs = performance.now();
      run();
      runs.push(((performance.now() - startMs) * 1e6) / adds);
    }
    return medianOf(runs);
  };
  let sink = 0;
  const rows: CostRow[] = ESTIMATORS.map(({ name, create }) => {
    const estimator = create();
    return {
      subject: name,
      nanosecondsPerAdd: time(() => {
        for (const latenciesMs of windows) {
          estimator.reset();
          for (const latencyMs of latenciesMs) estimator.add(latencyMs);
          sink += estimator.value();
        }
      }),
    };
  });
  const median = new MedianFilter(3);
  const ewma = new Ewma({ alpha: 0.2, warmupSamples: 10 });
  rows.push(
    {
      subject: 'MedianFilter(3)',
      nanosecondsPerAdd: time(() => {
        for (const latenciesMs of windows) for (const latencyMs of latenciesMs) sink += median.add(latencyMs);
      }),
    },
    {
      subject: 'Ewma',
      nanosecondsPerAdd: time(() => {
        for (const latenciesMs of windows) for (const latencyMs of latenciesMs) sink += ewma.add(latencyMs);
      }),
    },
  );
  if (Number.isNaN(sink)) throw new Error('unreachable: keeps the loops observable');
  return rows;
}

/**
 * The reading of the numbers. Every accuracy and payload figure quoted here is asserted by
 * test/stats/quantile-report.test.ts, so a change that breaks a claim fails the suite; heap
 * and timing are machine-dependent, so the prose points at their tables instead of quoting them.
 */
export const READING = `- **Small windows need an exact answer.** P² alone misses the p90 of a 10-value window by
  10% or more (median) on every distribution, and by 25% or more at n = 50 when the p90 sits
  near the gap of a bimodal mix (88/12, 90/10). Its markers start as the first five values
  and move at most one rank per value, so a short window ends before they settle. The default
  window is 50 samples (spec 6) and a quiet key closes windows with far fewer, so this is the
  case that matters most.
- **Large windows need P².** The ring keeps only the last 64 values, so on a window of 1000 it
  answers for the last 6% of it: 40% or more median error on a latency ramp (sorted input) and
  on bursts, where the tail of the window is not like the rest. P² sees every value, so a
  ramp or a burst moves its markers wherever in the window it happens.
- **The hybrid takes both.** \`WindowQuantile\` with 64 exact slots is exact on every window of
  10 and 50 values (zero error in every cell), and on windows of 250 and 1000 its median error
  is at most 7% on every distribution except the 90/10 gap mix, never more than 1 point worse
  than P² alone (seeding the markers from exact order statistics often makes it better: see
  the 88/12 rows).
- **The 90/10 mix is a property of the question, not of the estimator.** With 10% slow calls,
  the p90 is exactly at the gap between the modes, and each window's own exact p90 lies 20% or
  more (median) from the distribution's p90 at every window size: it flips between "top of the
  fast mode" and "bottom of the slow mode" with the binomial count of slow calls. The hybrid's
  error against the window's exact p90 there (under 50% median at n = 250 and 1000) is of the
  same order as that noise, and no estimator removes the noise itself: the median filter and
  the EWMA downstream (spec 5.2) steady the signal, not a better quantile.
- **Memory.** The hybrid needs one Float64Array of 64 (the P² markers move into its first ten
  slots at the switch): 536 payload bytes; with the median filter and the EWMA, one key's
  statistics are 632 payload bytes. Measured heap, headers
  included, is in the table above; V8 charges roughly 170-250 bytes per typed array on top of
  its contents, which is why each primitive keeps exactly one.
- **Cost.** Every estimator adds a value in well under a microsecond (table above), far inside
  Cinnamon's "1 microsecond of overhead per request" (spec 10).`;

const percent = (fraction: number): string => `${(fraction * 100).toFixed(1)}%`;

function accuracyTable(cells: readonly AccuracyCell[]): string {
  const columns = [WINDOW_NOISE, ...ESTIMATORS.map((spec) => spec.name)];
  const header = ['distribution', 'n', ...columns];
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, index) => (index < 2 ? '---' : '---:')).join('|')}|`];
  for (const distribution of DISTRIBUTIONS) {
    for (const windowSize of WINDOW_SIZES) {
      const row = columns.map((column) => {
        const cell = cells.find(
          (candidate) =>
            candidate.distribution === distribution.name &&
            candidate.windowSize === windowSize &&
            candidate.estimator === column,
        );
        if (cell === undefined) return 'n/a';
        return `${percent(cell.medianRelativeError)} / ${percent(cell.p95RelativeError)}`;
      });
      lines.push(`| ${distribution.name} | ${windowSize} | ${row.join(' | ')} |`);
    }
  }
  return lines.join('\n');
}

export interface QuantileReportData {
  readonly accuracy: readonly AccuracyCell[];
  readonly memory: readonly MemoryRow[];
  readonly cost: readonly CostRow[];
  readonly node: string;
}

export function collectQuantileReport(): QuantileReportData {
  return {
    accuracy: measureAccuracy(),
    memory: measureMemory(true),
    cost: measureAddCost(50),
    node: process.version,
  };
}

export function formatQuantileReport(data: QuantileReportData): string {
  const legend = DISTRIBUTIONS.map((d) => `- **${d.name}**: ${d.description}`).join('\n');
  const memoryLines = data.memory.map(
    (row) =>
      `| ${row.estimator} | ${row.payloadBytes} | ${Number.isNaN(row.heapBytes) ? 'n/a' : Math.round(row.heapBytes)} |`,
  );
  const costLines = data.cost.map((row) => `| ${row.subject} | ${row.nanosecondsPerAdd.toFixed(1)} |`);
  return `# Quantile estimators: measured

<!-- Generated by scripts/quantile-report.ts. Do not edit by hand. -->

Regenerate: \`WRITE_REPORT=1 npx vitest run test/stats/quantile-report.test.ts\`

Decision: [ADR 0016](../adr/0016-quantile-estimator.md). Spec 9.3 asked for P² to be validated
against exact quantiles on bursty, skewed and bimodal latency before committing to it.

## Method

Each cell draws ${WINDOWS_PER_CELL} independent windows of n latencies from a seeded generator
(mulberry32, \`test/stats/support/latency-samples.ts\`), feeds each window to a freshly reset
estimator in arrival order, and compares its p90 with the window's exact p90 (type 7, linear
interpolation). Cells show the **median / p95 of |estimate - exact| / exact** over the windows.

The column **${WINDOW_NOISE}** is not an estimator: it is how far each window's exact p90 lies
from the p90 of the distribution itself (from ${POPULATION_DRAWS.toLocaleString(
    'en-US',
  )} draws). It is the noise a window of n
calls carries before any estimator touches it; an estimator error well below it is harmless.

Estimators: **P²** = \`P2Quantile\` alone; **ring 64** = \`SortedRing\`, exact over the last 64
values; **hybrid K** = \`WindowQuantile\`, exact up to K values then P² seeded from them.

${legend}

## Accuracy (p90 relative error, median / p95 over windows)

${accuracyTable(data.accuracy)}

## Memory per instance

Payload = typed-array bytes + 8 bytes per scalar field (computed, deterministic). Heap = measured
growth of V8 heap + ArrayBuffer memory per live instance, over ${HEAP_INSTANCES} live instances,
median of ${HEAP_REPEATS} (Node ${data.node}; includes object and typed-array headers, which cost
~170-250 bytes per typed array; varies by engine and a little by run).

| instance | payload bytes | heap bytes |
|---|---:|---:|
${memoryLines.join('\n')}

## Cost per add

Median of ${COST_RUNS} runs over ${COST_WINDOWS} windows of 50 lognormal-s1.2 latencies, including one
\`reset()\` and one \`value()\` per window for the quantile estimators (Node ${data.node}, this
machine, \`performance.now\`; a figure to compare estimators, not a budget or a test).

| subject | ns per add |
|---|---:|
${costLines.join('\n')}

## Reading

${READING}
`;
}

/** The whole report as markdown. */
export function buildQuantileReport(): string {
  return formatQuantileReport(collectQuantileReport());
}
