import { describe, expect, it } from 'vitest';
import { defaultBeta, resolveControlConfig, type ControlOptions } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type { LimitChange } from '../../../src/limiter/controller';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { feed, feedUntilClose, feedWindows, observeAt } from './support/feed';
import { runScripted } from './support/scripted';

function loop(options: ControlOptions = {}): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig(options));
}

/**
 * A vegas loop past its slow start, steering: 30 calls in flight at a flat 100 ms. The slow start
 * grows to 31 (the last binding sample), ends after four rounds without growth, a settling round
 * passes, and the window after it (its 400 samples came within the 2 s floor) measures the baseline at 100 ms at 3.1 s. The
 * last settle is at 4 s; the next window closes at 5.1 s.
 */
function steering(options: ControlOptions = {}): { controller: LimitControlLoop; at: number } {
  const controller = loop(options);
  const at = feedWindows(controller, 2, 0, { inflight: 30 });
  expect(controller.snapshot()).toMatchObject({ limit: 31, baselineMs: 100, slowStart: false });
  return { controller, at };
}

describe('the control loop: shape', () => {
  it('starts at initialLimit with limit as a plain field (read on every admission)', () => {
    const controller = new LimitControlLoop(resolveControlConfig({ initialLimit: 12 }));
    expect(controller.limit).toBe(12);
    expect(Object.getOwnPropertyDescriptor(controller, 'limit')).toMatchObject({ value: 12, writable: true });
    expect([controller.minLimit, controller.maxLimit]).toEqual([1, 200]);
  });

  it('reports an empty snapshot before any window, in its slow start', () => {
    expect(loop().snapshot()).toEqual({
      algorithm: 'vegas',
      limit: 1,
      estimate: 1,
      minLimit: 1,
      maxLimit: 200,
      baselineMs: undefined,
      latencyMs: undefined,
      slowStart: true,
      windows: 0,
      baselineRaises: 0,
      lastChange: undefined,
    });
  });
});

describe('the control loop: settle-driven windows (no timers)', () => {
  // The fixed algorithm has no slow start: its windows close by the floor-and-count rule alone.
  it('closes a window only when a call settles at or after its floor with enough samples', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 20 });
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000 }); // last settle at 1 980 ms
    expect(controller.snapshot().windows).toBe(0);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 2_000, 20);
    expect(controller.snapshot().windows).toBe(1);
  });

  it('checks at most once per updateIntervalMs (100 ms)', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 20 });
    feed(controller, { count: 60, fromMs: 0, toMs: 1_950 }); // checks at 0, 130, 260, ... last at 1 918
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 1_960, 20); // too early: floor is 2 000
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 2_010, 20); // within 100 ms of the last check
    expect(controller.snapshot().windows).toBe(0);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 2_060, 20);
    expect(controller.snapshot().windows).toBe(1);
  });

  it('lets a rejected or cancelled settle close a window on time, without counting it', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 20 });
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000 });
    observeAt(controller, { verdict: 'cancelled', latencyMs: 1 }, 2_000, 20);
    expect(controller.snapshot().windows).toBe(1);
    expect(controller.snapshot().latencyMs).toBeCloseTo(100, 10);
  });

  it('closes a slow-start round after one round trip, not at the 2 s floor (adr/0045)', () => {
    const controller = loop();
    // The round opens at its first settle (0 ms); it ends when a call admitted after that ends.
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 0, 1); // started at -100
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 99, 1); // started at -1: not yet
    expect(controller.snapshot().windows).toBe(0);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 100, 1); // started at 0: a round trip
    expect(controller.snapshot().windows).toBe(1);
  });

  it('measures the baseline in the window after the slow start (warming-up), then steps: no queue, + beta', () => {
    const controller = loop();
    const changes: LimitChange[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    feedWindows(controller, 2, 0, { inflight: 30 });
    // Until the baseline window has closed (3.1 s) every decision after the slow start holds.
    expect(controller.snapshot()).toMatchObject({ limit: 31, baselineMs: 100, latencyMs: 100, windows: 12 });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'warming-up', at: 3_100 });
    expect(changes.every((change) => change.reason === 'slow-start')).toBe(true);
    // The first steering window: no queue at all, so vegas grows by beta(31) = 2 x 3.1^0.6 = 3.94.
    feedWindows(controller, 1, 4_000, { inflight: 30 });
    expect(controller.snapshot().estimate).toBeCloseTo(31 + defaultBeta(31), 10);
    expect(changes.at(-1)).toEqual({ from: 31, to: 34, direction: 'grow', reason: 'no-queue', at: 5_100 });
  });

  it('tunes on latencyMs, the time after the queue: queuedMs changes nothing', () => {
    const quiet = loop();
    const queued = loop();
    feedWindows(quiet, 20, 0, { latencyMs: 100, inflight: 30 });
    feedWindows(queued, 20, 0, { latencyMs: 100, inflight: 30, queuedMs: 60_000 });
    expect(queued.snapshot()).toEqual(quiet.snapshot());
    expect(quiet.limit).toBe(60);
  });
});

