/**
 * Bytes allocated by the limiter's low-level path, `tryAcquire()` + `permit.settle()`, over
 * 10^5 calls after warm-up, measured on resilix as published (the tsup build of src/; see
 * ./resilix.ts). Prints one JSON object; test/perf/low-level-allocation.test.ts asserts on it.
 *
 *   npx tsx bench/allocation-guard.ts
 *
 * Four clocks, because on Node 20 every real clock reading is itself a fresh 16-byte HeapNumber
 * (`performance.now()` and `Date.now()` return boxed doubles), which is the platform's
 * allocation, not ours:
 * - `frozen`: an integer clock that does not move. Every call takes the full per-call path
 *   (admission, permit pool, drain counter, window record, P² update) and no window closes.
 * - `stepping`: an integer clock that moves 1 ms per reading, so windows close and the control
 *   loop runs about every 300 calls: its per-window cost shows up amortised.
 * - `fractional`: a clock whose readings are fractional (it creeps 2^-20 ms per reading, so no
 *   window closes). A whole-number reading is a small integer, which V8 never boxes, so the two
 *   clocks above cannot see a reading boxed on the way; this one can, and so shows what the pair
 *   allocates with a real clock on a runtime whose clock read itself allocates nothing (Node 24's
 *   `performance.now()` is a fast API call: bench/clock-probe.ts).
 * - `system`: the default clock (`performance.now()`).
 *
 * Why a build and a separate process: the same source run as separate modules (tsx, or vitest's
 * module runner) allocates about 15 bytes more per call, because V8 does not inline calls across
 * module boundaries and boxes the doubles it passes to them. The published bundle is one module.
 */
import { AllocationMeter } from './allocation';
import { collectGarbage } from './harness';
import { loadResilix } from './resilix';
import type { Clock, Observation } from '../src/index';

export const CALLS = 100_000;
const WARMUP_CALLS = 200_000;
const ROUNDS = 3;

export interface GuardReport {
  node: string;
  calls: number;
  /** Bytes over `calls` calls, per round, for each clock. */
  frozen: number[];
  stepping: number[];
  fractional: number[];
  /** The fractional clock and a fractional latency in the observation, as real calls have. */
  fractionalLatency: number[];
  system: number[];
  /** Control-loop windows closed during the stepping measurement (proves the loop ran). */
  steppingWindows: number;
}

async function main(): Promise<void> {
  const { module: resilix } = await loadResilix(process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src');
  const ok: Observation = { verdict: 'ok', latencyMs: 1 };
  const okFractional: Observation = { verdict: 'ok', latencyMs: 1.25 };
  const meter = new AllocationMeter();

  type L = ReturnType<typeof resilix.limiter>;
  // One loop function for all three limiters: the shape under test is the library's, not this loop's.
  const pairs = (l: L, calls: number, observation: Observation): void => {
    for (let i = 0; i < calls; i++) l.tryAcquire()!.settle(observation);
  };
  const measure = (l: L, observation: Observation = ok): number[] => {
    pairs(l, WARMUP_CALLS, observation);
    const out: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      collectGarbage();
      meter.start();
      pairs(l, CALLS, observation);
      out.push(meter.stop());
    }
    return out;
  };

  const frozenClock: Clock = { now: () => 1_000 };
  // A number field is updated in place: the clock itself allocates nothing (bench/clock-probe.ts).
  class CreepingClock implements Clock {
    private t = 1_000.5;
    now(): number {
      this.t += 1 / 1_048_576;
      return this.t;
    }
  }
  let ms = 0;
  const steppingClock: Clock = { now: () => (ms += 1) };
  const frozen = measure(resilix.limiter({ clock: frozenClock }));
  const steppingLimiter = resilix.limiter({ clock: steppingClock });
  const windowsBefore = steppingLimiter.snapshot().windows;
  const stepping = measure(steppingLimiter);
  const steppingWindows = steppingLimiter.snapshot().windows - windowsBefore;
  const fractional = measure(resilix.limiter({ clock: new CreepingClock() }));
  const fractionalLatency = measure(resilix.limiter({ clock: new CreepingClock() }), okFractional);
  const system = measure(resilix.limiter());
  const report: GuardReport = {
    node: process.version,
    calls: CALLS,
    frozen,
    stepping,
    fractional,
    fractionalLatency,
    system,
    steppingWindows,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
