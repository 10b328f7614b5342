import { describe, expect, it } from 'vitest';
import { defaultBeta, resolveControlConfig, type ControlOptions } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { type ControlTuning, DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { feed, feedUntilClose, feedWindows, observeAt } from './support/feed';
import { runScripted } from './support/scripted';

/**
 * Guards and boundaries of the control loop that the closed-loop tests pass through without
 * pinning (found by mutation testing, docs/testing.md): each test drives the loop through its
 * public API with scripted observations and asserts the figure the guard decides.
 */

function loop(options: ControlOptions = {}, tuning: Partial<ControlTuning> = {}): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig(options), { ...DEFAULT_TUNING, ...tuning });
}

/**
 * Past the slow start at 30 in flight and 100 ms (baseline 100 ms), one steering window grown by
 * beta(31) to 34.94; a window opens at the returned time.
 */
function steering(
  options: ControlOptions = {},
  tuning: Partial<ControlTuning> = {},
): { controller: LimitControlLoop; open: number } {
  const controller = loop(options, tuning);
  const settled = feedWindows(controller, 2, 0, { inflight: 30 });
  const open = feedUntilClose(controller, settled, { inflight: 30 });
  expect(controller.snapshot()).toMatchObject({ baselineMs: 100, slowStart: false });
  return { controller, open };
}

describe('the control loop: window floor', () => {
  it('sizes the floor at twice the smoothed latency: a 1.5 s latency waits 3 s, not 2 s', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 20 });
    // The first window: no latency known yet, so the 2 s minWindowMs floor.
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000, latencyMs: 1_500 });
    observeAt(controller, { verdict: 'ok', latencyMs: 1_500 }, 2_000, 20);
    expect(controller.snapshot()).toMatchObject({ windows: 1, latencyMs: 1_500 });
    feed(controller, { count: 100, fromMs: 2_000, toMs: 4_900, latencyMs: 1_500 });
    observeAt(controller, { verdict: 'ok', latencyMs: 1_500 }, 4_999, 20);
    expect(controller.snapshot().windows).toBe(1); // 3 s less 1 ms old, 102 samples
    observeAt(controller, { verdict: 'ok', latencyMs: 1_500 }, 5_100, 20);
    expect(controller.snapshot().windows).toBe(2);
  });

  it('caps the floor at maxWindowMs: a 20 s latency closes its window at 30 s, not 40 s', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 20 });
    feed(controller, { count: 100, fromMs: 0, toMs: 2_000, latencyMs: 20_000 });
    observeAt(controller, { verdict: 'ok', latencyMs: 20_000 }, 2_000, 20);
    expect(controller.snapshot()).toMatchObject({ windows: 1, latencyMs: 20_000 });
    feed(controller, { count: 100, fromMs: 2_000, toMs: 31_900, latencyMs: 20_000 });
    observeAt(controller, { verdict: 'ok', latencyMs: 20_000 }, 31_999, 20);
    expect(controller.snapshot().windows).toBe(1);
    observeAt(controller, { verdict: 'ok', latencyMs: 20_000 }, 32_100, 20);
    expect(controller.snapshot().windows).toBe(2);
  });
});

describe('the control loop: options that reach vegas', () => {
  it("steers by a user's beta as given, not the default band's", () => {
    // beta = 50 queued requests: at the app-limited 60, a window at 2x the baseline (a queue of
    // about 30) holds instead of shrinking as the default beta(60) = 5 would.
    const { controller, open } = steering({ beta: () => 50 });
    feedWindows(controller, 1, open + 1, { inflight: 30, latencyMs: 200 });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'queue-within-band' });
    const plain = steering();
    feedWindows(plain.controller, 1, plain.open + 1, { inflight: 30, latencyMs: 200 });
    expect(plain.controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'queue-above-beta' });
  });
});

