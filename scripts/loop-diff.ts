/**
 * `npx tsx scripts/loop-diff.ts <other checkout> [seeds 20] [calls 20000]`: a differential check for
 * refactors of the control loop that claim "the same decisions". It drives this checkout's
 * LimitControlLoop and the other checkout's side by side through seeded closed-loop runs (capacity,
 * latency, demand, hard caps, failures, refusals, timeouts, marks, idle gaps and manual limits
 * change at random) and stops at the first settle where a return value, the limit, the snapshot
 * or a change event differs (numbers compared with Object.is, NaN included). Every algorithm, the
 * tuning switches and a few option sets are covered. Exit 0 prints "identical: N runs".
 *
 * Used for 25f916d against 1dec2c4 (`git worktree add /tmp/old 1dec2c4`): 460 runs, 9.2 M settles. It
 * catches a planted off-by-one in the settling's back test (ROUND_SAMPLES + 1) on its first run.
 */
import { resolve } from 'node:path';
import { resolveControlConfig } from '../src/limiter/control-config';
import { LimitControlLoop } from '../src/limiter/control-loop';
import { type ControlTuning, DEFAULT_TUNING } from '../src/limiter/control-tuning';
import type { Observation } from '../src/core/observation';
import { mulberry32 } from '../test/helpers/mulberry32';

type Options = Parameters<typeof resolveControlConfig>[0];
type Loop = LimitControlLoop;

interface Modules {
  readonly LimitControlLoop: typeof LimitControlLoop;
  readonly resolveControlConfig: typeof resolveControlConfig;
  readonly DEFAULT_TUNING: ControlTuning;
}

async function load(root: string): Promise<Modules> {
  const dir = resolve(root, 'src/limiter');
  const loop = (await import(resolve(dir, 'control-loop.ts'))) as Pick<Modules, 'LimitControlLoop'>;
  const config = (await import(resolve(dir, 'control-config.ts'))) as Pick<Modules, 'resolveControlConfig'>;
  const tuning = (await import(resolve(dir, 'control-tuning.ts'))) as Pick<Modules, 'DEFAULT_TUNING'>;
  return { ...loop, ...config, ...tuning };
}

const snapshotOf = (loop: Loop): string =>
  JSON.stringify(loop.snapshot(), (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));

interface Call {
  readonly start: number;
  readonly end: number;
  readonly latency: number;
  readonly verdict: Observation['verdict'];
  readonly markAt: number;
  marked: boolean;
  wasMarked: boolean;
}

