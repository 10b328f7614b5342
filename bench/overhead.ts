/**
 * Overhead per call and bytes per call: resilix against a raw `await fn()` and against the
 * libraries a user would pick instead, in one run (issue 10; DESIGN.md §7).
 *
 *   npx tsx bench/overhead.ts [--rounds 7] [--time-ms 150] [--alloc-rounds 3] [--alloc-calls 100000]
 *                             [--filter regexp] [--json out.json] [--entry src|dist] [--compare dir]
 *                             [--clock cpu|wall]
 *
 * `--compare <dir>` also builds another copy of src/ (a proposed change) and runs its resilix cases,
 * suffixed `@alt`, interleaved with the current ones: the fairest A/B on a noisy machine.
 *
 * Time: mitata 1.0 measures each case (median of batches of sequential awaited calls); the cases
 * run interleaved, round after round, each round starting at a different case, so drift on a
 * shared machine hits all cases alike. We report the median over rounds, and compute every ratio
 * and difference within a round before taking its median.
 * The default clock is the process's CPU time (`--clock cpu`): on a shared machine a descheduled
 * process's wall clock keeps running, its CPU time does not. `--clock wall` measures wall time.
 * Bytes: `bench/allocation.ts` (V8 GCProfiler accounting) over `--alloc-calls` calls per case,
 * interleaved the same way, median over rounds.
 */
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import { measure } from 'mitata';
import { AllocationMeter, bytesPerIteration } from './allocation';
import { loadResilix } from './resilix';
import { buildCases, type BenchCase } from './cases';
import { collectGarbage, median, rotate } from './harness';

interface Args {
  rounds: number;
  timeMs: number;
  allocRounds: number;
  allocCalls: number;
  filter: RegExp | undefined;
  json: string | undefined;
  entry: 'src' | 'dist';
  compare: string | undefined;
  clock: 'cpu' | 'wall';
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = {
    rounds: 7,
    timeMs: 150,
    allocRounds: 3,
    allocCalls: 100_000,
    filter: undefined,
    json: undefined,
    entry: process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src',
    compare: undefined,
    clock: 'cpu',
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    const need = (): string => {
      if (value === undefined) throw new Error(`${flag} needs a value`);
      i++;
      return value;
    };
    if (flag === '--rounds') args.rounds = Number(need());
    else if (flag === '--time-ms') args.timeMs = Number(need());
    else if (flag === '--alloc-rounds') args.allocRounds = Number(need());
    else if (flag === '--alloc-calls') args.allocCalls = Number(need());
    else if (flag === '--filter') args.filter = new RegExp(need());
    else if (flag === '--json') args.json = need();
    else if (flag === '--compare') args.compare = need();
    else if (flag === '--clock') {
      const clock = need();
      if (clock !== 'cpu' && clock !== 'wall') throw new Error('--clock is cpu or wall');
      args.clock = clock;
    } else if (flag === '--entry') {
      const entry = need();
      if (entry !== 'src' && entry !== 'dist') throw new Error('--entry is src or dist');
      args.entry = entry;
    } else throw new Error(`unknown argument ${flag}`);
  }
  return args;
}

interface CaseResult {
  readonly id: string;
  readonly sync: boolean;
  readonly label: string;
  readonly kind: BenchCase['kind'];
  readonly peer: string | undefined;
  /** mitata's median ns per call, one per round. */
  readonly nsRounds: number[];
  readonly bytesRounds: number[];
}

function fmtNs(ns: number): string {
  if (!Number.isFinite(ns)) return 'n/a';
  return ns >= 10_000 ? `${(ns / 1000).toFixed(1)} us` : `${Math.round(ns)}`;
}

function fmtBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  return Math.abs(bytes) < 0.5 ? '0' : bytes.toFixed(0);
}

