import { describe, expect, it } from 'vitest';
import { createAimd } from '../../../src/limiter/algorithms/aimd';
import { PRESSURE_SATURATION, pressureMultiplier } from '../../../src/limiter/algorithms/algorithm';
import { createFixed } from '../../../src/limiter/algorithms/fixed';
import { createGradient2 } from '../../../src/limiter/algorithms/gradient2';
import { MIN_BASELINE_MS, createVegas, vegasLog, vegasUnit } from '../../../src/limiter/algorithms/vegas';
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

  it('uses the spec band alpha = 3 log10(L), beta = 6 log10(L) for large limits, narrower below ~115 (adr/0036)', () => {
    expect(vegasUnit(200)).toBeCloseTo(Math.log10(200), 10);
    expect(vegasUnit(150)).toBeCloseTo(Math.log10(150), 10);
    // (1/3) x (L / 10)^0.75: alpha 1 and beta 2 requests at L = 10, 1.68 and 3.36 at 20.
    expect(vegasUnit(10)).toBeCloseTo(1 / 3, 10);
    expect(vegasUnit(20)).toBeCloseTo(2 ** 0.75 / 3, 10);
    expect(vegasUnit(100)).toBeCloseTo(10 ** 0.75 / 3, 10); // 1.874 < log10(100) = 2
  });

  it('grows by beta = 6 log10(L) when there is no queue at all (queueUse <= log10 L)', () => {
    const d = decision();
    vegas.step(200, summary({ latencyMs: 100, baselineMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(200 + 6 * Math.log10(200), 10); // 213.806
    expect(d.reason).toBe('no-queue');
    // L = 20: beta = 6 x 0.5606 = 3.364.
    vegas.step(20, summary({ latencyMs: 100, baselineMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(20 + 2 * 2 ** 0.75, 10);
  });

  it('grows by log10(L) while queueUse is below alpha = 3 log10(L)', () => {
    const d = decision();
    // queueUse = 200 x (1 - 100/102) = 3.92: above log10(200) = 2.301, below alpha = 6.903.
    vegas.step(200, summary({ latencyMs: 102 }), d);
    expect(d.estimate).toBeCloseTo(200 + Math.log10(200), 10);
    expect(d.reason).toBe('queue-below-alpha');
  });

  it('holds while queueUse is between alpha and beta', () => {
    const d = decision();
    // queueUse = 200 x (1 - 100/105) = 9.52: between 6.903 and 13.806.
    vegas.step(200, summary({ latencyMs: 105 }), d);
    expect(d.estimate).toBe(200);
    expect(d.reason).toBe('queue-within-band');
  });

  it('shrinks by log10(L) when the queue is just past beta', () => {
    const d = decision();
    // queueUse = 200 x 8/108 = 14.81 > beta 13.806; half the excess (0.5) is less than 2.301.
    vegas.step(200, summary({ latencyMs: 108 }), d);
    expect(d.estimate).toBeCloseTo(200 - Math.log10(200), 10);
    expect(d.reason).toBe('queue-above-beta');
  });

  it('shrinks by half the excess queue when that is more than log10(L)', () => {
    const d = decision();
    // L = 100: queueUse = 50, beta = 6 x 1.874 = 11.247, cut = 0.5 x 38.75 = 19.38.
    vegas.step(100, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(100 - 0.5 * (50 - 2 * 10 ** 0.75), 10);
  });

  it('never cuts more than half the limit in one window, however far latency has risen', () => {
    const d = decision();
    // queueUse -> L as latency -> infinity: cut = 0.5 x (200 - 13.806) = 93.1 < 100.
    vegas.step(200, summary({ latencyMs: 1e9 }), d);
    expect(d.estimate).toBeGreaterThan(100);
    expect(d.estimate).toBeCloseTo(200 - 0.5 * (200 * (1 - 100 / 1e9) - 6 * Math.log10(200)), 6);
    // Even when the tail ratio would scale the estimate past L: no more can queue than are in flight.
    vegas.step(200, summary({ latencyMs: 1e9, tailRatio: 2 }), d);
    expect(d.estimate).toBeCloseTo(200 - 0.5 * (200 - 6 * Math.log10(200)), 6);
  });

  it('keeps alpha = 1 and beta = 2 requests at a limit of 10, not 3 and 6 (adr/0036)', () => {
    const d = decision();
    // L = 10, latency 110: queueUse = 0.909 > 1/3 (threshold), < 1 (alpha): +1.
    vegas.step(10, summary({ latencyMs: 110 }), d);
    expect(d).toEqual({ estimate: 11, reason: 'queue-below-alpha' });
    // Latency 120: queueUse = 1.667, inside [1, 2]: hold (the spec band would still grow here).
    vegas.step(10, summary({ latencyMs: 120 }), d);
    expect(d).toEqual({ estimate: 10, reason: 'queue-within-band' });
    // Latency 200: queueUse = 5 > beta 2: cut max(1, 0.5 x 3) = 1.5.
    vegas.step(10, summary({ latencyMs: 200 }), d);
    expect(d).toEqual({ estimate: 8.5, reason: 'queue-above-beta' });
  });

  it('grows a small limit by one request on fast growth, and at most doubles it', () => {
    const d = decision();
    vegas.step(2, summary({ latencyMs: 100 }), d);
    expect(d).toEqual({ estimate: 3, reason: 'no-queue' });
    vegas.step(1, summary({ latencyMs: 100 }), d);
    expect(d).toEqual({ estimate: 2, reason: 'no-queue' });
  });

  it("scales the queue by the window's p90 / mean (Little's law counts by the mean), capped at 2", () => {
    const d = decision();
    // L = 200, latency 105: 9.52 alone holds; x 1.5 = 14.29 > beta 13.806: shrink by a step.
    vegas.step(200, summary({ latencyMs: 105, tailRatio: 1.5 }), d);
    expect(d).toEqual({ estimate: 200 - Math.log10(200), reason: 'queue-above-beta' });
    // A window straddling two regimes reads 5; it counts as 2: 200 x 4/104 x 2 = 15.38.
    vegas.step(200, summary({ latencyMs: 104, tailRatio: 5 }), d);
    expect(d.estimate).toBeCloseTo(200 - Math.log10(200), 10);
  });

  it("does not count a rise within half a standard error of the window's p90 as a queue", () => {
    const d = decision();
    // Latency 105 is 4.76% above the baseline; noise 0.1 x 0.5 = 5%: no queue at all.
    vegas.step(200, summary({ latencyMs: 105, quantileNoise: 0.1 }), d);
    expect(d.reason).toBe('no-queue');
    // With a precise p90 (noise 0.01) the same latency holds in the band: 200 x (0.0476 - 0.005) = 8.5.
    vegas.step(200, summary({ latencyMs: 105, quantileNoise: 0.01 }), d);
    expect(d.reason).toBe('queue-within-band');
  });

  it('does not read a whole-ms clock as a queue: a 1 ms baseline and a steady 3 ms latency (Workers)', () => {
    const d = decision();
    // Before the floor this was queueUse = 9 x (1 - 1/3) = 6 > beta: vegas held a healthy upstream at 9.
    expect(MIN_BASELINE_MS).toBe(5);
    vegas.step(9, summary({ baselineMs: 1, latencyMs: 3 }), d);
    expect(d.reason).toBe('no-queue');
    expect(d.estimate).toBeGreaterThan(9);
    // A real rise past the floor still counts: 1 ms -> 50 ms reads as 9 x 0.9 = 8.1 queued.
    vegas.step(9, summary({ baselineMs: 1, latencyMs: 50 }), d);
    expect(d.reason).toBe('queue-above-beta');
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

  it('reports the latency ratio above which it shrinks: L / (L - beta)', () => {
    expect(vegas.shrinkRatio(200)).toBeCloseTo(200 / (200 - 6 * Math.log10(200)), 10);
    expect(vegas.shrinkRatio(20)).toBeCloseTo(20 / (20 - 2 * 2 ** 0.75), 10);
    expect(vegas.shrinkRatio(6)).toBeCloseTo(6 / (6 - 2 * 0.6 ** 0.75), 10);
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
