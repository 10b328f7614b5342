import { describe, expect, it } from 'vitest';
import { defaultBeta, resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { TAIL_NOISE_Z, TimeoutTail } from '../../../src/limiter/timeout-tail';
import { feedUntilClose, feedWindows, observeAt } from './support/feed';

/**
 * adr/0037: a steady timeout share that arrives without a latency rise is the upstream's tail,
 * not saturation; only the timeouts beyond it (plus its Poisson noise) are reduce signals.
 */
describe('the expected timeout tail', () => {
  it('carries its provenance-documented constants: weight 0.1, cap 5%, the normal 99% quantile', () => {
    expect([DEFAULT_TUNING.tailWeight, DEFAULT_TUNING.tailCap, TAIL_NOISE_Z]).toEqual([0.1, 0.05, 2.326]);
  });

  it("averages its first ten windows (an EWMA's warm-up, adr/0099), then learns with weight 0.1", () => {
    const tail = new TimeoutTail();
    tail.learn(6, 600);
    expect(tail.share()).toBeCloseTo(0.01, 12); // 1% seen once is 1%, not 0.1% decayed from 0
    tail.learn(18, 600);
    expect(tail.share()).toBeCloseTo(0.02, 12); // the mean of 1% and 3%
    for (let i = 2; i < 10; i++) tail.learn(12, 600);
    expect(tail.share()).toBeCloseTo(0.02, 12); // ten windows averaging 2%
    tail.learn(0, 600);
    expect(tail.share()).toBeCloseTo(0.018, 12); // from the eleventh, weight 0.1: 2% - 0.1 x 2%
  });

  it('weighs a window by the calls it saw, not one share per window (adr/0108)', () => {
    // A drain's settling closes a window per round trip: a few calls each, most with no refusal.
    const tail = new TimeoutTail();
    for (let i = 0; i < 5; i++) tail.learn(0, 4);
    tail.learn(6, 300);
    // 6 of the 320 calls: 1.9%. The mean of the six windows' shares said 2% / 6 = 0.33%.
    expect(tail.share()).toBeCloseTo(6 / 320, 12);
    // Past the warm-up, the EWMAs of the counts: a 4-call window with none barely moves it.
    for (let i = 6; i < 10; i++) tail.learn(6, 300);
    const learnt = tail.share();
    expect(learnt).toBeCloseTo(30 / 1_520, 12);
    tail.learn(0, 4);
    expect(tail.share()).toBeCloseTo((0.9 * 3) / (0.9 * 152 + 0.4), 12);
    expect(tail.share() / learnt).toBeGreaterThan(0.99);
  });

  it('never excuses more than 5%, however long every call times out', () => {
    const tail = new TimeoutTail();
    for (let i = 0; i < 200; i++) tail.learn(600, 600);
    expect(tail.share()).toBeCloseTo(0.05, 8);
    expect(tail.share()).toBeLessThanOrEqual(0.05);
  });

  it("counts only the timeouts past the expected count's 99th percentile: at 1% of 600, from the 13th", () => {
    const tail = new TimeoutTail();
    tail.learn(10, 1_000); // 1%: expected 6 of 600, allowed 6 + 2.326 sqrt(6) + (2.326^2 - 1) / 6 = 12.44
    expect(tail.share()).toBe(0.01);
    const allowed = 6 + 2.326 * Math.sqrt(6) + (2.326 * 2.326 - 1) / 6;
    expect(tail.excess(12, 600)).toBe(0);
    expect(tail.excess(13, 600)).toBeCloseTo(13 - allowed, 12); // 0.56
    expect(tail.excess(120, 600)).toBeCloseTo(120 - allowed, 12); // 107.6: 18% of the window
  });

  it('cuts on a healthy tail about one window in a hundred or fewer, at any expected count (exact Poisson, adr/0100)', () => {
    // The chance that a Poisson count with mean `expected` has an excess; 2 sqrt(expected) alone let
    // through 6% at 0.4 expected and 10% at 0.1 (the counts a window of a few dozen answers sees).
    const falseExcess = (expected: number): number => {
      const tail = new TimeoutTail();
      tail.learn(expected, 1_000);
      expect(tail.share()).toBeCloseTo(expected / 1_000, 15);
      let chance = 0;
      let p = Math.exp(-expected);
      for (let k = 0; k < 400; k++) {
        if (tail.excess(k, 1_000) > 0) chance += p;
        p *= expected / (k + 1);
      }
      return chance;
    };
    for (const expected of [0.05, 0.1, 0.2, 0.4, 0.7, 1, 2, 5, 10, 20, 50]) {
      expect(falseExcess(expected), `expected ${expected}`).toBeLessThan(0.02);
    }
    expect(falseExcess(0.4)).toBeCloseTo(0.0079, 4); // 3 or more
  });

  it('excuses nothing before it has learnt anything (one timeout is a full signal, as before)', () => {
    const tail = new TimeoutTail();
    expect(tail.excess(1, 4)).toBe(1);
  });
});

/** One 2 s window at 100 ms with `inflight` calls in flight: `count` answers of which `timeouts` hit a 1 s deadline. */
function tailWindow(
  loop: LimitControlLoop,
  at: number,
  count: number,
  timeouts: number,
  inflight: number,
  latencyMs = 100,
): void {
  const step = 2_000 / count;
  const every = timeouts > 0 ? Math.floor(count / timeouts) : Infinity;
  for (let i = 0; i < count; i++) {
    const timeout = (i + 1) % every === 0 && Math.floor((i + 1) / every) <= timeouts;
    observeAt(
      loop,
      timeout ? { verdict: 'timeout', latencyMs: 1_000 } : { verdict: 'ok', latencyMs },
      at + i * step,
      inflight,
    );
  }
}

describe('the control loop with a steady 1% of timeouts on a healthy upstream (adr/0037)', () => {
  /**
   * Past its slow start with 30 calls in flight at 100 ms (baseline 100 ms), one steering window
   * grown by beta(31); a window opens at `at` - 1 and every `tailWindow` from `at` fills one.
   */
  function healthy(): { loop: LimitControlLoop; at: number } {
    const loop = new LimitControlLoop(resolveControlConfig({}));
    const start = feedWindows(loop, 2, 0, { inflight: 30 });
    const at = feedUntilClose(loop, start, { inflight: 30 }) + 1;
    expect(loop.snapshot().estimate).toBeCloseTo(31 + defaultBeta(31), 10);
    return { loop, at };
  }

  it('stops cutting once the tail is learnt, and grows again to the app-limited ceiling 2 x 30 = 60', () => {
    const { loop, at } = healthy();
    // A window closes at the first settle of the next one: `decided[w]` is the estimate after window w.
    const start = loop.snapshot().estimate;
    const decided: number[] = [];
    for (let w = 0; w < 41; w++) {
      tailWindow(loop, at + w * 2_000, 600, 6, 30);
      if (w > 0) decided.push(loop.snapshot().estimate);
    }
    // The first window cuts by x0.981 (6 of 601 answers, the next window's first settle closing it,
    // with nothing learnt: a tenth of the full x0.81 for a 1% share). That window weighs 600 calls
    // against the slow start's short rounds (adr/0108): from the second, 6 timeouts are within the
    // expected count's 99th percentile (0.37% learnt, ~2.2 expected: 2.2 + 2.326 sqrt(2.2) + 0.74 =
    // 6.4) and vegas grows on the healthy latency.
    expect(decided[0]).toBeCloseTo(start * (1 - 0.19 * (6 / 601 / 0.1)), 10);
    expect(decided[0]! / start).toBeGreaterThan(0.98);
    expect(Math.min(...decided)).toBe(decided[0]);
    expect(decided.slice(1, 8).every((estimate, w) => estimate > decided[w]!)).toBe(true);
    expect(loop.limit).toBe(60);
    expect(loop.snapshot().lastChange).toMatchObject({ reason: 'app-limited' });
  });

  it('still walks the limit to the floor on a steady 10% of timeouts (twice the 5% cap)', () => {
    const { loop, at } = healthy();
    // Each window excuses up to 5% of its calls (the cap, per window): the floor by the 45th window.
    // Uncapped, a window's 10% would be learnt and excused faster, and the floor come after 55.
    for (let w = 0; w < 50; w++) tailWindow(loop, at + w * 2_000, 600, 60, 30);
    expect(loop.limit).toBe(1);
  });

  it('still cuts by the full x0.81 when timeouts jump from the learnt 1% to 20% of a window', () => {
    const { loop, at } = healthy();
    for (let w = 0; w < 40; w++) tailWindow(loop, at + w * 2_000, 600, 6, 30);
    expect(loop.limit).toBe(60);
    const estimate = loop.snapshot().estimate;
    tailWindow(loop, at + 80_000, 600, 120, 30);
    tailWindow(loop, at + 82_000, 1, 0, 30); // closes the window
    expect(loop.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(loop.snapshot().estimate).toBeCloseTo(estimate * 0.81, 10);
  });

  it("does not learn timeouts that arrive with a latency rise: they are the queue's, and keep cutting", () => {
    const risen = healthy();
    const learnt = healthy();
    // Ten windows of the same 1% of timeouts: at 1.8x the baseline (risen: a queue, under the jump rule's 2x; nothing learnt), or at it.
    for (let w = 0; w < 10; w++) {
      tailWindow(risen.loop, risen.at + w * 2_000, 600, 6, 30, 180);
      tailWindow(learnt.loop, learnt.at + w * 2_000, 600, 6, 30, 100);
    }
    // Then one more such window at the baseline latency each.
    const before = [risen, learnt].map(({ loop, at }) => {
      tailWindow(loop, at + 20_000, 600, 6, 30, 100);
      const estimate = loop.snapshot().estimate;
      tailWindow(loop, at + 22_000, 1, 0, 30, 100); // closes the window
      return estimate;
    });
    // Unlearnt, the timeouts are counted in full: a cut of x0.981.
    expect(risen.loop.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(risen.loop.snapshot().estimate).toBeCloseTo(before[0]! * (1 - 0.19 * (6 / 600 / 0.1)), 10);
    // Learnt, they are the tail: no cut; the limit grew to the app-limited ceiling, 2 x 30, and holds it.
    expect(learnt.loop.snapshot().lastChange).toMatchObject({ reason: 'app-limited' });
    expect(learnt.loop.snapshot().lastChange?.direction).not.toBe('shrink');
    expect(learnt.loop.snapshot().estimate).toBe(60);
    expect(before[1]).toBe(60);
  });
});
