/**
 * Overhead per call and bytes per call: resilix against a raw `await fn()` and against the
 * libraries a user would pick instead, all in one process, in one run (issues 10 and 16;
 * DESIGN.md §7).
 *
 *   npx tsx bench/overhead.ts [--modes isolated,interleaved,inflight,alloc] [--reps 21] [--rep-ms 25]
 *                             [--inflight-reps 15] [--rounds 5] [--time-ms 100] [--alloc-rounds 3]
 *                             [--alloc-calls 100000] [--filter regexp] [--json out.json]
 *                             [--entry src|dist] [--compare dir | --without-events] [--clock cpu|wall]
 *
 * Four measurements, each over every case (docs/benchmarks.md#method):
 *
 * - `interleaved` (the headline): every case lives in this one process and is warmed up before any
 *   is measured, as the many pipelines and call sites of a real application are. A repetition runs
 *   every case once, in turn (each repetition starting at a different case), for ~`--rep-ms` of
 *   calls, and takes the whole stretch's time: garbage collection included. Differences and
 *   ratios are taken within a repetition; the figure is the median over repetitions.
 * - `isolated`: mitata 1.0 times one case at a time in a burst of >= `--time-ms` (the median of
 *   4 096-call batches), so while it is measured that case's code is the only code running and a
 *   batch without a collection counts as much as one with. It is the lower number, and what the
 *   benchmark reported before issue 16; shown beside the headline.
 * - `inflight`: 100 calls in flight (100 sequential workers side by side) against p-limit and
 *   cockatiel, interleaved and timed like `interleaved`.
 * - `alloc`: bytes per call (bench/allocation.ts: V8's GC accounting, collections included).
 *
 * `--compare <dir>` also builds another copy of src/ (a proposed change) and runs its resilix cases,
 * suffixed `@alt`, interleaved with the current ones: the fairest A/B on a noisy machine.
 * `--without-events` compares with a copy whose per-call events hook is compiled out
 * (bench/without-events.ts): what the hook costs a call nobody listens to.
 * The default clock is the process's CPU time (`--clock cpu`): on a shared machine a descheduled
 * process's wall clock keeps running, its CPU time does not. `--clock wall` measures wall time.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { measure } from 'mitata';
import { AllocationMeter, bytesPerIteration } from './allocation';
import { buildCases, buildInflightCases, type BenchCase, type CaseKind, type InflightCase } from './cases';
import { collectGarbage, Counter, median, quantile, rotate } from './harness';
import { loadResilix } from './resilix';
import { withoutEventsCopy } from './without-events';

const MODES = ['isolated', 'interleaved', 'inflight', 'alloc'] as const;
type Mode = (typeof MODES)[number];

const { values: flags } = parseArgs({
  options: {
    modes: { type: 'string', default: MODES.join(',') },
    reps: { type: 'string', default: '21' },
    'rep-ms': { type: 'string', default: '25' },
    'inflight-reps': { type: 'string', default: '15' },
    rounds: { type: 'string', default: '5' },
    'time-ms': { type: 'string', default: '100' },
    'alloc-rounds': { type: 'string', default: '3' },
    'alloc-calls': { type: 'string', default: '100000' },
    filter: { type: 'string' },
    json: { type: 'string' },
    entry: { type: 'string', default: process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src' },
    compare: { type: 'string' },
    'without-events': { type: 'boolean', default: false },
    clock: { type: 'string', default: 'cpu' },
  },
  strict: true,
});

function positive(name: string, text: string | undefined): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a positive number; received ${text}`);
  return value;
}

const args = {
  modes: new Set(
    flags.modes!.split(',').map((m) => {
      if (!(MODES as readonly string[]).includes(m)) throw new Error(`--modes: unknown mode ${m}`);
      return m as Mode;
    }),
  ),
  reps: positive('reps', flags.reps),
  repMs: positive('rep-ms', flags['rep-ms']),
  inflightReps: positive('inflight-reps', flags['inflight-reps']),
  rounds: positive('rounds', flags.rounds),
  timeMs: positive('time-ms', flags['time-ms']),
  allocRounds: positive('alloc-rounds', flags['alloc-rounds']),
  allocCalls: positive('alloc-calls', flags['alloc-calls']),
  filter: flags.filter === undefined ? undefined : new RegExp(flags.filter),
  json: flags.json,
  entry: flags.entry as 'src' | 'dist',
  compare: flags.compare,
  clock: flags.clock as 'cpu' | 'wall',
};
if (args.entry !== 'src' && args.entry !== 'dist') throw new Error('--entry is src or dist');
if (args.clock !== 'cpu' && args.clock !== 'wall') throw new Error('--clock is cpu or wall');

const log = (line: string): void => {
  process.stderr.write(`${line}\n`);
};

/** CPU time of this process in ns (its GC and JIT threads included), or wall time. */
const cpuNow = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) * 1e3;
};
const now = args.clock === 'cpu' ? cpuNow : (): number => performance.now() * 1e6;