describe('the control loop: overload bookkeeping', () => {
  it("names a window with a refusal 'overload' even when the served concurrency is above the limit (no cut)", () => {
    const { controller, open } = steering();
    // 1 000 answers in 2 s at 100 ms: 50 served, above 34.94; one refusal in the middle.
    for (let i = 1; i <= 1_000; i++) {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + i * 2, 30);
      if (i === 500) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + i * 2, 30);
    }
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + 2_100, 30);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'hold', reason: 'overload' });
    expect(controller.snapshot().estimate).toBeCloseTo(31 + defaultBeta(31), 10);
  });

  it('cuts a first slow-start round of refusals to its own served concurrency (no no-load latency yet)', () => {
    const controller = loop({ initialLimit: 20 });
    // One answer opens the round; 12 refusals; an answer admitted after it opened ends it at 100 ms.
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 0, 1);
    for (let i = 1; i <= 12; i++) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, i, 1);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 100, 1);
    // Little's law on the round's own latencies: 2 x 100 ms over 100 ms = 2 served.
    expect(controller.snapshot()).toMatchObject({ limit: 2, slowStart: false });
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'overload', direction: 'shrink' });
  });

  it('grows on after an overload when overloadHoldMs is 0 (no hold)', () => {
    const { controller, open } = steering({}, { overloadHoldMs: 0 });
    for (let i = 1; i <= 200; i++) {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + i * 10 - 1, 10);
      if (i % 5 === 0) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + i * 10, 10);
    }
    const end = open + 2_100;
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end, 10);
    expect(controller.snapshot().estimate).toBe(10);
    feedWindows(controller, 1, end, { inflight: 10 });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'grow', reason: 'no-queue' });
  });
});

describe('the control loop: the idle rule for loops without a slow start', () => {
  it('does not start a slow start after an idle gap for the fixed algorithm', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 });
    const end = feedWindows(controller, 2, 0, { inflight: 7 });
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 120_000, 7);
    expect(controller.snapshot()).toMatchObject({ slowStart: false, limit: 7 });
  });

  it('does not start a slow start after an idle gap with startupGain 0', () => {
    const controller = loop({ initialLimit: 10 }, { startupGain: 0 });
    const end = feedWindows(controller, 3, 0, { inflight: 10 });
    expect(controller.snapshot().slowStart).toBe(false);
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 120_000, 10);
    expect(controller.snapshot().slowStart).toBe(false);
  });
});

describe('the control loop: the limit and the baseline over an idle gap (adr/0031, adr/0140)', () => {
  /**
   * 16 servers at 100 ms (processor sharing above 16 in flight), 400 callers for 20 s, nobody for
   * 80 s (idle), then 400 callers again until 160 s; from 50 s on the no-load latency is `laterMs`.
   * Returns the changes after the gap and the snapshot at the end.
   */
  function afterIdle(laterMs: number) {
    const controller = loop();
    const { changes } = runScripted({
      controller,
      durationMs: 160_000,
      clients: (now) => (now < 20_000 || now >= 100_000 ? 400 : 0),
      call: ({ now, inflight }) => ({ latencyMs: (now < 50_000 ? 100 : laterMs) * Math.max(1, inflight / 16) }),
    });
    return { after: changes.filter((change) => change.at > 100_000), snapshot: controller.snapshot() };
  }

  it('comes back at the limit it left with its baseline (the same upstream): no slow start, no overshoot, no drain', () => {
    const { after, snapshot } = afterIdle(100);
    expect(after[0]).toMatchObject({ from: 19 });
    expect(after.filter((change) => change.reason === 'slow-start' || change.reason === 'drain')).toEqual([]);
    expect(Math.max(...after.map((change) => change.to))).toBeLessThanOrEqual(22);
    expect(snapshot).toMatchObject({ baselineMs: 100, baselineRaises: 0 });
  });

  it('lowers the baseline only as the smoothed latency falls when the upstream got faster (100 -> 80 ms)', () => {
    // No re-measure: the limit (19-22 on 16 servers) queues enough to hide most of the fall, as it would without the
    // gap (the cost adr/0140 records; the idle slow start's drain and baseline window used to find 80).
    const { snapshot } = afterIdle(80);
    expect(snapshot.baselineMs).toBeCloseTo(94.39, 2);
  });

  it('jumps on the first window after the gap when the upstream is 2.5x slower: the jump rule keeps its last windows', () => {
    const { after, snapshot } = afterIdle(250);
    expect(after.slice(0, 3).map((change) => `${change.from} -> ${change.to} ${change.reason}`)).toEqual([
      '19 -> 3 baseline-raised',
      '3 -> 8 drain',
      '8 -> 16 drain',
    ]);
    expect(after[0]!.at).toBeLessThan(103_000);
    expect(snapshot).toMatchObject({ baselineMs: 250 });
  });

  it('reads a slower upstream (150 ms) as queue until the stale raise re-takes the baseline, as without the gap', () => {
    const { after, snapshot } = afterIdle(150);
    expect(after[0]).toMatchObject({ from: 19, reason: 'queue-above-beta' });
    expect(after.find((change) => change.reason === 'baseline-raised')?.at).toBeCloseTo(112_800, -3);
    expect(snapshot).toMatchObject({ baselineMs: 150, baselineRaises: 1 });
  });
});