describe('the control loop: windows that wait for their samples (adr/0090)', () => {
  /** Steering at 31 and 100 ms, then one call a second, each finding the limit binding, until a window closes. */
  function sparseWindow(noQueueGrowthPerFloor: boolean): { before: number; after: number; lastedMs: number } {
    const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, noQueueGrowthPerFloor });
    const at = feedWindows(controller, 2, 0, { inflight: 30 });
    const opened = feedUntilClose(controller, at + 10, { inflight: 30 });
    const before = controller.snapshot().estimate;
    const windows = controller.snapshot().windows;
    let t = opened;
    while (controller.snapshot().windows === windows) {
      t += 1_000;
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, t, controller.limit);
    }
    return { before, after: controller.snapshot().estimate, lastedMs: t - opened };
  }

  it('grows by beta per window floor the window lasted when nothing queues, not per window', () => {
    const { before, after, lastedMs } = sparseWindow(true);
    // 50 samples x 2 s floor = 100 000 sample-ms: ten calls a second apart close it at 10 s, five floors.
    expect(lastedMs).toBe(10_000);
    expect(after).toBeCloseTo(before + Math.min(5 * defaultBeta(before), before), 10);
  });

  it('grows by one beta for the same window with the rule off (noQueueGrowthPerFloor false)', () => {
    const { before, after, lastedMs } = sparseWindow(false);
    expect(lastedMs).toBe(10_000);
    expect(after).toBeCloseTo(before + defaultBeta(before), 10);
  });
});

describe('the control loop: guardrails and guards', () => {
  it('never leaves [minLimit, maxLimit], and says so', () => {
    const controller = loop({ maxLimit: 30 });
    feedWindows(controller, 10, 0);
    expect(controller.limit).toBe(30);
    expect(controller.snapshot().lastChange?.reason).toBe('at-max');
    feedWindows(controller, 40, 20_000, { verdict: 'timeout', latencyMs: 5_000 });
    expect(controller.limit).toBe(1);
    expect(controller.snapshot().lastChange?.reason).toBe('at-min');
  });

  it('admits the estimate rounded by error diffusion: 7.5 admits 7 and 8 in turn', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    controller.setLimit(7.5, 0); // a manual resize admits the integer part
    expect([controller.limit, controller.snapshot().estimate]).toEqual([7, 7.5]);
    const limits: number[] = [];
    let at = 0;
    for (let w = 0; w < 6; w++) {
      at = feedWindows(controller, 1, at, { inflight: 7 });
      limits.push(controller.limit);
    }
    expect(limits).toEqual([7, 8, 7, 8, 7, 8]);
    expect(controller.snapshot().estimate).toBe(7.5);
  });

  it('does not grow past max(initialLimit, 2 x peak in-flight) when demand is far below the limit', () => {
    const controller = loop();
    feedWindows(controller, 10, 0, { inflight: 3 });
    // The slow start stops at 4 (the last call that found the limit binding), vegas goes on to 6.
    expect(controller.limit).toBe(6);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'app-limited' });
  });

  it('lets a limit below initialLimit climb back to it on healthy latency alone', () => {
    const controller = loop({ initialLimit: 20 });
    const at = feedWindows(controller, 4, 0, { inflight: 1 });
    expect(controller.snapshot()).toMatchObject({ limit: 20, slowStart: false, baselineMs: 100 });
    controller.setLimit(8, at);
    feedWindows(controller, 15, at, { inflight: 1 });
    expect(controller.limit).toBe(20);
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'app-limited' });
  });

  it('grows up to twice the peak in-flight when demand is there', () => {
    const controller = loop();
    feedWindows(controller, 30, 0, { inflight: 35 });
    expect(controller.limit).toBe(70);
  });

  it('does not grow on a window where failures are half the answers or more', () => {
    const { controller, at: start } = steering();
    // The first window (3.1 to 5.1 s) still holds a second of clean samples: it grows by beta(31).
    for (let w = 0; w < 10; w++) {
      const at = start + w * 2_000;
      feed(controller, { count: 40, fromMs: at, toMs: at + 1_000, latencyMs: 100, inflight: 30 });
      feed(controller, {
        count: 60,
        fromMs: at + 1_000,
        toMs: at + 2_000,
        verdict: 'failure',
        latencyMs: 1,
        inflight: 30,
      });
    }
    expect(controller.snapshot().estimate).toBeCloseTo(31 + defaultBeta(31), 10);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'failures' });
    expect(controller.snapshot().baselineMs).toBe(100);
  });

  it('does not count a timeout that ran for less than the baseline (it waited in our queue) as a reduce signal', () => {
    const { controller, at: start } = steering();
    // Deadline spent queued: the upstream ran each call for 20 ms before the timeout.
    feedWindows(controller, 5, start, { verdict: 'timeout', latencyMs: 20, count: 50, inflight: 30 });
    // Only the clean window before them closed: no queue, + beta(31) per window floor it lasted
    // (adr/0090: 3.1 s to 5.2 s, the first timeout past its 2 s floor, 1.05 floors).
    const estimate = controller.snapshot().estimate;
    expect(estimate).toBeCloseTo(31 + defaultBeta(31) * 1.05, 10);
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'no-queue' });
    // The same timeouts after 5 s at the upstream cut the estimate by the full x0.81.
    feedWindows(controller, 1, start + 10_000, { verdict: 'timeout', latencyMs: 5_000, count: 50, inflight: 30 });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.snapshot().estimate).toBeCloseTo(estimate * 0.81, 10);
  });

  it('never moves the fixed algorithm on its own', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    feedWindows(controller, 10, 0, { verdict: 'timeout' });
    feedWindows(controller, 10, 20_000);
    expect(controller.limit).toBe(7);
    expect(controller.snapshot()).toMatchObject({ algorithm: 'fixed', slowStart: false, latencyMs: 100 });
  });

  // Regression (fixed): fixed.ts says "Windows still close, so the snapshot reports latency and
  // baseline", but the loop only takes a first baseline during a slow start or after a drain, and
  // the fixed algorithm has neither.
  it('reports the baseline of the fixed algorithm (fixed.ts: "the snapshot reports latency and baseline")', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    feedWindows(controller, 10, 0);
    expect(controller.snapshot().baselineMs).toBe(100);
  });
});