function run(other: Modules, seed: number, options: Options, changes: Partial<ControlTuning>, calls: number): void {
  const a = new LimitControlLoop(resolveControlConfig(options), { ...DEFAULT_TUNING, ...changes });
  const b = new other.LimitControlLoop(other.resolveControlConfig(options), { ...other.DEFAULT_TUNING, ...changes });
  const eventsA: string[] = [];
  const eventsB: string[] = [];
  a.changes.subscribe((change) => eventsA.push(JSON.stringify(change)));
  b.changes.subscribe((change) => eventsB.push(JSON.stringify(change)));
  const random = mulberry32(seed);
  let now = 0;
  const check = (where: string, ra: boolean, rb: boolean): void => {
    const same =
      ra === rb &&
      Object.is(a.limit, b.limit) &&
      snapshotOf(a) === snapshotOf(b) &&
      eventsA.length === eventsB.length &&
      eventsA.at(-1) === eventsB.at(-1);
    if (!same) {
      const what = `${JSON.stringify(options)} ${JSON.stringify(changes)}`;
      throw new Error(`seed ${seed} ${what}: diverged at ${where}, t = ${now}\n${snapshotOf(a)}\n${snapshotOf(b)}`);
    }
  };
  const running: Call[] = [];
  let capacity = 10 + Math.floor(random() * 40);
  let baseMs = 5 + random() * 200;
  let demand = 5 + Math.floor(random() * 100);
  let hardCap = random() < 0.3 ? capacity : Infinity;
  let failureRate = random() < 0.3 ? random() * 0.2 : 0;
  const markRate = random() < 0.3 ? 0.5 : 0;
  let refusalRate = random() < 0.2 ? random() * 0.05 : 0;
  const deadlineMs = random() < 0.5 ? baseMs * (2 + random() * 8) : Infinity;
  let nextPhase = 5_000 + random() * 30_000;
  for (let done = 0; done < calls; ) {
    if (now >= nextPhase) {
      const p = random();
      if (p < 0.2) capacity = Math.max(1, Math.floor(capacity * (0.3 + random())));
      else if (p < 0.4) baseMs = Math.min(2_000, Math.max(1, baseMs * (0.5 + random() * 2.5)));
      else if (p < 0.55) demand = 1 + Math.floor(random() * 120);
      else if (p < 0.65)
        now += 61_000 + random() * 60_000; // an idle gap
      else if (p < 0.75) hardCap = random() < 0.5 ? capacity : Infinity;
      else if (p < 0.85) failureRate = random() < 0.5 ? random() * 0.6 : 0;
      else refusalRate = random() < 0.5 ? random() * 0.1 : 0;
      nextPhase = now + 2_000 + random() * 40_000;
    }
    // Admit up to the limit (checked equal) and the demand.
    while (running.length < a.limit && running.length < demand) {
      const inflight = running.length + 1;
      const queued = Math.max(0, inflight - capacity);
      let latency = baseMs * (1 + queued / capacity) * Math.exp(0.4 * (random() + random() + random() - 1.5));
      if (random() < 0.05) latency = Math.round(latency); // a whole-ms clock
      let verdict: Observation['verdict'] = 'ok';
      if (inflight > hardCap || random() < refusalRate) {
        verdict = 'overload';
        latency = 1 + random() * 5;
      } else if (latency > deadlineMs) {
        verdict = 'timeout';
        latency = deadlineMs;
      } else if (random() < failureRate) verdict = 'failure';
      else if (random() < 0.1) verdict = 'answered';
      else if (random() < 0.01) verdict = 'rejected';
      const marked = verdict === 'ok' && random() < markRate;
      const hold = marked ? latency * (1 + 3 * random()) : latency;
      running.push({ start: now, end: now + hold, latency, verdict, markAt: now + latency, marked, wasMarked: false });
    }
    // The next event: the earliest mark or completion.
    let next = -1;
    let nextAt = Infinity;
    let isMark = false;
    for (let i = 0; i < running.length; i++) {
      const call = running[i]!;
      if (call.marked && call.markAt < nextAt) [next, nextAt, isMark] = [i, call.markAt, true];
      if (call.end < nextAt) [next, nextAt, isMark] = [i, call.end, false];
    }
    if (next < 0) throw new Error(`seed ${seed}: nothing runs at limit ${a.limit}, demand ${demand}`);
    now = nextAt;
    const call = running[next]!;
    if (isMark) {
      call.marked = false;
      call.wasMarked = true;
      check(
        'a mark',
        a.observeMark(call.latency, now, running.length),
        b.observeMark(call.latency, now, running.length),
      );
      continue;
    }
    const inflight = running.length;
    running.splice(next, 1);
    const durationMs = random() < 0.2 ? undefined : call.end - call.start;
    const observation = { verdict: call.verdict, latencyMs: call.latency, durationMs } as Observation;
    a.settledAt = now;
    b.settledAt = now;
    check(
      'a settle',
      a.observe(observation, inflight, call.wasMarked),
      b.observe(observation, inflight, call.wasMarked),
    );
    if (random() < 0.0005) {
      const to = 1 + Math.floor(random() * 80);
      check('setLimit', a.setLimit(to, now), b.setLimit(to, now));
    }
    done++;
  }
}

const CASES: ReadonlyArray<readonly [Options, Partial<ControlTuning>]> = [
  ...(['vegas', 'gradient2', 'aimd', 'fixed'] as const).map((algorithm) => [{ algorithm }, {}] as const),
  ...(
    [
      { drainOnExit: false },
      { startupGain: 0 },
      { cohortConfirm: false },
      { remeasureForLimit: false },
      { jumpRestart: false },
      { measureWholeCalls: false },
      { dither: false },
      { noLoadRiseTest: false },
      { matureReference: false },
      { confirmRounds: 0 },
      { startupIdleRounds: 0 },
      { alphaPower: 0.5 },
      { timeoutTail: false, refusalTail: false },
      { overloadHoldMs: 0 },
      { noQueueGrowthPerFloor: false },
    ] as const
  ).map((changes) => [{}, changes] as const),
  [
    {
      initialLimit: 10,
      minLimit: 2,
      maxLimit: 60,
      quantile: 0.5,
      minWindowMs: 500,
      maxWindowMs: 5_000,
      minSamples: 20,
    },
    {},
  ],
  [{ failure: 'overload' }, {}],
  [{ failure: 'ignore' }, {}],
  [{ algorithm: 'gradient2' }, { drainOnExit: false }],
];

async function main(): Promise<void> {
  const [root, seedsArg = '20', callsArg = '20000'] = process.argv.slice(2);
  if (root === undefined) throw new Error('usage: npx tsx scripts/loop-diff.ts <other checkout> [seeds] [calls]');
  const other = await load(root);
  const seeds = Number(seedsArg);
  const calls = Number(callsArg);
  let runs = 0;
  for (const [options, changes] of CASES) {
    for (let s = 1; s <= seeds; s++) run(other, s * 7919 + runs++, options, changes, calls);
  }
  console.log(`identical: ${runs} runs, ${runs * calls} settles`);
}

await main();