describe("the control loop: the overload cut's one-more rule (adr/0046)", () => {
  /**
   * Steering, then a healthy window with 34 in flight at the limit 34 (the limit it used to the
   * full), then a 2.1 s window of `answers` + 1 answers at 100 ms with a refusal after every fifth.
   */
  function cutAfterFullWindow(answers: number): number {
    const { controller, open } = steering();
    const end = feedWindows(controller, 1, open + 1, { inflight: 34 });
    expect(controller.snapshot().limit).toBe(38);
    for (let i = 1; i <= answers; i++) {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + (i * 2_000) / answers - 1, 34);
      if (i % 5 === 0) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, end + (i * 2_000) / answers, 34);
    }
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 2_100, 34);
    expect(controller.snapshot().lastChange?.reason).toBe('overload');
    return controller.limit;
  }

  it('cuts to the full window limit 34 when the overload window measured one less (693 / 2.1 s x 100 ms = 33)', () => {
    expect(cutAfterFullWindow(692)).toBe(34);
  });

  it('cuts to what the window measured when that is two less (672 / 2.1 s x 100 ms = 32)', () => {
    expect(cutAfterFullWindow(671)).toBe(32);
  });
});

describe('the control loop: a timeout that ran for the whole no-load latency is a reduce signal', () => {
  it('cuts on timeouts whose upstream run time equals the baseline (100 ms): they were not starved', () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    for (let i = 0; i < 50; i++) observeAt(controller, { verdict: 'timeout', latencyMs: 100 }, open + 1 + i * 40, 30);
    observeAt(controller, { verdict: 'timeout', latencyMs: 100 }, open + 2_101, 30);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.snapshot().estimate).toBeCloseTo(estimate * 0.81, 10);
  });

  it('cuts on the same timeouts settling after a mark (the full path of observe)', () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    for (let i = 0; i < 50; i++)
      observeAt(controller, { verdict: 'timeout', latencyMs: 100 }, open + 1 + i * 40, 30, true);
    observeAt(controller, { verdict: 'timeout', latencyMs: 100 }, open + 2_101, 30, true);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.snapshot().estimate).toBeCloseTo(estimate * 0.81, 10);
  });

  it('does not cut on timeouts of 99 ms settling after a mark: they waited in our queue', () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    for (let i = 0; i < 50; i++)
      observeAt(controller, { verdict: 'timeout', latencyMs: 99 }, open + 1 + i * 40, 30, true);
    observeAt(controller, { verdict: 'timeout', latencyMs: 99 }, open + 2_101, 30, true);
    expect(controller.snapshot().estimate).toBe(estimate);
  });
});

