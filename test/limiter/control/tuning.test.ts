import { describe, expect, it } from 'vitest';
import type { Permit } from '../../../src/core/ports';
import { limiterWithTuning } from '../../../src/internal';
import { ALPHA_POWER, ALPHA_SCALE, BETA_RATIO, resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { type ControlTuning, DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { type Limiter, limiter } from '../../../src/limiter/limiter';
import { FakeClock } from '../../helpers/fake-clock';
import { feedWindows } from './support/feed';
import { limitAt, runScripted } from './support/scripted';

/**
 * DEFAULT_TUNING holds every "ours" constant of the control loop (control-tuning.ts); the ablation
 * study (sim/ablation.ts) runs limiters built by `limiterWithTuning` with one field changed.
 */

function loopWith(changes: Partial<ControlTuning>, initialLimit = 1): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig({ initialLimit }), { ...DEFAULT_TUNING, ...changes });
}

/** 16 servers at 100 ms: processor sharing above 16 in flight. */
function knee(controller: LimitControlLoop, durationMs: number) {
  return runScripted({
    controller,
    durationMs,
    clients: 400,
    call: ({ inflight }) => ({ latencyMs: 100 * Math.max(1, inflight / 16) }),
  });
}

/**
 * 400 callers through a real limiter's tryAcquire and settle, on a fake clock: 16 servers at
 * 100 ms (processor sharing above 16 in flight). Returns the limit after `durationMs`.
 */
function drive(l: Limiter, clock: FakeClock, durationMs: number): number[] {
  const pending: Array<{ at: number; permit: Permit }> = [];
  const limits: number[] = [];
  const admit = (): void => {
    for (;;) {
      const permit = l.tryAcquire();
      if (permit === undefined) return;
      pending.push({ at: clock.now() + 100 * Math.max(1, permit.inflight / 16), permit });
    }
  };
  admit();
  let nextSample = 0;
  while (pending.length > 0) {
    pending.sort((a, b) => a.at - b.at);
    const next = pending.shift()!;
    if (next.at > durationMs) break;
    while (nextSample <= next.at) {
      limits.push(l.limit);
      nextSample += 100;
    }
    clock.advance(next.at - clock.now());
    next.permit.settle({ verdict: 'ok', latencyMs: 100 * Math.max(1, next.permit.inflight / 16) });
    admit();
  }
  return limits;
}

describe('the tuning', () => {
  it('is frozen, and its band is the shipped one', () => {
    expect(Object.isFrozen(DEFAULT_TUNING)).toBe(true);
    expect(DEFAULT_TUNING).toMatchObject({ alphaPower: ALPHA_POWER, alphaScale: ALPHA_SCALE, betaRatio: BETA_RATIO });
    expect(() => {
      (DEFAULT_TUNING as { drainGain: number }).drainGain = 1;
    }).toThrow(TypeError);
  });

  it('reaches the loop: drainGain 1 drains to the served concurrency itself (16), the default to half of it (8)', () => {
    const shipped = loopWith({});
    const full = loopWith({ drainGain: 1 });
    const drainOf = (controller: LimitControlLoop) =>
      knee(controller, 1_100).changes.find((change) => change.reason === 'drain');
    expect(drainOf(shipped)).toMatchObject({ from: 49, to: 8 });
    expect(drainOf(full)).toMatchObject({ from: 49, to: 16 }); // 0.16 answers a ms x 100 ms: the 16 servers
  });

  it('reaches the limiter through limiterWithTuning (the ablation hook), and limiter() runs the shipped one', () => {
    const shippedClock = new FakeClock();
    const ablatedClock = new FakeClock();
    const shipped = drive(limiter({ clock: shippedClock }), shippedClock, 1_100);
    const ablated = drive(
      limiterWithTuning({ clock: ablatedClock }, { ...DEFAULT_TUNING, drainGain: 1 }),
      ablatedClock,
      1_100,
    );
    // The same slow start to 49; the drain at 1 050 ms goes to 8 or to 16.
    expect(Math.max(...shipped)).toBe(49);
    expect(Math.max(...ablated)).toBe(49);
    expect(shipped.at(-1)).toBe(8);
    expect(ablated.at(-1)).toBe(16);
  });

  it('startupIdleRounds 0 keeps an app-limited slow start running (the default ends it after 4 rounds)', () => {
    const run = (changes: Partial<ControlTuning>) => {
      const controller = loopWith(changes);
      runScripted({ controller, durationMs: 2_000, clients: 3, call: () => ({ latencyMs: 100 }) });
      return controller.snapshot().slowStart;
    };
    expect(run({})).toBe(false);
    expect(run({ startupIdleRounds: 0 })).toBe(true);
  });

  it('confirmRounds 0 ends the slow start on the first round that rises, a chance one included', () => {
    const run = (changes: Partial<ControlTuning>) => {
      const controller = loopWith(changes);
      // Only the calls admitted between 400 and 500 ms are slow: one risen round.
      const { changes: limitChanges } = runScripted({
        controller,
        durationMs: 1_000,
        clients: 400,
        call: ({ now }) => ({ latencyMs: now >= 400 && now < 500 ? 200 : 100 }),
      });
      return limitChanges.some((change) => change.reason === 'drain');
    };
    expect(run({})).toBe(false);
    expect(run({ confirmRounds: 0 })).toBe(true);
  });

  it('startupGain 2 grows twice as fast per binding sample, still at most 2x a round', () => {
    const controller = loopWith({ startupGain: 2 });
    const { changes } = runScripted({ controller, durationMs: 400, clients: 400, call: () => ({ latencyMs: 100 }) });
    // The first round's one sample adds 2 at once; later rounds still at most double.
    expect([150, 250, 350].map((at) => limitAt(changes, at, 1))).toEqual([2, 4, 8]);
  });

  it('drainOnExit false keeps the limit at the exit and measures the next window anyway', () => {
    const controller = loopWith({ drainOnExit: false });
    const { changes } = knee(controller, 1_100);
    expect(changes.some((change) => change.reason === 'drain')).toBe(false);
    expect(controller.snapshot()).toMatchObject({ slowStart: false, limit: 49 });
  });

  // Regression (fixed): control-tuning.ts says "0 = no slow start: the loop starts in congestion
  // avoidance at initialLimit", and sim/ablation.ts runs that as "no slow start"; but the loop
  // takes its first baseline only during a slow start or in the window after one, so vegas never
  // has a baseline and holds at initialLimit, 'warming-up', for good.
  it('startupGain 0 starts in congestion avoidance at initialLimit and steers from there', () => {
    const controller = loopWith({ startupGain: 0 }, 20);
    expect(controller.snapshot()).toMatchObject({ slowStart: false, limit: 20 });
    feedWindows(controller, 10, 0, { inflight: 30 });
    expect(controller.snapshot().baselineMs).toBe(100);
    expect(controller.limit).toBeGreaterThan(20);
  });
});