describe('the control loop: telemetry', () => {
  it('emits one event per change of the integer limit, with the reason', () => {
    const controller = loop();
    const events: LimitChange[] = [];
    controller.changes.subscribe((change) => events.push(change));
    // 400 callers at a flat 100 ms for 300 ms: the slow start's first three round trips.
    runScripted({ controller, durationMs: 300, clients: 400, call: () => ({ latencyMs: 100 }) });
    expect(events).toEqual([
      { from: 1, to: 2, direction: 'grow', reason: 'slow-start', at: 100 },
      { from: 2, to: 3, direction: 'grow', reason: 'slow-start', at: 200 },
      { from: 3, to: 4, direction: 'grow', reason: 'slow-start', at: 300 },
      { from: 4, to: 5, direction: 'grow', reason: 'slow-start', at: 300 },
      { from: 5, to: 6, direction: 'grow', reason: 'slow-start', at: 300 },
    ]);
  });

  it('records the last decision in the snapshot even when the limit held', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    feedWindows(controller, 1, 0, { inflight: 7 });
    expect(controller.snapshot().lastChange).toEqual({ from: 7, to: 7, direction: 'hold', reason: 'fixed', at: 2_000 });
  });

  it('resizes on setLimit, clamped, with reason manual', () => {
    const controller = loop();
    const events: LimitChange[] = [];
    controller.changes.subscribe((change) => events.push(change));
    expect(controller.setLimit(500, 10)).toBe(true);
    expect(controller.limit).toBe(200);
    expect(controller.setLimit(200, 11)).toBe(false);
    expect(controller.setLimit(2.7, 12)).toBe(true);
    expect(controller.limit).toBe(2);
    expect(controller.setLimit(0, 13)).toBe(true);
    expect(controller.limit).toBe(1);
    expect(events.map((e) => [e.to, e.reason])).toEqual([
      [200, 'manual'],
      [2, 'manual'],
      [1, 'manual'],
    ]);
    expect(() => controller.setLimit(Number.NaN, 14)).toThrow(TypeError);
  });
});

