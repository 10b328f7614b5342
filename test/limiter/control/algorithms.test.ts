import { describe, expect, it } from 'vitest';
import { createAimd } from '../../../src/limiter/algorithms/aimd';
import { PRESSURE_SATURATION, pressureMultiplier } from '../../../src/limiter/algorithms/algorithm';
import { createFixed } from '../../../src/limiter/algorithms/fixed';
import { createGradient2 } from '../../../src/limiter/algorithms/gradient2';
import { createVegas, vegasLog } from '../../../src/limiter/algorithms/vegas';
import { decision, summary } from './support/summary';

// The defaults the control loop builds them with: backoffRatio 0.9, timeouts 0.9^2.
const vegas = createVegas({ overloadBackoff: 0.9, timeoutBackoff: 0.81 });
const gradient2 = createGradient2({ rttTolerance: 1.5, smoothing: 0.2, overloadBackoff: 0.9, timeoutBackoff: 0.81 });
const aimd = createAimd({ backoffRatio: 0.9 });
const fixed = createFixed();

describe('vegas step', () => {
  it('floors log10(L) at 1, as Netflix Log10RootFunction does, and stays continuous above 10', () => {
    expect(vegasLog(4)).toBe(1);
    expect(vegasLog(10)).toBe(1);
    expect(vegasLog(20)).toBeCloseTo(1.30103, 5);
    expect(vegasLog(200)).toBeCloseTo(2.30103, 5);
  });

  it('grows by beta = 6 log10(L) when there is no queue at all (queueUse <= log10 L)', () => {
    const d = decision();
    vegas.step(20, summary({ latencyMs: 100, baselineMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(20 + 6 * Math.log10(20), 10); // 27.80618
    expect(d.reason).toBe('no-queue');
  });

  it('grows by log10(L) while queueUse is below alpha = 3 log10(L)', () => {
    const d = decision();
    // queueUse = 20 x (1 - 100/110) = 1.818: above log10(20) = 1.301, below alpha = 3.903.
    vegas.step(20, summary({ latencyMs: 110 }), d);
    expect(d.estimate).toBeCloseTo(21.30103, 5);
    expect(d.reason).toBe('queue-below-alpha');
  });

  it('holds while queueUse is between alpha and beta', () => {
    const d = decision();
    // queueUse = 20 x (1 - 100/125) = 4: between 3.903 and 7.806.
    vegas.step(20, summary({ latencyMs: 125 }), d);
    expect(d.estimate).toBe(20);
    expect(d.reason).toBe('queue-within-band');
  });

  it('shrinks by log10(L) when the queue is just past beta', () => {
    const d = decision();
    // queueUse = 10 > beta 7.806; half the excess (1.097) is less than log10(20) = 1.301.
    vegas.step(20, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(18.69897, 5);
    expect(d.reason).toBe('queue-above-beta');
  });

  it('shrinks by half the excess queue when that is more than log10(L)', () => {
    const d = decision();
    // L = 100: queueUse = 50, beta = 12, cut = 0.5 x 38 = 19.
    vegas.step(100, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(81, 10);
  });

  it('never cuts more than half the limit in one window, however far latency has risen', () => {
    const d = decision();
    // queueUse -> L as latency -> infinity: cut = 0.5 x (200 - 13.806) = 93.1 < 100.
    vegas.step(200, summary({ latencyMs: 1e9 }), d);
    expect(d.estimate).toBeGreaterThan(100);
    expect(d.estimate).toBeCloseTo(200 - 0.5 * (200 * (1 - 100 / 1e9) - 6 * Math.log10(200)), 6);
  });

  it('uses alpha = 3 and beta = 6 requests below a limit of 10', () => {
    const d = decision();
    // L = 5, latency 150: queueUse = 5 x 1/3 = 1.667 > 1 (threshold), < 3 (alpha): +1.
    vegas.step(5, summary({ latencyMs: 150 }), d);
    expect(d).toEqual({ estimate: 6, reason: 'queue-below-alpha' });
    // L = 7, latency 10x: queueUse = 6.3 > beta 6: shrink by 1.
    vegas.step(7, summary({ latencyMs: 1_000 }), d);
    expect(d).toEqual({ estimate: 6, reason: 'queue-above-beta' });
  });

  it('at most doubles a small limit on fast growth (beta = 6 would take 2 to 8)', () => {
    const d = decision();
    vegas.step(2, summary({ latencyMs: 100 }), d);
    expect(d).toEqual({ estimate: 4, reason: 'no-queue' });
  });

  it('treats a latency below the baseline as no queue', () => {
    const d = decision();
    vegas.step(20, summary({ latencyMs: 80 }), d);
    expect(d.reason).toBe('no-queue');
  });

  it('holds while the baseline is unknown (warming up)', () => {
    const d = decision();
    vegas.step(20, summary({ baselineMs: Number.NaN }), d);
    expect(d).toEqual({ estimate: 20, reason: 'warming-up' });
  });

  it('backs off by 0.9 on a window with 10% overloads, whatever the latency says', () => {
    const d = decision();
    vegas.step(20, summary({ samples: 90, overloads: 10 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    expect(d.reason).toBe('overload');
  });

  it('backs off by 0.81 on a window with 10% timeouts, the strongest signal', () => {
    const d = decision();
    vegas.step(20, summary({ samples: 90, timeouts: 10 }), d);
    expect(d.estimate).toBeCloseTo(16.2, 10);
    expect(d.reason).toBe('timeout');
  });

  it('scales the backoff with the share of overloads below 10% (one 429 in 100: x0.99)', () => {
    const d = decision();
    vegas.step(20, summary({ samples: 99, overloads: 1 }), d);
    expect(d.estimate).toBeCloseTo(19.8, 10);
    expect(PRESSURE_SATURATION).toBe(0.1);
  });

  it('applies the stronger of the two cuts and names it', () => {
    const d = decision();
    // overloads 10% -> cut 0.1; timeouts 1% -> cut 0.019.
    vegas.step(20, summary({ samples: 89, overloads: 10, timeouts: 1 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    expect(d.reason).toBe('overload');
    expect(pressureMultiplier(summary({ samples: 89, overloads: 10, timeouts: 1 }), 0.9, 0.81)).toBeCloseTo(0.9, 10);
  });

  it('reports the latency ratio above which it shrinks: L / (L - beta), never when beta >= L', () => {
    expect(vegas.shrinkRatio(100)).toBeCloseTo(100 / 88, 10);
    expect(vegas.shrinkRatio(7)).toBe(7);
    expect(vegas.shrinkRatio(6)).toBe(Infinity);
  });
});

describe('gradient2 step', () => {
  it('grows by sqrt(L), smoothed by 0.2, while latency is within 1.5x the baseline', () => {
    const d = decision();
    // gradient = min(1, 1.5 x 100/100) = 1; target = 20 + sqrt(20) = 24.472; 0.8 x 20 + 0.2 x target.
    gradient2.step(20, summary({ latencyMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(20.894427, 6);
    expect(d.reason).toBe('latency-within-tolerance');
  });

  it('moves by gradient x L + sqrt(L) when latency is past the tolerance', () => {
    const d = decision();
    // gradient = 1.5 x 100/200 = 0.75; target = 15 + 4.472 = 19.472; next = 16 + 3.894 = 19.894.
    gradient2.step(20, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(19.894427, 6);
    expect(d.reason).toBe('latency-above-tolerance');
  });

  it('clamps the gradient at 0.5', () => {
    const d = decision();
    // gradient = 0.15 -> 0.5; target = 10 + 4.472; next = 16 + 2.894 = 18.894.
    gradient2.step(20, summary({ latencyMs: 1000 }), d);
    expect(d.estimate).toBeCloseTo(18.894427, 6);
  });

  it('applies smoothing as given (1 takes the target as is)', () => {
    const unsmoothed = createGradient2({ rttTolerance: 1.5, smoothing: 1, overloadBackoff: 0.9, timeoutBackoff: 0.81 });
    const d = decision();
    unsmoothed.step(20, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(15 + Math.sqrt(20), 10);
  });

  it('backs off on overloads and holds while warming up, like vegas', () => {
    const d = decision();
    gradient2.step(20, summary({ samples: 90, overloads: 10 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    gradient2.step(20, summary({ baselineMs: Number.NaN }), d);
    expect(d).toEqual({ estimate: 20, reason: 'warming-up' });
  });

  it('reports the latency ratio above which it shrinks: tolerance / (1 - 1 / sqrt(L))', () => {
    expect(gradient2.shrinkRatio(100)).toBeCloseTo(1.5 / 0.9, 10);
    expect(gradient2.shrinkRatio(1)).toBe(Infinity);
  });
});

describe('aimd step', () => {
  it('adds one on a healthy window, whatever the latency', () => {
    const d = decision();
    aimd.step(20, summary({ latencyMs: 10_000 }), d);
    expect(d).toEqual({ estimate: 21, reason: 'healthy-window' });
  });

  it('backs off by 0.9 on overloads and on timeouts alike (Netflix AIMDLimit)', () => {
    const d = decision();
    aimd.step(20, summary({ samples: 90, overloads: 10 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    aimd.step(20, summary({ samples: 90, timeouts: 10 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    expect(d.reason).toBe('timeout');
  });

  it('holds on a window without latency samples', () => {
    const d = decision();
    aimd.step(20, summary({ samples: 0, failures: 5 }), d);
    expect(d).toEqual({ estimate: 20, reason: 'no-samples' });
  });

  it('never shrinks on latency', () => {
    expect(aimd.shrinkRatio(20)).toBe(Infinity);
  });
});

describe('fixed step', () => {
  it('holds whatever the window says', () => {
    const d = decision();
    fixed.step(20, summary({ samples: 50, timeouts: 50, latencyMs: 1e6 }), d);
    expect(d).toEqual({ estimate: 20, reason: 'fixed' });
    expect(fixed.shrinkRatio(20)).toBe(Infinity);
  });
});
