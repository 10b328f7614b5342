import { describe, expect, it } from 'vitest';
import { createAimd } from '../../../src/limiter/algorithms/aimd';
import { createGradient2 } from '../../../src/limiter/algorithms/gradient2';
import { createVegas, queueEstimate, type VegasSettings } from '../../../src/limiter/algorithms/vegas';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { decision, summary } from './support/summary';

/** Edges of the limit algorithms that mutation testing found unpinned (docs/testing.md). */
describe('gradient2 step: edges', () => {
  it('reads a 0 ms latency as within tolerance (no division by zero): grows by sqrt(L) x 0.2', () => {
    const out = decision();
    createGradient2({ rttTolerance: 1.5, smoothing: 0.2, minBaselineMs: 5 }).step(
      100,
      summary({ latencyMs: 0, baselineMs: 0 }),
      out,
    );
    expect(out).toEqual({ estimate: 102, reason: 'latency-within-tolerance' });
  });
});

describe('gradient2 step: a limit the headroom exactly balances', () => {
  it('holds L = 4 at the 0.5 gradient floor (0.5 x 4 + sqrt 4 = 4) and calls it latency-above-tolerance', () => {
    const out = decision();
    createGradient2({ rttTolerance: 1.5, smoothing: 0.2, minBaselineMs: 5 }).step(
      4,
      summary({ latencyMs: 1_000 }),
      out,
    );
    expect(out).toEqual({ estimate: 4, reason: 'latency-above-tolerance' });
  });
});

/** Vegas with a user band: exact queue figures at L = 10, baseline 50 ms, latency 100 ms (queue 5). */
function vegasWith(alpha: number, beta: number, overrides: Partial<VegasSettings> = {}) {
  return createVegas({
    alpha: () => alpha,
    beta: () => beta,
    excessQueueGain: 0.5,
    noQueueJump: true,
    stepCap: 1,
    minBaselineMs: 5,
    ...overrides,
  });
}

describe('vegas step: the band at its edges', () => {
  it('holds with the queue exactly at alpha (5 of alpha 5, beta 10)', () => {
    const out = decision();
    vegasWith(5, 10).step(10, summary({ baselineMs: 50, latencyMs: 100 }), out);
    expect(out).toEqual({ estimate: 10, reason: 'queue-within-band' });
  });

  it('holds with the queue exactly at beta (5 of alpha 2, beta 5)', () => {
    const out = decision();
    vegasWith(2, 5).step(10, summary({ baselineMs: 50, latencyMs: 100 }), out);
    expect(out).toEqual({ estimate: 10, reason: 'queue-within-band' });
  });

  it('takes a band of alpha = beta as valid: a queue of 5 over 2 shrinks', () => {
    const out = decision();
    vegasWith(2, 2).step(10, summary({ baselineMs: 50, latencyMs: 100 }), out);
    expect(out).toEqual({ estimate: 8.5, reason: 'queue-above-beta' });
  });

  it('takes a band of 0: no queue at all still grows (queue 0 <= alpha / 3 = 0)', () => {
    const out = decision();
    vegasWith(0, 0).step(10, summary({ baselineMs: 100, latencyMs: 100 }), out);
    expect(out.reason).toBe('no-queue');
  });

  it('grows a no-queue window by at most the limit itself: L = 1 with beta 6 doubles to 2', () => {
    const out = decision();
    vegasWith(3, 6).step(1, summary({ baselineMs: 100, latencyMs: 100 }), out);
    expect(out).toEqual({ estimate: 2, reason: 'no-queue' });
  });

  it('counts a queue of 5 at L = 10 and half the latency as baseline: over beta 4, one step down', () => {
    const out = decision();
    vegasWith(2, 4).step(10, summary({ baselineMs: 50, latencyMs: 100 }), out);
    expect(out).toEqual({ estimate: 9, reason: 'queue-above-beta' });
  });

  it('steers on a 0 ms latency and a 0 ms baseline (a virtual clock): no queue, not warming up', () => {
    const out = decision();
    vegasWith(3, 6).step(10, summary({ baselineMs: 0, latencyMs: 0 }), out);
    expect(out.reason).toBe('no-queue');
  });

  it('reads a 0 ms baseline as known: a 100 ms latency against the 5 ms floor is a queue', () => {
    const out = decision();
    vegasWith(3, 6).step(10, summary({ baselineMs: 0, latencyMs: 100 }), out);
    expect(out.reason).toBe('queue-above-beta');
  });

  it('estimates no queue from a negative latency', () => {
    expect(queueEstimate(10, 100, -1)).toBe(0);
  });
});

describe('aimd step: a tie', () => {
  it('names a window with as many timeouts as overloads a timeout', () => {
    const out = decision();
    createAimd({ backoffRatio: 0.9 }).step(20, summary({ samples: 80, overloads: 10, timeouts: 10 }), out);
    expect(out.reason).toBe('timeout');
    expect(out.estimate).toBeCloseTo(18, 10);
  });
});

describe('the algorithms: names in the snapshot', () => {
  it.each(['vegas', 'gradient2', 'aimd', 'fixed'] as const)('reports %s', (algorithm) => {
    expect(new LimitControlLoop(resolveControlConfig({ algorithm })).snapshot().algorithm).toBe(algorithm);
  });
});
