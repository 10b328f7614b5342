import { describe, expect, it } from 'vitest';
import type { LimitChange } from '../../../src/limiter/controller';
import {
  CONTROL_DEFAULTS,
  LimitControlLoop,
  createLimitController,
  resolveControlConfig,
  type ControlOptions,
} from '../../../src/limiter/control-loop';
import { feed, feedWindows } from './support/feed';

function loop(options: ControlOptions = {}): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig(options));
}

describe('resolveControlConfig', () => {
  it('fills every default, with the derived idle gap, into a frozen config', () => {
    const config = resolveControlConfig(undefined);
    expect(config).toEqual({ ...CONTROL_DEFAULTS, idleAfterMs: 60_000 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('carries the spec §6 defaults', () => {
    expect(CONTROL_DEFAULTS).toMatchObject({
      algorithm: 'vegas',
      initialLimit: 20,
      minLimit: 4,
      maxLimit: 200,
      updateIntervalMs: 100,
      minWindowMs: 2_000,
      maxWindowMs: 30_000,
      minSamples: 50,
      quantile: 0.9,
      smoothing: 0.2,
      rttTolerance: 1.5,
      backoffRatio: 0.9,
      correlationWindow: 50,
      failure: 'hold',
    });
  });

  it('leaves options it does not own alone (admission reads them from the same object)', () => {
    expect(() => resolveControlConfig({ queueing: false, queueOrder: 'fifo' })).not.toThrow();
  });

  it('names the owner, the option, the range and the value in a bad option', () => {
    expect(() => resolveControlConfig({ minLimit: 0 })).toThrow(
      'resilix: limiter option "minLimit" must be an integer in [1, Infinity); received 0',
    );
    expect(() => resolveControlConfig({ maxLimit: 2.5 }, 'pool')).toThrow(
      'resilix: pool option "maxLimit" must be an integer in [1, Infinity); received 2.5',
    );
    expect(() => resolveControlConfig({ quantile: 1 })).toThrow(
      'resilix: limiter option "quantile" must be a number in (0, 1); received 1',
    );
    expect(() => resolveControlConfig({ algorithm: 'cubic' as never })).toThrow(
      'resilix: limiter option "algorithm" must be one of "vegas", "gradient2", "aimd", "fixed"; received "cubic"',
    );
    expect(() => resolveControlConfig({ failure: 'retry' as never })).toThrow(RangeError);
    expect(() => resolveControlConfig({ rttTolerance: 0.9 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ smoothing: 0 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ backoffRatio: 1 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ correlationWindow: 5 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ minSamples: 0 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ updateIntervalMs: -1 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ minWindowMs: '2s' })).toThrow(TypeError);
    expect(() => resolveControlConfig('vegas')).toThrow(TypeError);
  });

  it('rejects explicit bounds that contradict each other, naming both', () => {
    expect(() => resolveControlConfig({ minLimit: 50, maxLimit: 10 })).toThrow(
      'resilix: limiter option "minLimit" (50) must not exceed "maxLimit" (10)',
    );
    expect(() => resolveControlConfig({ initialLimit: 300 })).toThrow(
      '"initialLimit" (300) must not exceed "maxLimit" (200)',
    );
    expect(() => resolveControlConfig({ minWindowMs: 5_000, maxWindowMs: 1_000 })).toThrow(RangeError);
  });

  it('lets a default follow an explicit bound (maxLimit 10 alone gives initialLimit 10)', () => {
    expect(resolveControlConfig({ maxLimit: 10 })).toMatchObject({ minLimit: 4, initialLimit: 10, maxLimit: 10 });
    expect(resolveControlConfig({ maxLimit: 2 })).toMatchObject({ minLimit: 2, initialLimit: 2 });
    expect(resolveControlConfig({ minLimit: 30 })).toMatchObject({ initialLimit: 30 });
    expect(resolveControlConfig({ minWindowMs: 60_000 })).toMatchObject({ maxWindowMs: 60_000, idleAfterMs: 120_000 });
  });
});

describe('the control loop: shape', () => {
  it('starts at initialLimit with limit as a plain field (read on every admission)', () => {
    const controller = createLimitController(resolveControlConfig({ initialLimit: 12 }));
    expect(controller.limit).toBe(12);
    expect(Object.getOwnPropertyDescriptor(controller, 'limit')).toMatchObject({ value: 12, writable: true });
    expect([controller.minLimit, controller.maxLimit]).toEqual([4, 200]);
  });

  it('reports an empty snapshot before any window', () => {
    expect(loop().snapshot()).toEqual({
      algorithm: 'vegas',
      limit: 20,
      estimate: 20,
      minLimit: 4,
      maxLimit: 200,
      baselineMs: undefined,
      latencyMs: undefined,
      windows: 0,
      lastChange: undefined,
      baselineResets: 0,
    });
  });
});

describe('the control loop: settle-driven windows (no timers)', () => {
  it('closes a window only when a call settles at or after its floor with enough samples', () => {
    const controller = loop();
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000 }); // last settle at 1 980 ms
    expect(controller.snapshot().windows).toBe(0);
    controller.observe({ verdict: 'ok', latencyMs: 100 }, 2_000, 20);
    expect(controller.snapshot().windows).toBe(1);
  });

  it('checks at most once per updateIntervalMs (100 ms)', () => {
    const controller = loop();
    feed(controller, { count: 60, fromMs: 0, toMs: 1_950 }); // checks at 0, 33, 130, ... last at 1 918
    controller.observe({ verdict: 'ok', latencyMs: 100 }, 1_960, 20); // too early: floor is 2 000
    controller.observe({ verdict: 'ok', latencyMs: 100 }, 2_010, 20); // within 100 ms of the last check
    expect(controller.snapshot().windows).toBe(0);
    controller.observe({ verdict: 'ok', latencyMs: 100 }, 2_060, 20);
    expect(controller.snapshot().windows).toBe(1);
  });

  it('lets a rejected or cancelled settle close a window on time, without counting it', () => {
    const controller = loop();
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000 });
    controller.observe({ verdict: 'cancelled', latencyMs: 1 }, 2_000, 20);
    expect(controller.snapshot().windows).toBe(1);
    expect(controller.snapshot().latencyMs).toBeCloseTo(100, 10);
  });

  it('holds while warming up, then steps: vegas grows by beta on the third window (no queue)', () => {
    // beta at L = 20 is 6 x (1/3) x 2^0.75 = 3.364 requests (adr/0036), not 6 log10(20) = 7.8.
    const controller = loop();
    const reasons: string[] = [];
    controller.changes.subscribe((change) => reasons.push(change.reason));
    feedWindows(controller, 2, 0);
    expect(controller.snapshot()).toMatchObject({ limit: 20, windows: 2, baselineMs: undefined });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'warming-up' });
    feedWindows(controller, 1, 4_000);
    expect(controller.snapshot()).toMatchObject({ limit: 23, baselineMs: 100, latencyMs: 100, windows: 3 });
    expect(controller.snapshot().estimate).toBeCloseTo(23.36359, 5);
    expect(reasons).toEqual(['no-queue']);
  });

  it('tunes on latencyMs, the time after the queue: queuedMs changes nothing', () => {
    const quiet = loop();
    const queued = loop();
    feedWindows(quiet, 20, 0, { latencyMs: 100 });
    feedWindows(queued, 20, 0, { latencyMs: 100, queuedMs: 60_000 });
    expect(queued.snapshot()).toEqual(quiet.snapshot());
  });
});

