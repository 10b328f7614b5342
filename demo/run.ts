/**
 * `npm run demo`: resilix finds an upstream's secret capacity over real sockets.
 *
 * Starts demo/upstream.ts on 127.0.0.1 (ephemeral port), then offers it more requests per second
 * than it can serve, through real `fetch` wrapped by `resilientFetch` and one adaptive limiter.
 * Four phases: quiet, busy, a latency cliff (service time x5), recovery. Prints one row a second
 * and a summary, which states the capacity resilix found (the busy phase's limit median) beside
 * the secret one, writes an SVG of the limit and the server's in-flight against the capacity line
 * (reports/demo/demo.svg; the summary says where), then shuts everything down. Loopback only;
 * 44 s; 6 400 requests.
 */
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  isLimitExceededError,
  isTimeoutError,
  type LimiterOptions,
  limiter,
  pipeline,
  resilientFetch,
  timeout,
} from '../src/index';
import type { PlotSample } from './plot';
import { startUpstream, type UpstreamPhase } from './upstream';

/** Where `npm run demo` writes its plot (reports/ is not committed). */
export const DEFAULT_SVG_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'reports', 'demo', 'demo.svg');

export interface DemoPhase {
  name: string;
  seconds: number;
  /** Requests offered per second (open loop: they arrive whether or not earlier ones finished). */
  offeredPerSecond: number;
  upstream: UpstreamPhase;
}

export interface DemoOptions {
  phases: DemoPhase[];
  /** Rows per second of the table. Default 1. */
  rowsPerSecond?: number;
  /** Per-request budget (queueing included), ms. Default 1000. */
  timeoutMs?: number;
  limiter?: LimiterOptions;
  /** Where lines go. Default console.log. */
  print?: (line: string) => void;
  /** Where to write the SVG of limit and in-flight against the capacity; `false`: no plot. Default DEFAULT_SVG_PATH. */
  svgPath?: string | false;
}

export interface PhaseSummary {
  name: string;
  offered: number;
  ok: number;
  /** Refused by resilix (limit exceeded, or the budget ran out in the queue): the upstream never saw them. */
  shed: number;
  /** Ran, but hit the deadline. */
  timedOut: number;
  /** Upstream 503s and network errors. */
  errors: number;
  p50Ms: number;
  p99Ms: number;
  /** Mean limit over the phase's second half (after the limiter had time to settle). */
  settledLimit: number;
  /** The most requests the upstream had in flight at once during the phase. */
  upstreamPeak: number;
  capacity: number;
}

/** The capacity resilix found, beside the secret one (issue 14 item 6). */
export interface CapacityFound {
  /** The phase it is read in: 'busy' (the first phase offering more than the capacity, if none is so named). */
  phase: string;
  /** Median of the limit, sampled every 100 ms over the phase's second half. */
  limitMedian: number;
  /** The secret capacity during that phase. */
  capacity: number;
  /** limitMedian in [capacity, 2 x capacity]. */
  within: boolean;
}

export interface DemoSummary {
  phases: PhaseSummary[];
  found: CapacityFound | undefined;
  /** Where the plot was written, if it was. */
  svgPath: string | undefined;
  /** Requests offered in total (the bound). */
  offered: number;
  /** The limit the run started at, the highest it reached, and where it ended. */
  initialLimit: number;
  peakLimit: number;
  finalLimit: number;
  elapsedMs: number;
}

/** The default run: 4 phases, 44 s in all, 6 400 requests. */
export const DEFAULT_PHASES: DemoPhase[] = [
  // Capacity 6 at 40 ms serves 150 req/s. A quiet start (a third of that) lets the limiter see the
  // no-load latency: its first two windows (about 4 s) are warm-up and teach nothing.
  { name: 'quiet', seconds: 8, offeredPerSecond: 50, upstream: { capacity: 6, serviceMs: 40 } },
  // 200 req/s offered is a third more than the upstream can serve.
  { name: 'busy', seconds: 12, offeredPerSecond: 200, upstream: { capacity: 6, serviceMs: 40 } },
  // The latency cliff: service time x5 (seed 000's experiment); half the load is still 3x too many.
  { name: 'cliff', seconds: 12, offeredPerSecond: 100, upstream: { capacity: 6, serviceMs: 200 } },
  { name: 'recovery', seconds: 12, offeredPerSecond: 200, upstream: { capacity: 6, serviceMs: 40 } },
];