/**
 * The whole machine's busy and steal time, from /proc/stat (Linux), to say how much else ran
 * during the measurement. Undefined elsewhere.
 */
function machineTicks(): { busy: number; steal: number; total: number } | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [, ...fields] = line.trim().split(/\s+/);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = fields.map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq!;
    return { busy, steal: steal!, total: busy + idle! + iowait! + steal! };
  } catch {
    return undefined;
  }
}

/** The cases selected by --filter, plus the baselines and peers they are compared with. */
function select<C extends { id: string; kind: CaseKind; peer?: string; baseline?: string }>(all: C[]): C[] {
  const kept = all.filter(
    (c) => args.filter === undefined || c.kind === 'raw' || args.filter.test(c.id.replace(/@alt$/, '')),
  );
  for (const c of all) {
    if (kept.includes(c)) continue;
    if (kept.some((k) => k.peer === c.id || k.peer === c.id.replace(/@alt$/, ''))) kept.push(c);
  }
  return kept.filter((c) => c.kind !== 'raw' || kept.some((k) => (k.baseline ?? 'raw') === c.id) || c.id === 'raw');
}

/** Per-case series of per-repetition figures, in ns per call (or bytes per call). */
type Series = Map<string, number[]>;

function push(series: Series, id: string, value: number): void {
  const values = series.get(id);
  if (values === undefined) series.set(id, [value]);
  else values.push(value);
}

/** The median over repetitions of f(a, b), computed within each repetition. */
function paired(series: Series, a: string, b: string | undefined, f: (x: number, y: number) => number): number {
  if (b === undefined) return NaN;
  const xs = series.get(a);
  const ys = series.get(b);
  if (xs === undefined || ys === undefined) return NaN;
  return median(xs.map((x, i) => f(x, ys[i]!)));
}

function pairedQuantiles(series: Series, a: string, b: string): [number, number] {
  const xs = series.get(a);
  const ys = series.get(b);
  if (xs === undefined || ys === undefined) return [NaN, NaN];
  const diffs = xs.map((x, i) => x - ys[i]!);
  return [quantile(diffs, 0.25), quantile(diffs, 0.75)];
}

const counter = new Counter(0);

async function timeLoop(c: BenchCase, calls: number): Promise<number> {
  counter.reset(calls);
  const started = now();
  await c.loop(counter);
  return (now() - started) / calls;
}

async function timeRun(c: InflightCase, calls: number): Promise<number> {
  const started = now();
  await c.run(calls);
  return (now() - started) / calls;
}

/** Calls per repetition for a case that takes `ns` per call: about `repMs` of them, at least 2 000. */
function callsFor(ns: number, multiple: number): number {
  const calls = Math.max(2_000, Math.min(1_000_000, (args.repMs * 1e6) / Math.max(ns, 1)));
  return Math.ceil(calls / multiple) * multiple;
}

