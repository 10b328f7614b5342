import { describe, expect, it } from 'vitest';
import { createGradient2 } from '../../../src/limiter/algorithms/gradient2';
import { decision, summary } from './support/summary';

/** Edges of the limit algorithms that mutation testing found unpinned (docs/testing.md). */
describe('gradient2 step: edges', () => {
  it('reads a 0 ms latency as within tolerance (no division by zero): grows by sqrt(L) x 0.2', () => {
    const out = decision();
    createGradient2({ rttTolerance: 1.5, smoothing: 0.2 }).step(100, summary({ latencyMs: 0, baselineMs: 0 }), out);
    expect(out).toEqual({ estimate: 102, reason: 'latency-within-tolerance' });
  });
});