describe('the control loop: at-max names only a window that started at the ceiling', () => {
  it("names the window that climbs back to maxLimit by its own reason ('no-queue'), the next one 'at-max'", () => {
    const controller = loop({ maxLimit: 30 });
    let at = feedWindows(controller, 8, 0, { inflight: 30 });
    expect(controller.snapshot()).toMatchObject({ limit: 30, lastChange: { reason: 'at-max' } });
    const reasons: string[] = [];
    at = feedWindows(controller, 1, at, { inflight: 30, verdict: 'timeout', latencyMs: 5_000 });
    reasons.push(controller.snapshot().lastChange!.reason);
    for (let w = 0; w < 3; w++) {
      at = feedWindows(controller, 1, at, { inflight: 30 });
      reasons.push(controller.snapshot().lastChange!.reason);
    }
    // The window after the timeouts still holds the one that opened it: a small share, a small cut.
    expect(reasons).toEqual(['timeout', 'timeout', 'no-queue', 'at-max']);
    expect(controller.limit).toBe(30);
  });
});

describe('the control loop: tuning switches the ablation turns off (control-tuning.ts)', () => {
  it('vegas takes the baseline in the window mean (150 ms), gradient2 in its p90 (200 ms)', () => {
    const baselines: Record<string, number | undefined> = {};
    for (const algorithm of ['vegas', 'gradient2'] as const) {
      const controller = loop({ algorithm });
      // 30 in flight, answers alternating 100 and 200 ms, every 5 ms for 20 s.
      let n = 0;
      for (let t = 0; t < 20_000; t += 5)
        observeAt(controller, { verdict: 'ok', latencyMs: n++ % 2 ? 200 : 100 }, t, 30);
      baselines[algorithm] = controller.snapshot().baselineMs;
    }
    expect(baselines).toEqual({ vegas: 150, gradient2: 200 });
  });

  it('timeoutTail false cuts on a steady 1% of timeouts every window; the default stops once the tail is learnt', () => {
    const reasons: Record<string, string[]> = {};
    for (const timeoutTail of [true, false]) {
      const { controller, open } = steering({}, { timeoutTail });
      let at = open + 1;
      const seen: string[] = [];
      for (let w = 0; w < 12; w++) {
        for (let i = 0; i < 600; i++) {
          const timeout = i % 100 === 99; // 6 of 600 hit a 1 s deadline
          observeAt(
            controller,
            timeout ? { verdict: 'timeout', latencyMs: 1_000 } : { verdict: 'ok', latencyMs: 100 },
            at + (i * 2_000) / 600,
            30,
          );
        }
        at += 2_000;
        observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at, 30);
        at += 1;
        seen.push(controller.snapshot().lastChange!.reason);
      }
      reasons[String(timeoutTail)] = seen;
    }
    expect(reasons.false).toEqual(Array(12).fill('timeout'));
    // Learnt by the second window (the first weighs its 600 calls, adr/0108); growth then runs into
    // the app-limited ceiling (2 x 30).
    expect(reasons.true).toEqual(['timeout', ...Array(6).fill('no-queue'), ...Array(5).fill('app-limited')]);
  });

  it('jumpRestart false answers a 3x latency jump with a vegas shrink, not a drain and re-measure', () => {
    const outcomes: Record<string, unknown> = {};
    for (const jumpRestart of [true, false]) {
      const controller = loop({}, { jumpRestart });
      const settled = feedWindows(controller, 20, 0, { inflight: 30 }); // app-limited at 60
      const at = feedUntilClose(controller, settled, { inflight: 30 });
      feedWindows(controller, 1, at + 1, { inflight: 30, latencyMs: 300 });
      outcomes[String(jumpRestart)] = controller.snapshot().lastChange;
    }
    expect(outcomes.true).toMatchObject({ from: 60, to: 5, reason: 'baseline-raised' });
    expect(outcomes.false).toMatchObject({ from: 60, to: 42, reason: 'queue-above-beta' });
  });

  it('dither false admits the integer part every window: 7.5 admits 7, always', () => {
    const controller = loop({ algorithm: 'fixed', initialLimit: 7 }, { dither: false });
    controller.setLimit(7.5, 0);
    const limits: number[] = [];
    let at = 0;
    for (let w = 0; w < 4; w++) {
      at = feedWindows(controller, 1, at, { inflight: 7 });
      limits.push(controller.limit);
    }
    expect(limits).toEqual([7, 7, 7, 7]);
  });
});

