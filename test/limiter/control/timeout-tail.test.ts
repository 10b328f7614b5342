import { describe, expect, it } from 'vitest';
import { LimitControlLoop, resolveControlConfig } from '../../../src/limiter/control-loop';
import { TAIL_CAP, TAIL_NOISE_Z, TAIL_WEIGHT, TimeoutTail } from '../../../src/limiter/timeout-tail';
import { feedWindows } from './support/feed';

/**
 * adr/0037: a steady timeout share that arrives without a latency rise is the upstream's tail,
 * not saturation; only the timeouts beyond it (plus its Poisson noise) are reduce signals.
 */
describe('the expected timeout tail', () => {
  it('carries its provenance-documented constants: weight 0.1, cap 5%, 2 standard deviations', () => {
    expect([TAIL_WEIGHT, TAIL_CAP, TAIL_NOISE_Z]).toEqual([0.1, 0.05, 2]);
  });

  it('learns a window share with weight 0.1: 1% seen once is 0.1%, ten times is 0.65%', () => {
    const tail = new TimeoutTail();
    tail.learn(6, 600);
    expect(tail.share).toBeCloseTo(0.001, 12);
    for (let i = 1; i < 10; i++) tail.learn(6, 600);
    expect(tail.share).toBeCloseTo(0.01 * (1 - 0.9 ** 10), 12); // 0.006513
  });

  it('never excuses more than 5%, however long every call times out', () => {
    const tail = new TimeoutTail();
    for (let i = 0; i < 200; i++) tail.learn(600, 600);
    expect(tail.share).toBeCloseTo(0.05, 8);
    expect(tail.share).toBeLessThanOrEqual(0.05);
  });

  it('counts only the timeouts past the expected count plus 2 sqrt(expected): at 1% of 600, from the 11th', () => {
    const tail = new TimeoutTail();
    tail.share = 0.01; // expected 6, allowed 6 + 2 sqrt(6) = 10.90
    expect(tail.excess(10, 600)).toBe(0);
    expect(tail.excess(12, 600)).toBeCloseTo(12 - 6 - 2 * Math.sqrt(6), 12); // 1.101
    expect(tail.excess(120, 600)).toBeCloseTo(120 - 6 - 2 * Math.sqrt(6), 12); // 109.1: 18% of the window
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
    loop.observe(
      timeout ? { verdict: 'timeout', latencyMs: 1_000 } : { verdict: 'ok', latencyMs },
      at + i * step,
      inflight,
    );
  }
}

describe('the control loop with a steady 1% of timeouts on a healthy upstream (adr/0037)', () => {
  function healthy(): { loop: LimitControlLoop; at: number } {
    const loop = new LimitControlLoop(resolveControlConfig({}));
    const at = feedWindows(loop, 4, 0, { inflight: 30 }); // baseline 100 ms, limit 20 -> 23 -> 27
    return { loop, at };
  }

  it('stops cutting once the tail is learnt, and grows again to the app-limited ceiling 2 x 30 = 60', () => {
    const { loop, at } = healthy();
    const limits: number[] = [loop.limit];
    for (let w = 0; w < 40; w++) {
      tailWindow(loop, at + w * 2_000, 600, 6, 30);
      limits.push(loop.limit);
    }
    // The first windows still cut (x0.981 for 6 of 600 with nothing learnt), then the tail
    // excuses them and vegas grows on the healthy latency.
    // Seven windows cut by ~x0.98 each while the tail is learnt (27 -> 25); from the eighth, 6
    // timeouts are within the expected 3.1 + 2 sqrt(3.1) and vegas grows on the healthy latency.
    expect(limits.slice(0, 10)).toEqual([27, 27, 26, 26, 26, 25, 25, 25, 29, 34]);
    expect(Math.min(...limits)).toBe(25);
    expect(loop.limit).toBe(60);
    expect(loop.snapshot().lastChange).toMatchObject({ reason: 'app-limited' });
  });

  it('still walks the limit to the floor on a steady 10% of timeouts (twice the 5% cap): 27 -> 4', () => {
    const { loop, at } = healthy();
    for (let w = 0; w < 40; w++) tailWindow(loop, at + w * 2_000, 600, 60, 30);
    expect(loop.limit).toBe(4);
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
    // Ten windows of the same 1% of timeouts: at 3x the baseline (risen, nothing learnt), or at it.
    for (let w = 0; w < 10; w++) {
      tailWindow(risen.loop, risen.at + w * 2_000, 600, 6, 30, 300);
      tailWindow(learnt.loop, learnt.at + w * 2_000, 600, 6, 30, 100);
    }
    // Then one more such window at the baseline latency each.
    for (const { loop, at } of [risen, learnt]) {
      tailWindow(loop, at + 20_000, 600, 6, 30, 100);
      tailWindow(loop, at + 22_000, 1, 0, 30, 100); // closes the window
    }
    // Unlearnt, the timeouts are counted in full: a cut of x0.976.
    expect(risen.loop.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(risen.loop.snapshot().estimate).toBeCloseTo(23.55, 2);
    // Learnt, they are the tail: vegas decides on latency.
    expect(learnt.loop.snapshot().lastChange).toMatchObject({ direction: 'grow', reason: 'no-queue' });
  });
});