async function interleaved(cases: BenchCase[]): Promise<Series> {
  const series: Series = new Map();
  // Every case is warmed up before any is measured: the JIT sees them all, as in an application.
  for (let pass = 0; pass < 3; pass++) for (const c of cases) await c.loop(counter.reset(20_000));
  const calls = new Map<string, number>();
  for (const c of cases) calls.set(c.id, callsFor(await timeLoop(c, 5_000), 1));
  for (let rep = 0; rep < args.reps; rep++) {
    for (const c of rotate(cases, rep)) push(series, c.id, await timeLoop(c, calls.get(c.id)!));
    if ((rep + 1) % 5 === 0 || rep + 1 === args.reps) log(`interleaved repetition ${rep + 1}/${args.reps} done`);
  }
  return series;
}

async function inflight(cases: InflightCase[]): Promise<Series> {
  const series: Series = new Map();
  for (let pass = 0; pass < 3; pass++) for (const c of cases) await c.run(20_000);
  const calls = new Map<string, number>();
  for (const c of cases) calls.set(c.id, callsFor(await timeRun(c, 5_000), 100));
  for (let rep = 0; rep < args.inflightReps; rep++) {
    for (const c of rotate(cases, rep)) push(series, c.id, await timeRun(c, calls.get(c.id)!));
    if ((rep + 1) % 5 === 0 || rep + 1 === args.inflightReps)
      log(`in-flight repetition ${rep + 1}/${args.inflightReps} done`);
  }
  return series;
}

async function isolated(cases: BenchCase[]): Promise<Series> {
  const series: Series = new Map();
  for (const c of cases) await c.loop(counter.reset(20_000));
  for (let round = 0; round < args.rounds; round++) {
    for (const c of rotate(cases, round)) {
      const stats = await measure(c.loop, {
        gc: collectGarbage,
        min_cpu_time: args.timeMs * 1e6,
        now,
        // Always time batches of calls (4 096 per sample): mitata would time single calls when a
        // warm-up call happened to be slow, and one call is below the CPU clock's 1 us resolution.
        batch_threshold: Infinity,
        warmup_threshold: Infinity,
      });
      push(series, c.id, stats.p50);
    }
    log(`isolated round ${round + 1}/${args.rounds} done`);
  }
  return series;
}

async function allocation(cases: BenchCase[]): Promise<Series> {
  const series: Series = new Map();
  const meter = new AllocationMeter();
  for (let round = 0; round < args.allocRounds; round++) {
    for (const c of rotate(cases, round)) {
      collectGarbage();
      push(series, c.id, await bytesPerIteration(meter, c.loop, args.allocCalls, args.allocCalls / 5));
    }
    log(`allocation round ${round + 1}/${args.allocRounds} done`);
  }
  return series;
}

function fmtNs(ns: number): string {
  if (!Number.isFinite(ns)) return '';
  return Math.abs(ns) >= 10_000 ? `${(ns / 1000).toFixed(1)} us` : `${Math.round(ns)}`;
}

function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '';
  return Math.abs(bytes) < 0.5 ? '0' : bytes.toFixed(0);
}

