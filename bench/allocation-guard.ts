/**
 * Bytes allocated by the limiter's low-level path, `tryAcquire()` + `permit.settle({ verdict,
 * latencyMs })`, measured on resilix as published (the tsup build of src/; see ./resilix.ts): per
 * case, 10^5 calls per round, five rounds after 3·10^5 warm-up calls, in each of two fresh
 * processes (four for the fractional cases). Prints one JSON line;
 * test/perf/low-level-allocation.test.ts asserts on the fewest bytes of any round (an allocation by
 * the runtime can only add bytes, never hide ours).
 *
 *   npx tsx bench/allocation-guard.ts                       # every case, in child processes
 *   npx tsx bench/allocation-guard.ts --case fractional     # one case, in this process
 *
 * One process per case, because an application's limiter sees one clock and one shape of
 * Observation: five clocks through one loop in one process make the settle path polymorphic, and
 * V8 then inlines less of it and boxes more (measured: 16-32 bytes per call more than the same code
 * with one clock). Several processes per case, because which of the settle path and its caller V8
 * optimizes first is a race between its compiler threads, and in about one process in six on this
 * machine (Node 20; 35-40% on Node 24, adr/0134) the loser's code boxes a number per call for good
 * (docs/benchmarks.md, the guard). The calls come in batches of 1 000 from a function called often,
 * as requests do: one long loop leaves it in on-stack-replaced code, which Node 24 keeps in Maglev
 * (which boxes more) for rounds.
 *
 * The cases. A whole-number reading or latency is a small integer, which V8 never boxes, so the
 * integer cases cannot see a number boxed on the way; the fractional ones can, and are what real
 * calls look like.
 * - `frozen`: an integer clock that does not move. Every call takes the full per-call path
 *   (admission, permit pool, drain counter, window record, P² update) and no window closes.
 * - `fractional`: a fractional clock that creeps 2^-20 ms per reading (no window closes) and a
 *   fractional latency: the same path with doubles. This is the 0-byte goal of issue 16.
 * - `stepping`: an integer clock that moves 1 ms per reading, so the control loop closes a window
 *   about every 2 000 calls; the closes' own allocations show up amortised.
 *   `fractional-stepping`: the same with fractional numbers (+1 + 2^-10 ms per reading).
 * - `refusing`: `fractional-stepping` with one call in REFUSED_EVERY answered `overload` (a 429):
 *   the refusal's branches too (its stale test, the refusal tail's count and what the tail learns at
 *   each close). A share the tail excuses (under tailCap, 5%), so windows close as in the case above.
 * - `system`: the default clock (`performance.now()`), fractional latency: what an application
 *   gets. On Node 20 the platform's reading is itself a fresh 16-byte number (a C++ binding's
 *   return value: bench/clock-probe.ts); on Node 24 it is a fast API call that allocates nothing.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AllocationMeter } from './allocation';
import { collectGarbage } from './harness';
import { buildResilix, loadResilix } from './resilix';
import type { Clock, Observation } from '../src/index';

export const CALLS = 100_000;
const WARMUP_CALLS = 300_000;
const ROUNDS = 5;
/**
 * Fresh processes per case; the report keeps every round of every one (see the header). Four for the fractional
 * cases: on Node 24 a process boxes every settle for good in 35-40% of them (adr/0134), so two failed the guard in
 * about one run in seven; four in about one in forty.
 */
function processesFor(name: GuardCase): number {
  return name === 'fractional' || name === 'fractional-stepping' || name === 'refusing' ? 4 : 2;
}
const BATCH = 1_000;
/** `refusing`: one settle in this many is a refusal, 3%: a share the refusal tail learns and excuses (under tailCap, 5%). */
const REFUSED_EVERY = 32;

export const GUARD_CASES = ['frozen', 'fractional', 'stepping', 'fractional-stepping', 'refusing', 'system'] as const;
export type GuardCase = (typeof GUARD_CASES)[number];

export interface CaseReport {
  /** Bytes over `calls` calls, per round. */
  readonly rounds: number[];
  /** Control-loop windows closed during the measured rounds (of the first process). */
  readonly windows: number;
}