describe('the control loop: the idle rule (adr/0031, adr/0140)', () => {
  /** A vegas loop driven to minLimit 1 by timeouts after its slow start; its last settle at `clampedAt`. */
  function clamped(): { controller: LimitControlLoop; clampedAt: number } {
    const { controller, at } = steering();
    const clampedAt = feedWindows(controller, 30, at, { verdict: 'timeout', latencyMs: 5_000 });
    expect(controller.snapshot()).toMatchObject({ limit: 1, slowStart: false, baselineMs: 100 });
    return { controller, clampedAt };
  }

  /** Steering (smoothed latency 100 ms), then one call settling `gapMs` after the last at `latencyMs`; the snapshot. */
  function afterGap(gapMs: number, latencyMs: number, durationMs?: number) {
    const { controller, at } = steering();
    expect(controller.snapshot().latencyMs).toBe(100);
    observeAt(controller, { verdict: 'ok', latencyMs, durationMs }, at + gapMs, 30);
    return controller.snapshot();
  }

  it('does nothing for gaps shorter than 2 x maxWindowMs (60 s): the smoothing stays', () => {
    expect(afterGap(59_999 + 100, 100).latencyMs).toBe(100);
  });

  it('after 60 s with nothing in flight drops the smoothing and keeps the limit and the baseline: no slow start', () => {
    expect(afterGap(60_000 + 100, 100)).toMatchObject({
      latencyMs: undefined,
      limit: 31,
      baselineMs: 100,
      slowStart: false,
    });
  });

  it('keeps a clamped limit: vegas grows from it as it would without the gap (RFC 7661 keeps a validated window)', () => {
    const { controller, clampedAt } = clamped();
    // The gap runs from the last lesson to the start of the call that ends it (60 s: nothing was in flight).
    expect(observeAt(controller, { verdict: 'ok', latencyMs: 100 }, clampedAt + 60_100, 1)).toBe(false);
    expect(controller.snapshot()).toMatchObject({ limit: 1, slowStart: false, baselineMs: 100, latencyMs: undefined });
    feedUntilClose(controller, clampedAt + 60_200, { inflight: 1 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 1, direction: 'grow', reason: 'no-queue' });
  });

  it('drops the smoothing even when the settle that ends the gap teaches nothing', () => {
    const { controller, at } = steering();
    observeAt(controller, { verdict: 'cancelled', latencyMs: 1 }, at + 60_001, 1);
    expect(controller.snapshot()).toMatchObject({ limit: 31, slowStart: false, latencyMs: undefined });
  });

  it('drops the half-filled window and the stale latency smoothing', () => {
    const { controller, at: end } = steering();
    feed(controller, { count: 40, fromMs: end + 1, toMs: end + 1_000, latencyMs: 900, inflight: 30 }); // half a window
    const resumedAt = end + 1_000 + 120_000;
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, resumedAt, 30);
    expect(controller.snapshot().latencyMs).toBeUndefined();
    // The first window after the gap holds fresh samples only: its mean is 100 ms, not 900-ish.
    feedUntilClose(controller, resumedAt + 10, { inflight: 30 });
    expect(controller.snapshot().latencyMs).toBe(100);
  });

  it('keeps a learned limit and the baseline', () => {
    const controller = loop();
    const end = feedWindows(controller, 30, 0, { inflight: 30 });
    const before = controller.snapshot();
    expect(before.limit).toBe(60);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 3_600_000, 1);
    expect(controller.snapshot()).toMatchObject({ limit: 60, baselineMs: before.baselineMs, slowStart: false });
  });

  it('is not idle when the call that ends the gap was in flight before it began (a stream, a slow call)', () => {
    // Started 1 ms before the last settle, it ran through the whole gap.
    expect(afterGap(70_000, 70_001, 70_001).latencyMs).toBe(100);
  });

  it('is not idle after a gap that a marked stream spans: its mark taught the loop inside it', () => {
    // A plain call that starts 60.5 s after the last settle ends a gap, unless a stream's mark at 30 s taught the loop
    // inside it (the stream itself settles later).
    const endsGap = (marked: boolean) => {
      const { controller, at } = steering();
      if (marked) controller.observeMark(100, at + 30_000, 30);
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at + 60_600, 30);
      return controller.snapshot().latencyMs;
    };
    expect(endsGap(true)).toBe(100);
    expect(endsGap(false)).toBeUndefined();
  });

  // Regression (fixed): idle means nothing in flight for idleAfterMs, but the loop only asked whether
  // the settling call started before the last settle. A call that started 1 ms after it and ran
  // for 70 s kept the upstream busy through the gap.
  it('is not idle when the call that ends the gap started inside it and ran through it', () => {
    expect(afterGap(70_000, 69_999, 69_999).latencyMs).toBe(100);
  });
});