function fmtRatio(r: number): string {
  return Number.isFinite(r) ? `${r.toFixed(2)}x` : '';
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const { module: resilix, file: resilixFile } = await loadResilix(args.entry);
  const all = buildCases(resilix);
  if (args.compare !== undefined) {
    const { module: alternative } = await loadResilix('src', args.compare);
    for (const c of buildCases(alternative)) {
      if (c.kind === 'resilix') all.push({ ...c, id: `${c.id}@alt`, label: `${c.label} @alt` });
    }
  }
  const cases = all.filter((c) => c.kind === 'raw' || args.filter === undefined || args.filter.test(c.id));
  if (args.filter !== undefined) {
    // Keep the peers the kept cases compare with.
    for (const c of all)
      if (c.kind === 'peer' && !cases.includes(c) && cases.some((k) => k.peer === c.id)) cases.push(c);
  }
  const byId = new Map(cases.map((c) => [c.id, c]));
  const results = new Map<string, CaseResult>(
    cases.map((c) => [
      c.id,
      { id: c.id, sync: c.sync === true, label: c.label, kind: c.kind, peer: c.peer, nsRounds: [], bytesRounds: [] },
    ]),
  );
  const loadBefore = os.loadavg();
  const started = Date.now();

  // Warm-up, and a check that every case really completes calls (a refused call would be fast).
  for (const c of cases) {
    await c.loop(new Array(20_000));
  }

  const log = (line: string): void => {
    process.stderr.write(`${line}\n`);
  };

  // CPU time of this process, in ns: time spent descheduled on a shared machine does not count,
  // while the process's own GC and JIT threads do (they are part of the cost of a call).
  const cpuNow = (): number => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) * 1e3;
  };
  const now = args.clock === 'cpu' ? cpuNow : (): number => performance.now() * 1e6;
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
      results.get(c.id)!.nsRounds.push(stats.p50);
    }
    log(`time round ${round + 1}/${args.rounds} done`);
  }

  const meter = new AllocationMeter();
  for (let round = 0; round < args.allocRounds; round++) {
    for (const c of rotate(cases, round)) {
      collectGarbage();
      const bytes = await bytesPerIteration(meter, c.loop, args.allocCalls, args.allocCalls / 5);
      results.get(c.id)!.bytesRounds.push(bytes);
    }
    log(`allocation round ${round + 1}/${args.allocRounds} done`);
  }
  for (const c of cases) c.close?.();

  const raw = results.get('raw')!;
  const rows = [...results.values()].map((r) => {
    const perRound = (other: CaseResult | undefined, f: (a: number, b: number) => number): number =>
      other === undefined ? NaN : median(r.nsRounds.map((ns, i) => f(ns, other.nsRounds[i]!)));
    const peer = r.peer === undefined ? undefined : results.get(r.peer);
    const ns = median(r.nsRounds);
    const bytes = median(r.bytesRounds);
    return {
      id: r.id,
      sync: r.sync,
      label: r.label,
      kind: r.kind,
      peer: r.peer,
      ns,
      nsMin: Math.min(...r.nsRounds),
      nsMax: Math.max(...r.nsRounds),
      overRawNs: perRound(raw, (a, b) => a - b),
      ratioToRaw: perRound(raw, (a, b) => a / b),
      ratioToPeer: perRound(peer, (a, b) => a / b),
      bytes,
      overRawBytes: bytes - median(raw.bytesRounds),
      nsRounds: r.nsRounds,
      bytesRounds: r.bytesRounds,
    };
  });

  const lines: string[] = [];
  lines.push(
    '| case | median ns/call | spread (min-max of rounds) | over raw, ns | x raw | vs nearest peer | bytes/call | over raw, bytes |',
  );
  lines.push('|---|---:|---:|---:|---:|---|---:|---:|');
  for (const row of rows) {
    const peerCell =
      row.peer === undefined ? '' : `${fmtRatio(row.ratioToPeer)} of ${byId.get(row.peer)?.label ?? row.peer}`;
    // A synchronous case has no await to subtract: its own figures are the overhead.
    const isRaw = row.kind === 'raw' || row.sync;
    lines.push(
      `| ${row.label} | ${fmtNs(row.ns)} | ${fmtNs(row.nsMin)}-${fmtNs(row.nsMax)} | ${isRaw ? '' : fmtNs(row.overRawNs)} | ` +
        `${isRaw ? '' : fmtRatio(row.ratioToRaw)} | ${peerCell} | ${fmtBytes(row.bytes)} | ${isRaw ? '' : fmtBytes(row.overRawBytes)} |`,
    );
  }

  // The targets (issue 10), checked on this run's medians.
  const row = (id: string) => rows.find((r) => r.id === id);
  const targets: Array<[string, number | undefined, string, (v: number) => boolean]> = [];
  const sync = row('resilix-low-level-sync');
  const lowLevel = row('resilix-low-level');
  const blb = row('resilix-breaker-limiter-bulkhead');
  const fullRow = row('resilix-full');
  if (sync) targets.push(['low-level tryAcquire + settle, ns/call', sync.ns, '<= 100', (v) => v <= 100]);
  if (sync) targets.push(['low-level tryAcquire + settle, bytes/call', sync.bytes, '0', (v) => v < 0.5]);
  if (lowLevel) targets.push(['low-level with await, bytes/call over raw', lowLevel.overRawBytes, '0', (v) => v < 0.5]);
  if (blb) targets.push(['breaker + limiter + bulkhead, ns over raw', blb.overRawNs, '<= 300', (v) => v <= 300]);
  if (blb) targets.push(['breaker + limiter + bulkhead, bytes over raw', blb.overRawBytes, '<= 500', (v) => v <= 500]);
  if (fullRow)
    targets.push(['full pipeline with timeout, ns over raw', fullRow.overRawNs, '<= 1000', (v) => v <= 1000]);
  if (fullRow && fullRow.peer === 'cockatiel-full') {
    targets.push(['full pipeline / cockatiel full wrap', fullRow.ratioToPeer, '<= 0.10', (v) => v <= 0.1]);
  }
  const targetLines = ['| target | this run | bound | holds |', '|---|---:|---:|---|'];
  for (const [name, value, bound, ok] of targets) {
    const shown = value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(Math.abs(value) < 1 ? 3 : 0);
    targetLines.push(`| ${name} | ${shown} | ${bound} | ${value !== undefined && ok(value) ? 'yes' : 'NO'} |`);
  }

  const cpus = os.cpus();
  const env = {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: `${cpus[0]?.model ?? 'unknown'} x ${cpus.length}`,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage1mBeforeAfter: [loadBefore[0], os.loadavg()[0]].map((l) => Number(l!.toFixed(2))),
    seconds: Math.round((Date.now() - started) / 1000),
    args: { ...args, filter: args.filter?.source },
    resilix: resilixFile,
  };
  console.log(lines.join('\n'));
  console.log();
  console.log(targetLines.join('\n'));
  console.log();
  console.log(`Node ${env.node} (V8 ${env.v8}), ${env.platform}, ${env.cpu}, ${env.memoryGiB} GiB;`);
  console.log(
    `${args.clock === 'cpu' ? 'process CPU time' : 'wall-clock time'}; ` +
      `${args.rounds} interleaved time rounds of >= ${args.timeMs} ms per case, ${args.allocRounds} allocation rounds of ` +
      `${args.allocCalls} calls; load average (1 min) ${env.loadAverage1mBeforeAfter.join(' -> ')}; ${env.seconds} s.`,
  );
  if (args.json !== undefined) writeFileSync(args.json, `${JSON.stringify({ env, rows }, null, 2)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