/** `n` answers alternating `lo` and `hi` ms over `spanMs` from `from`, 30 in flight; returns the end. */
function alternating(controller: LimitControlLoop, from: number, n: number, lo: number, hi: number, spanMs: number) {
  for (let i = 0; i < n; i++) {
    observeAt(controller, { verdict: 'ok', latencyMs: i % 2 ? hi : lo }, from + (i * spanMs) / n, 30);
  }
  return from + spanMs;
}

describe("the control loop: the window's noise (adr/0036)", () => {
  it('takes a rise within noiseZ standard errors off the queue: 10 answers of 90/130 ms read a small queue', () => {
    const { controller, open } = steering();
    // Mean 110 ms, cv 0.19 over 11 samples: noise 0.058. Queue 34.9 x (1 - 100/110 - 0.058) = 1.2,
    // between alpha / 3 and alpha(34.9) = 1.8: grow by a step (3.2 without the noise: hold).
    const at = alternating(controller, open + 1, 10, 90, 130, 10_000);
    observeAt(controller, { verdict: 'ok', latencyMs: 110 }, at + 200, 30);
    expect(controller.snapshot().lastChange).toMatchObject({ from: 34, to: 36, reason: 'queue-below-alpha' });
  });

  /** Two windows of `n` answers alternating `lo`/`hi` (mean 95 ms) after steering; returns the baseline. */
  function afterTwoLowerWindows(n: number, lo: number, hi: number): number | undefined {
    const { controller, open } = steering();
    let at = open;
    for (let w = 0; w < 2; w++) {
      at = alternating(controller, at + 1, n, lo, hi, n < 50 ? 10_000 : 2_000);
      observeAt(controller, { verdict: 'ok', latencyMs: 95 }, at + 150, 30);
      at += 150;
    }
    // The median of (100, 95, 95) smoothed: 100 - 5 / 3 = 98.33 ms.
    expect(controller.snapshot().latencyMs).toBeCloseTo(98.33, 2);
    return controller.snapshot().baselineMs;
  }

  it('lowers the baseline to a lower smoothed latency, noisy or steady (85/105 and 94.9/95.1 ms; adr/0097)', () => {
    expect(afterTwoLowerWindows(10, 85, 105)).toBeCloseTo(98.33, 2);
    expect(afterTwoLowerWindows(60, 94.9, 95.1)).toBeCloseTo(98.33, 2);
  });
});

describe('the slow start: its exit test reads the spread it measured (adr/0045)', () => {
  it('exits later on a wider spread: peaks 49, 64, 84 for calls alternating 100/100, 80/120, 60/140 ms', () => {
    // 16 servers (processor sharing above 16 in flight), 400 callers. A steady upstream exits on
    // the startupThreshold rise (12.5%); a spread one needs startupNoiseZ standard errors of its
    // measured log spread as well, so it queues more before it can tell.
    const peaks: number[] = [];
    const drains: number[] = [];
    for (const [lo, hi] of [
      [100, 100],
      [80, 120],
      [60, 140],
    ] as const) {
      const controller = loop();
      const { changes } = runScripted({
        controller,
        durationMs: 4_000,
        clients: 400,
        call: ({ inflight, index }) => ({ latencyMs: (index % 2 ? hi : lo) * Math.max(1, inflight / 16) }),
      });
      const drain = changes.find((change) => change.reason === 'drain')!;
      peaks.push(drain.from);
      drains.push(drain.to);
    }
    expect(peaks).toEqual([49, 64, 84]);
    // The drain reads the cohorts that did not rise (adr/0096): 0.16 answers a ms x 100 ms x 0.5
    // whatever the spread (pooled with the risen ones, the wider spreads drained to 9 and 10).
    expect(drains).toEqual([8, 8, 8]);
  });
});