export interface GuardReport {
  readonly node: string;
  readonly calls: number;
  /** `refusing`: one settle in this many is a refusal. */
  readonly refusedEvery: number;
  readonly cases: Record<GuardCase, CaseReport>;
}

/**
 * A clock that adds `stepMs` per reading, allocating nothing: a field that holds a double from its
 * first value is updated in place. (Declared without a value, the field would start `undefined`,
 * and V8 would box every reading stored into it: the clock's 16 bytes, not the limiter's.)
 */
class SteppingClock implements Clock {
  private t = Number.NaN;
  constructor(
    start: number,
    private readonly stepMs: number,
  ) {
    this.t = start;
  }
  now(): number {
    this.t += this.stepMs;
    return this.t;
  }
}

function clockOf(name: GuardCase): Clock | undefined {
  switch (name) {
    case 'frozen':
      return { now: () => 1_000 };
    case 'fractional':
      return new SteppingClock(1_000.5, 1 / 1_048_576);
    case 'stepping':
      return new SteppingClock(0, 1);
    case 'fractional-stepping':
    case 'refusing':
      return new SteppingClock(0.5, 1 + 1 / 1_024);
    case 'system':
      return undefined;
  }
}

async function measureCase(name: GuardCase): Promise<CaseReport> {
  const { module: resilix } = await loadResilix(process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src');
  const fractional = name.startsWith('fractional') || name === 'refusing' || name === 'system';
  // Built once and reused, as an allocation-minded caller would: a fresh literal per call is the
  // caller's own 40-56 bytes.
  const observation: Observation = fractional ? { verdict: 'ok', latencyMs: 1.25 } : { verdict: 'ok', latencyMs: 1 };
  const refusal: Observation = { verdict: 'overload', latencyMs: 1.25 };
  const clock = clockOf(name);
  const limiter = clock === undefined ? resilix.limiter() : resilix.limiter({ clock });
  let count = 0;
  const pair =
    name === 'refusing'
      ? (): void => {
          count++;
          let settled = observation;
          if (count === REFUSED_EVERY) {
            count = 0;
            settled = refusal;
          }
          limiter.tryAcquire()!.settle(settled);
        }
      : (): void => limiter.tryAcquire()!.settle(observation);
  // In batches, as requests come: a function called often is compiled as a function. One long loop
  // leaves it in on-stack-replaced code, which Node 24 keeps in Maglev (which boxes more) for
  // several rounds.
  const pairs = (calls: number): void => {
    for (let batch = 0; batch < calls; batch += BATCH) for (let i = 0; i < BATCH; i++) pair();
  };
  const meter = new AllocationMeter();
  pairs(WARMUP_CALLS);
  const windowsBefore = limiter.snapshot().windows;
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    collectGarbage();
    meter.start();
    pairs(CALLS);
    rounds.push(meter.stop());
  }
  return { rounds, windows: limiter.snapshot().windows - windowsBefore };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { case: { type: 'string' } } });
  if (values.case !== undefined) {
    const name = values.case as GuardCase;
    if (!GUARD_CASES.includes(name)) throw new Error(`no case ${name}; cases: ${GUARD_CASES.join(', ')}`);
    process.stdout.write(`${JSON.stringify(await measureCase(name))}\n`);
    return;
  }
  const env = { ...process.env };
  if (env.RESILIX_BENCH_ENTRY !== 'dist' && env.RESILIX_BENCH_BUILT === undefined) {
    env.RESILIX_BENCH_BUILT = await buildResilix(env.RESILIX_BENCH_SRC);
  }
  const cases = {} as Record<GuardCase, CaseReport>;
  for (const name of GUARD_CASES) {
    const runs: CaseReport[] = [];
    for (let run = 0; run < processesFor(name); run++) {
      const out = execFileSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--case', name], {
        env,
        encoding: 'utf8',
      });
      runs.push(JSON.parse(out.trim().split('\n').pop()!) as CaseReport);
    }
    const first = runs[0]!;
    cases[name] = { ...first, rounds: runs.flatMap((r) => r.rounds) };
  }
  const report: GuardReport = { node: process.version, calls: CALLS, refusedEvery: REFUSED_EVERY, cases };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