function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(r < 0.1 ? 3 : 2)}x` : '';
}

async function main(): Promise<void> {
  const { module: resilix, file: resilixFile } = await loadResilix(args.entry);
  if (flags['without-events'] && args.compare !== undefined) throw new Error('--compare or --without-events, not both');
  const compareDir = flags['without-events'] ? withoutEventsCopy() : args.compare;
  const alternative = compareDir === undefined ? undefined : (await loadResilix('src', compareDir)).module;
  const withAlternative = <C extends { id: string; label: string; kind: CaseKind }>(
    build: (r: typeof resilix) => C[],
  ): C[] => {
    const all = build(resilix);
    if (alternative !== undefined) {
      for (const c of build(alternative)) {
        // Without the hook a listener hears nothing, and the listened cases check that they hear.
        const hears = flags['without-events'] && c.id.includes('-listened');
        if (c.kind === 'resilix' && !hears) all.push({ ...c, id: `${c.id}@alt`, label: `${c.label} @alt` });
      }
    }
    return select(all);
  };
  const cases = withAlternative(buildCases);
  const inflightCases = withAlternative(buildInflightCases);
  const loadBefore = os.loadavg()[0]!;
  const ticksBefore = machineTicks();
  const cpuBefore = cpuNow();
  const started = Date.now();

  const interleavedNs = args.modes.has('interleaved') ? await interleaved(cases) : new Map();
  const inflightNs = args.modes.has('inflight') ? await inflight(inflightCases) : new Map();
  const isolatedNs = args.modes.has('isolated') ? await isolated(cases) : new Map();
  const bytes = args.modes.has('alloc') ? await allocation(cases) : new Map();
  for (const c of cases) c.close?.();

  const seconds = (Date.now() - started) / 1000;
  const ticksAfter = machineTicks();
  const ownCpuSeconds = (cpuNow() - cpuBefore) / 1e9;
  let othersCores: number | undefined;
  let stealShare: number | undefined;
  if (ticksBefore !== undefined && ticksAfter !== undefined) {
    const hz = 100; // USER_HZ: /proc/stat counts in 1/100 s on Linux
    const busySeconds = (ticksAfter.busy - ticksBefore.busy) / hz;
    othersCores = Math.max(0, (busySeconds - ownCpuSeconds) / seconds);
    stealShare = (ticksAfter.steal - ticksBefore.steal) / Math.max(1, ticksAfter.total - ticksBefore.total);
  }

  const rows = cases.map((c) => {
    const base = c.kind === 'raw' || c.sync ? undefined : (c.baseline ?? 'raw');
    const baseId = base;
    return {
      id: c.id,
      label: c.label,
      kind: c.kind,
      sync: c.sync === true,
      baseline: baseId,
      peer: c.peer,
      interleavedNs: median(interleavedNs.get(c.id) ?? []),
      interleavedOverBaseNs: paired(interleavedNs, c.id, baseId, (a, b) => a - b),
      interleavedOverBaseIqr: baseId === undefined ? [NaN, NaN] : pairedQuantiles(interleavedNs, c.id, baseId),
      interleavedRatioToPeer: paired(interleavedNs, c.id, c.peer, (a, b) => a / b),
      isolatedNs: median(isolatedNs.get(c.id) ?? []),
      isolatedOverBaseNs: paired(isolatedNs, c.id, baseId, (a, b) => a - b),
      isolatedRatioToPeer: paired(isolatedNs, c.id, c.peer, (a, b) => a / b),
      bytes: median(bytes.get(c.id) ?? []),
      overBaseBytes: baseId === undefined ? NaN : median(bytes.get(c.id) ?? []) - median(bytes.get(baseId) ?? []),
      interleavedRounds: interleavedNs.get(c.id) ?? [],
      isolatedRounds: isolatedNs.get(c.id) ?? [],
      bytesRounds: bytes.get(c.id) ?? [],
    };
  });
  const inflightRows = inflightCases.map((c) => ({
    id: c.id,
    label: c.label,
    kind: c.kind,
    peer: c.peer,
    ns: median(inflightNs.get(c.id) ?? []),
    overRawNs: c.kind === 'raw' ? NaN : paired(inflightNs, c.id, 'raw', (a, b) => a - b),
    overRawIqr: c.kind === 'raw' ? [NaN, NaN] : pairedQuantiles(inflightNs, c.id, 'raw'),
    ratioToPeer: paired(inflightNs, c.id, c.peer, (a, b) => a / b),
    rounds: inflightNs.get(c.id) ?? [],
  }));
  const labelOf = new Map(cases.map((c) => [c.id, c.label]));
  const inflightLabelOf = new Map(inflightCases.map((c) => [c.id, c.label]));

  const out: string[] = [];
  out.push(
    '| case | in one process: ns/call | over its baseline, ns (IQR) | vs nearest peer | isolated: ns/call | isolated over baseline | bytes/call | over baseline, bytes |',
  );
  out.push('|---|---:|---:|---|---:|---:|---:|---:|');
  for (const r of rows) {
    const peer =
      r.peer === undefined ? '' : `${fmtRatio(r.interleavedRatioToPeer)} of ${labelOf.get(r.peer) ?? r.peer}`;
    const over =
      r.baseline === undefined
        ? ''
        : `${fmtNs(r.interleavedOverBaseNs)} (${fmtNs(r.interleavedOverBaseIqr[0]!)} to ${fmtNs(r.interleavedOverBaseIqr[1]!)})`;
    const base = r.baseline === undefined || r.baseline === 'raw' ? '' : ` [over ${r.baseline}]`;
    out.push(
      `| ${r.label}${base} | ${fmtNs(r.interleavedNs)} | ${over} | ${peer} | ${fmtNs(r.isolatedNs)} | ` +
        `${r.baseline === undefined ? '' : fmtNs(r.isolatedOverBaseNs)} | ${fmtBytes(r.bytes)} | ${r.baseline === undefined ? '' : fmtBytes(r.overBaseBytes)} |`,
    );
  }
  if (args.modes.has('inflight')) {
    out.push('');
    out.push('100 calls in flight:');
    out.push('');
    out.push('| case | ns/call | over raw, ns (IQR) | vs nearest peer |');
    out.push('|---|---:|---:|---|');
    for (const r of inflightRows) {
      const peer = r.peer === undefined ? '' : `${fmtRatio(r.ratioToPeer)} of ${inflightLabelOf.get(r.peer) ?? r.peer}`;
      const over =
        r.kind === 'raw' ? '' : `${fmtNs(r.overRawNs)} (${fmtNs(r.overRawIqr[0]!)} to ${fmtNs(r.overRawIqr[1]!)})`;
      out.push(`| ${r.label} | ${fmtNs(r.ns)} | ${over} | ${peer} |`);
    }
  }

  // The issue's goals (issues 10, 16 and 18), checked on this run's in-one-process medians.
  const row = (id: string) => rows.find((r) => r.id === id);
  const targets: Array<[string, number | undefined, string, (v: number) => boolean, number]> = [];
  const add = (name: string, value: number | undefined, bound: string, ok: (v: number) => boolean, digits = 0) => {
    if (value !== undefined && Number.isFinite(value)) targets.push([name, value, bound, ok, digits]);
  };
  add('full pipeline, ns over raw', row('resilix-full')?.interleavedOverBaseNs, '<= 1000', (v) => v <= 1000);
  add(
    'full pipeline / cockatiel full wrap',
    row('resilix-full')?.interleavedRatioToPeer,
    '<= 0.10',
    (v) => v <= 0.1,
    3,
  );
  add(
    'breaker + limiter + bulkhead, ns over raw',
    row('resilix-breaker-limiter-bulkhead')?.interleavedOverBaseNs,
    '<= 300',
    (v) => v <= 300,
  );
  add(
    'breaker alone / cockatiel breaker alone',
    row('resilix-breaker')?.interleavedRatioToPeer,
    '<= 1',
    (v) => v <= 1,
    2,
  );
  add(
    'bulkhead alone / cockatiel bulkhead alone',
    row('resilix-bulkhead')?.interleavedRatioToPeer,
    '<= 1',
    (v) => v <= 1,
    2,
  );
  add(
    'resilientFetch, no timeout policy, ns over raw fetch',
    row('resilix-fetch')?.interleavedOverBaseNs,
    '<= 1000',
    (v) => v <= 1000,
  );
  add(
    'resilientFetch, no timeout policy, bytes over raw fetch',
    row('resilix-fetch')?.overBaseBytes,
    '<= 1024',
    (v) => v <= 1024,
  );
  add(
    'low-level tryAcquire + settle, ns/call',
    row('resilix-low-level-sync')?.interleavedNs,
    '<= 100',
    (v) => v <= 100,
  );
  add('low-level tryAcquire + settle, bytes/call', row('resilix-low-level-sync')?.bytes, '0', (v) => v < 0.5, 1);
  add(
    'retry policy, no retry: ns over the same pipeline without it',
    paired(interleavedNs, 'resilix-retry-full', 'resilix-full', (a, b) => a - b),
    '<= 50',
    (v) => v <= 50,
  );
  const listenedCost = paired(interleavedNs, 'resilix-full-listened', 'resilix-full', (a, b) => a - b);
  add('per-call events, every one listened: ns over none listened', listenedCost, '(reported)', () => true);
  if (flags['without-events']) {
    for (const [id, name] of [
      ['resilix-full', 'full pipeline'],
      ['resilix-breaker-limiter-bulkhead', 'breaker + limiter + bulkhead'],
    ] as const) {
      add(
        `per-call events, nobody listening, ${name}: ns over no hook at all`,
        paired(interleavedNs, id, `${id}@alt`, (a, b) => a - b),
        '(reported)',
        () => true,
      );
    }
  }
  const targetLines = ['| goal | this run | bound | holds |', '|---|---:|---:|---|'];
  for (const [name, value, bound, ok, digits] of targets) {
    targetLines.push(`| ${name} | ${value!.toFixed(digits)} | ${bound} | ${ok(value!) ? 'yes' : 'NO'} |`);
  }

  const raw = interleavedNs.get('raw') ?? [];
  const rawSpread = raw.length === 0 ? NaN : (quantile(raw, 0.75) - quantile(raw, 0.25)) / median(raw);
  const cpus = os.cpus();
  const env = {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage1mBeforeAfter: [loadBefore, os.loadavg()[0]!].map((l) => Number(l.toFixed(2))),
    otherProcessesCores: othersCores === undefined ? undefined : Number(othersCores.toFixed(2)),
    stealShare: stealShare === undefined ? undefined : Number(stealShare.toFixed(4)),
    rawInterleavedIqrShare: Number.isFinite(rawSpread) ? Number(rawSpread.toFixed(3)) : undefined,
    seconds: Math.round(seconds),
    args: { ...args, modes: [...args.modes], filter: args.filter?.source },
    resilix: resilixFile,
    command: `npx tsx bench/overhead.ts ${process.argv.slice(2).join(' ')}`.trim(),
  };
  console.log(out.join('\n'));
  console.log();
  console.log(targetLines.join('\n'));
  console.log();
  console.log(`Node ${env.node} (V8 ${env.v8}), ${env.platform}, ${env.cpu}, ${env.memoryGiB} GiB.`);
  console.log(
    `${args.clock === 'cpu' ? 'Process CPU time' : 'Wall-clock time'}; ${args.reps} interleaved repetitions of ~${args.repMs} ms per case, ` +
      `${args.inflightReps} in-flight repetitions, ${args.rounds} isolated rounds of >= ${args.timeMs} ms per case, ` +
      `${args.allocRounds} allocation rounds of ${args.allocCalls} calls; ${env.seconds} s.`,
  );
  console.log(
    `Noise: load average (1 min) ${env.loadAverage1mBeforeAfter.join(' -> ')}; other processes used ` +
      `${env.otherProcessesCores ?? 'n/a'} of ${cpus.length} cores on average (steal ${env.stealShare === undefined ? 'n/a' : `${(env.stealShare * 100).toFixed(1)} %`}); ` +
      `the raw case's interquartile range across repetitions was ${env.rawInterleavedIqrShare === undefined ? 'n/a' : `${(env.rawInterleavedIqrShare * 100).toFixed(1)} %`} of its median.`,
  );
  console.log(`Command: ${env.command}`);
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify({ env, rows, inflightRows }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