describe('the control loop: guardrails and guards', () => {
  it('never leaves [minLimit, maxLimit], and says so', () => {
    const controller = loop({ maxLimit: 30 });
    feedWindows(controller, 10, 0);
    expect(controller.limit).toBe(30);
    expect(controller.snapshot().lastChange?.reason).toBe('at-max');
    feedWindows(controller, 40, 20_000, { verdict: 'timeout', latencyMs: 5_000 });
    expect(controller.limit).toBe(4);
    expect(controller.snapshot().lastChange?.reason).toBe('at-min');
  });

  it('admits on the integer part of a fractional estimate', () => {
    const controller = loop();
    feedWindows(controller, 3, 0);
    expect(controller.snapshot().estimate).toBeCloseTo(23.36359, 5);
    expect(controller.limit).toBe(23);
  });

  it('does not grow past max(initialLimit, 2 x peak in-flight) when demand is far below the limit', () => {
    const controller = loop();
    feedWindows(controller, 10, 0, { inflight: 3 });
    expect(controller.limit).toBe(20);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'app-limited' });
  });

  it('lets a limit below initialLimit climb back to it on healthy latency alone', () => {
    const controller = loop();
    controller.setLimit(8, 0);
    // From 8 the no-queue step is beta = 6 x (1/3) x 0.8^0.75 = 1.69, growing with L (adr/0036).
    feedWindows(controller, 15, 0, { inflight: 1 });
    expect(controller.limit).toBe(20);
  });

  it('grows up to twice the peak in-flight when demand is there', () => {
    const controller = loop();
    feedWindows(controller, 30, 0, { inflight: 35 });
    expect(controller.limit).toBe(70);
  });

  it('does not grow on a window where failures are half the answers or more', () => {
    const controller = loop();
    const start = feedWindows(controller, 3, 0); // baseline 100 ms, limit 23
    expect(controller.limit).toBe(23);
    for (let w = 0; w < 10; w++) {
      const at = start + w * 2_000;
      feed(controller, { count: 40, fromMs: at, toMs: at + 1_000, latencyMs: 100 });
      feed(controller, { count: 60, fromMs: at + 1_000, toMs: at + 2_000, verdict: 'failure', latencyMs: 1 });
    }
    expect(controller.limit).toBe(23);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'failures' });
    expect(controller.snapshot().baselineMs).toBe(100);
  });

  it('does not count a timeout that ran for less than the baseline (it waited in our queue) as a reduce signal', () => {
    const controller = loop();
    const start = feedWindows(controller, 3, 0); // baseline 100 ms, limit 23
    expect(controller.limit).toBe(23);
    // Deadline spent queued: the upstream ran each call for 20 ms before the timeout.
    feedWindows(controller, 5, start, { verdict: 'timeout', latencyMs: 20, count: 50 });
    expect(controller.limit).toBe(23);
    // The same timeouts after 5 s at the upstream cut the limit (x0.81 a window).
    feedWindows(controller, 1, start + 10_000, { verdict: 'timeout', latencyMs: 5_000, count: 50 });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.limit).toBe(18);
  });

  it('never moves the fixed algorithm on its own', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    feedWindows(controller, 10, 0, { verdict: 'timeout' });
    feedWindows(controller, 10, 20_000);
    expect(controller.limit).toBe(7);
    expect(controller.snapshot()).toMatchObject({ algorithm: 'fixed', baselineMs: 100 });
  });
});

