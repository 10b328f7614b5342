import { describe, expect, it } from 'vitest';
import { TimeoutTail } from '../../../src/limiter/timeout-tail';

/** Edges of the expected timeout tail (adr/0037) that mutation testing found unpinned (docs/testing.md). */
describe('the expected timeout tail: edges', () => {
  it('learns nothing from a window that reached nobody (no share of nothing)', () => {
    const tail = new TimeoutTail();
    tail.learn(6, 600);
    tail.learn(0, 0);
    tail.learn(18, 600);
    // The empty window neither moved the share nor counted as one: the mean of 1% and 3%.
    expect(tail.share()).toBeCloseTo(0.02, 12);
  });

  it('does not count a window that reached nobody towards the warm-up either', () => {
    // Nine empty windows counted would end the warm-up: the next window would weigh 0.1, not 1/2,
    // and the share read (0.6 + 0.1 x 17.4) / (60 + 54) = 2.05%, not (6 + 18) / 1 200 = 2%.
    const tail = new TimeoutTail();
    tail.learn(6, 600);
    for (let i = 0; i < 9; i++) tail.learn(0, 0);
    tail.learn(18, 600);
    expect(tail.share()).toBeCloseTo(0.02, 12);
  });
});