/** The limit and the server's in-flight every SAMPLE_MS, for the plot and the capacity found. */
const SAMPLE_MS = 100;

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

function ms(value: number): string {
  return Number.isNaN(value) ? '     -' : `${value.toFixed(0).padStart(5)}ms`;
}

interface Tally {
  latencies: number[];
  ok: number;
  shed: number;
  timedOut: number;
  errors: number;
}

const emptyTally = (): Tally => ({ latencies: [], ok: 0, shed: 0, timedOut: 0, errors: 0 });

export async function runDemo(options: DemoOptions): Promise<DemoSummary> {
  const print = options.print ?? ((line: string) => console.log(line));
  const rowMs = 1_000 / (options.rowsPerSecond ?? 1);
  const first = options.phases[0]!;
  const upstream = await startUpstream({ ...first.upstream });
  const gate = limiter(options.limiter);
  const initialLimit = gate.limit;
  let peakLimit = gate.limit;
  const watching = gate.onLimitChange((change) => {
    peakLimit = Math.max(peakLimit, change.to);
  });
  const call = resilientFetch(pipeline(gate, timeout({ timeoutMs: options.timeoutMs ?? 1_000 })));
  const target = `${upstream.url}/work`;
  const totalMs = options.phases.reduce((sum, p) => sum + p.seconds * 1_000, 0);

  // Warm the client (fetch's code paths, a first connection) outside the limiter and the table:
  // a cold first request is our process starting, not the upstream's latency.
  try {
    for (let i = 0; i < 3; i++) await (await fetch(target)).arrayBuffer();
  } catch (error) {
    watching.dispose();
    await upstream.close();
    throw error;
  }

  const summaries: PhaseSummary[] = [];
  const finished: Array<{ phase: DemoPhase; tally: Tally; limits: number[]; peak: number; sent: number }> = [];
  const pending = new Set<Promise<void>>();
  let offered = 0;
  const startedAt = performance.now();

  print(`resilix demo: upstream on ${upstream.url} (capacity: secret; the limiter will find it)`);
  print('');
  print(
    `  ${'time'.padEnd(7)} ${'phase'.padEnd(9)} ${'limit'.padEnd(26)} ${'in-flight'.padStart(9)} ${'queued'.padStart(6)} ` +
      `${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'ok/s'.padStart(5)} ${'shed/s'.padStart(6)}`,
  );

  // Rows run on the run's clock, not the phase's: one a second, phase boundaries included. A call
  // counts in the row in which it finished, and in the phase in which it was offered.
  let row = emptyTally();
  let nextRow = startedAt + rowMs;
  const samples: PlotSample[] = [];
  let nextSample = startedAt;
  const phaseWindows: Array<{ phase: DemoPhase; fromMs: number; toMs: number }> = [];

  function fire(phase: Tally): void {
    offered++;
    const t0 = performance.now();
    const done = call(target)
      .then(async (response) => {
        await response.arrayBuffer();
        const latency = performance.now() - t0;
        if (response.ok) {
          row.ok++;
          phase.ok++;
          row.latencies.push(latency);
          phase.latencies.push(latency);
        } else {
          row.errors++;
          phase.errors++;
        }
      })
      .catch((error: unknown) => {
        const shed = isLimitExceededError(error) || (isTimeoutError(error) && error.queued);
        const which = shed ? 'shed' : isTimeoutError(error) ? 'timedOut' : 'errors';
        row[which]++;
        phase[which]++;
      })
      .finally(() => pending.delete(done));
    pending.add(done);
  }

  try {
    for (const phase of options.phases) {
      upstream.setPhase(phase.upstream);
      const phaseTally = emptyTally();
      const limits: number[] = [];
      let phasePeak = 0;
      const phaseStart = performance.now();
      const phaseEnd = phaseStart + phase.seconds * 1_000;
      phaseWindows.push({ phase, fromMs: phaseStart - startedAt, toMs: phaseEnd - startedAt });
      const scheduled = Math.round(phase.seconds * phase.offeredPerSecond);
      let due = 0;
      let sent = 0;
      // Open-loop arrivals on a 5 ms tick: the demo's own timer, not the library's.
      while (performance.now() < phaseEnd) {
        const now = performance.now();
        due = Math.floor(((now - phaseStart) / 1_000) * phase.offeredPerSecond);
        while (sent < due && sent < scheduled) {
          fire(phaseTally);
          sent++;
        }
        if (now >= nextSample) {
          samples.push({ tMs: now - startedAt, limit: gate.limit, inflight: upstream.stats().inflight });
          nextSample += SAMPLE_MS;
        }
        if (now >= nextRow) {
          const sorted = row.latencies.sort((a, b) => a - b);
          const peak = upstream.takePeak();
          phasePeak = Math.max(phasePeak, peak);
          if (now - phaseStart >= (phase.seconds * 1_000) / 2) limits.push(gate.limit);
          const elapsed = (now - startedAt) / 1_000;
          const bar = '#'.repeat(Math.min(20, gate.limit)).padEnd(20);
          const perSecond = 1_000 / rowMs;
          print(
            `  ${`${elapsed.toFixed(0)}/${(totalMs / 1_000).toFixed(0)}s`.padEnd(7)} ${phase.name.padEnd(9)} ` +
              `${String(gate.limit).padStart(4)} ${bar}  ${String(gate.inflight).padStart(9)} ${String(gate.queued).padStart(6)} ` +
              `${ms(quantile(sorted, 0.5))} ${ms(quantile(sorted, 0.99))} ${String(Math.round(row.ok * perSecond)).padStart(5)} ` +
              `${String(Math.round(row.shed * perSecond)).padStart(6)}`,
          );
          row = emptyTally();
          nextRow += rowMs;
        }
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      // The last tick's stragglers: the phase offers exactly its schedule.
      while (sent < scheduled) {
        fire(phaseTally);
        sent++;
      }
      finished.push({ phase, tally: phaseTally, limits, peak: Math.max(phasePeak, upstream.takePeak()), sent });
    }
    // Let the last calls finish (bounded by the per-request budget): a call counts for the phase
    // it was offered in.
    await Promise.allSettled([...pending]);
  } finally {
    watching.dispose();
    await upstream.close();
  }
  for (const { phase, tally, limits, peak, sent } of finished) {
    const sorted = tally.latencies.sort((a, b) => a - b);
    summaries.push({
      name: phase.name,
      offered: sent,
      ok: tally.ok,
      shed: tally.shed,
      timedOut: tally.timedOut,
      errors: tally.errors,
      p50Ms: quantile(sorted, 0.5),
      p99Ms: quantile(sorted, 0.99),
      settledLimit: limits.length === 0 ? gate.limit : limits.reduce((a, b) => a + b, 0) / limits.length,
      upstreamPeak: peak,
      capacity: phase.upstream.capacity,
    });
  }

  const elapsedMs = performance.now() - startedAt;
  print('');
  print(
    `  ${'phase'.padEnd(9)} ${'offered'.padStart(7)} ${'ok'.padStart(6)} ${'shed'.padStart(6)} ${'timeout'.padStart(7)} ` +
      `${'p50'.padStart(7)} ${'p99'.padStart(7)} ${'limit'.padStart(6)} ${'upstream peak'.padStart(13)}`,
  );
  for (const s of summaries) {
    print(
      `  ${s.name.padEnd(9)} ${String(s.offered).padStart(7)} ${String(s.ok).padStart(6)} ${String(s.shed).padStart(6)} ` +
        `${String(s.timedOut).padStart(7)} ${ms(s.p50Ms)} ${ms(s.p99Ms)} ${s.settledLimit.toFixed(1).padStart(6)} ` +
        `${String(s.upstreamPeak).padStart(13)}`,
    );
  }
  print('');
  const last = options.phases[options.phases.length - 1]!;
  const shed = summaries.reduce((sum, p) => sum + p.shed, 0);
  const upstreamPeak = Math.max(...summaries.map((p) => p.upstreamPeak));
  print(
    `  the upstream's secret: ${last.upstream.capacity} requests at a time, ${last.upstream.serviceMs} ms each ` +
      `(${Math.round((last.upstream.capacity * 1_000) / last.upstream.serviceMs)} req/s). resilix was never told.`,
  );
  print(
    `  the limit started at ${initialLimit}, peaked at ${peakLimit} and ended at ${gate.limit}, from latency alone.`,
  );
  print(`  ${shed} requests were shed by resilix and never reached the upstream; the server never had more`);
  print(`  than ${upstreamPeak} in flight. 'limit' above is the mean over each phase's second half.`);
  print(`  ${offered} requests in ${(elapsedMs / 1_000).toFixed(1)} s, all on loopback.`);

  const found = capacityFound(phaseWindows, samples);
  if (found !== undefined) {
    const lo = found.capacity;
    const hi = 2 * found.capacity;
    print(
      `  the capacity resilix found: a limit of ${found.limitMedian} (median over the ${found.phase} phase's second half) ` +
        `against the secret ${found.capacity}: ${found.within ? 'within' : 'NOT within'} [${lo}, ${hi}]` +
        `${found.within ? '' : found.limitMedian > hi ? ', too high' : ', too low'}.`,
    );
  }
  let svgPath: string | undefined;
  if (options.svgPath !== false) {
    svgPath = options.svgPath ?? DEFAULT_SVG_PATH;
    const { writeLimitPlot } = await import('./plot');
    await writeLimitPlot(
      svgPath,
      `resilix demo: limit and the server's in-flight against its secret capacity`,
      [
        {
          title: options.phases.map((p) => `${p.name} ${p.offeredPerSecond}/s`).join(', '),
          samples,
          reference: phaseWindows.map((w) => ({ fromMs: w.fromMs, toMs: w.toMs, value: w.phase.upstream.capacity })),
          referenceLabel: 'secret capacity',
          marks: phaseWindows.slice(1).map((w) => ({ atMs: w.fromMs, label: w.phase.name })),
        },
      ],
      "server's in-flight",
    );
    const shown = relative(process.cwd(), svgPath);
    print(`  plot of limit and in-flight against the capacity line: ${shown.startsWith('..') ? svgPath : shown}`);
  }
  return { phases: summaries, found, svgPath, offered, initialLimit, peakLimit, finalLimit: gate.limit, elapsedMs };
}

/**
 * The busy phase (named 'busy', or the first that offers more than the capacity serves) and the
 * median of the limit over its second half: the first half is the limiter's time to settle.
 */
function capacityFound(
  windows: ReadonlyArray<{ phase: DemoPhase; fromMs: number; toMs: number }>,
  samples: readonly PlotSample[],
): CapacityFound | undefined {
  const servesPerSecond = (p: DemoPhase) => (p.upstream.capacity * 1_000) / p.upstream.serviceMs;
  const busy =
    windows.find((w) => w.phase.name === 'busy') ??
    windows.find((w) => w.phase.offeredPerSecond > servesPerSecond(w.phase));
  if (busy === undefined) return undefined;
  const half = (busy.fromMs + busy.toMs) / 2;
  const limits = samples
    .filter((s) => s.tMs >= half && s.tMs < busy.toMs)
    .map((s) => s.limit)
    .sort((a, b) => a - b);
  if (limits.length === 0) return undefined;
  const limitMedian = limits[Math.ceil(limits.length / 2) - 1]!;
  const capacity = busy.phase.upstream.capacity;
  return {
    phase: busy.phase.name,
    limitMedian,
    capacity,
    within: limitMedian >= capacity && limitMedian <= 2 * capacity,
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runDemo({ phases: DEFAULT_PHASES }).catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