describe('the control loop: telemetry', () => {
  it('emits one event per change of the integer limit, with the reason', () => {
    const controller = loop();
    const events: LimitChange[] = [];
    controller.changes.subscribe((change) => events.push(change));
    feedWindows(controller, 4, 0);
    expect(events).toEqual([
      { from: 20, to: 23, direction: 'grow', reason: 'no-queue', at: 6_000 },
      { from: 23, to: 27, direction: 'grow', reason: 'no-queue', at: 8_000 },
    ]);
  });

  it('records the last decision in the snapshot even when the limit held', () => {
    const controller = loop();
    feedWindows(controller, 1, 0);
    expect(controller.snapshot().lastChange).toEqual({
      from: 20,
      to: 20,
      direction: 'hold',
      reason: 'warming-up',
      at: 2_000,
    });
  });

  it('resizes on setLimit, clamped, with reason manual', () => {
    const controller = loop();
    const events: LimitChange[] = [];
    controller.changes.subscribe((change) => events.push(change));
    expect(controller.setLimit(500, 10)).toBe(true);
    expect(controller.limit).toBe(200);
    expect(controller.setLimit(200, 11)).toBe(false);
    expect(controller.setLimit(2.7, 12)).toBe(true);
    expect(controller.limit).toBe(4);
    expect(events.map((e) => [e.to, e.reason])).toEqual([
      [200, 'manual'],
      [4, 'manual'],
    ]);
    expect(() => controller.setLimit(Number.NaN, 13)).toThrow(TypeError);
  });
});

