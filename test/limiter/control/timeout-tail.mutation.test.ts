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
    expect(tail.share).toBeCloseTo(0.02, 12);
  });
});