describe('the control loop: the idle rule (adr/0031)', () => {
  /** A vegas loop clamped at minLimit 4 by timeouts, its last settle at `clampedAt` ms. */
  function clamped(): { controller: LimitControlLoop; clampedAt: number } {
    const controller = loop();
    const clampedAt = feedWindows(controller, 30, 0, { verdict: 'timeout', latencyMs: 5_000 });
    expect(controller.limit).toBe(4);
    return { controller, clampedAt };
  }

  it('does nothing for gaps shorter than 2 x maxWindowMs (60 s)', () => {
    const { controller, clampedAt } = clamped();
    controller.observe({ verdict: 'ok', latencyMs: 100 }, clampedAt + 59_999, 1);
    expect(controller.limit).toBe(4);
  });

  it('halves the distance to initialLimit after a 60 s gap: 4 -> 12', () => {
    const { controller, clampedAt } = clamped();
    expect(controller.observe({ verdict: 'ok', latencyMs: 100 }, clampedAt + 60_000, 1)).toBe(true);
    expect(controller.limit).toBe(12);
    expect(controller.snapshot().lastChange).toMatchObject({
      from: 4,
      to: 12,
      direction: 'grow',
      reason: 'idle-reset',
    });
  });

  it('relaxes once per gap, even when the settle that ends it teaches nothing', () => {
    const { controller, clampedAt } = clamped();
    controller.observe({ verdict: 'cancelled', latencyMs: 1 }, clampedAt + 60_000, 1);
    controller.observe({ verdict: 'cancelled', latencyMs: 1 }, clampedAt + 60_001, 1);
    controller.observe({ verdict: 'ok', latencyMs: 100 }, clampedAt + 60_002, 1);
    expect(controller.limit).toBe(12);
  });

  it('is all but back at initialLimit after ten minutes: 20 - 16 x 2^-10 = 19.98', () => {
    const { controller, clampedAt } = clamped();
    controller.observe({ verdict: 'ok', latencyMs: 100 }, clampedAt + 600_000, 1);
    expect(controller.snapshot().estimate).toBeCloseTo(20 - 16 / 1024, 10);
    expect(controller.limit).toBe(19);
  });

  it('drops the half-filled window and the stale latency smoothing', () => {
    const controller = loop();
    feedWindows(controller, 5, 0, { latencyMs: 100 });
    feed(controller, { count: 40, fromMs: 10_001, toMs: 11_000, latencyMs: 900 }); // half a window
    const resumedAt = 11_000 + 120_000;
    controller.observe({ verdict: 'ok', latencyMs: 100 }, resumedAt, 1);
    expect(controller.snapshot().latencyMs).toBeUndefined();
    // 40 stale samples + 10 fresh ones would close the window at 2 s; 10 fresh ones alone do not.
    feed(controller, { count: 10, fromMs: resumedAt + 1, toMs: resumedAt + 2_100 });
    expect(controller.snapshot().windows).toBe(5);
  });

  it('keeps a limit above initialLimit (that was learned) and the baseline', () => {
    const controller = loop();
    const end = feedWindows(controller, 30, 0);
    const before = controller.snapshot();
    expect(before.limit).toBeGreaterThan(20);
    controller.observe({ verdict: 'ok', latencyMs: 100 }, end + 3_600_000, 1);
    expect(controller.limit).toBe(before.limit);
    expect(controller.snapshot().baselineMs).toBe(before.baselineMs);
  });
});
