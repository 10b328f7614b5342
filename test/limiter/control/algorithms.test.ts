import { describe, expect, it } from 'vitest';
import { createAimd } from '../../../src/limiter/algorithms/aimd';
import { PRESSURE_SATURATION, backoffFor } from '../../../src/limiter/algorithms/algorithm';
import { createFixed } from '../../../src/limiter/algorithms/fixed';
import { createGradient2 } from '../../../src/limiter/algorithms/gradient2';
import { createVegas, queueEstimate, vegasLog, type VegasSettings } from '../../../src/limiter/algorithms/vegas';
import { defaultAlpha, defaultBeta } from '../../../src/limiter/control-config';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { decision, summary } from './support/summary';

// The settings the control loop builds vegas with by default (control-loop.ts, control-tuning.ts).
const VEGAS: VegasSettings = {
  alpha: defaultAlpha,
  beta: defaultBeta,
  excessQueueGain: DEFAULT_TUNING.excessQueueGain,
  noQueueJump: DEFAULT_TUNING.noQueueJump,
  stepCap: DEFAULT_TUNING.stepCap,
  minBaselineMs: DEFAULT_TUNING.minBaselineMs,
};
const vegas = createVegas(VEGAS);

/** The latency at which vegas counts `queued` requests at limit L over a 100 ms baseline (no tail, no noise). */
function latencyFor(limit: number, queued: number): number {
  return 100 / (1 - queued / limit);
}
const gradient2 = createGradient2({ rttTolerance: 1.5, smoothing: 0.2, minBaselineMs: 5 });
const aimd = createAimd({ backoffRatio: 0.9 });
const fixed = createFixed();

describe('the algorithms: who owns the reduce signals', () => {
  it('marks vegas and gradient2 latency-driven (the loop applies overload and timeout cuts) and aimd and fixed not', () => {
    expect([vegas, gradient2, aimd, fixed].map((a) => [a.name, a.latencyDriven])).toEqual([
      ['vegas', true],
      ['gradient2', true],
      ['aimd', false],
      ['fixed', false],
    ]);
  });

  it('scales a backoff with the share of the window it takes, full from 10% (adr/0035)', () => {
    expect(PRESSURE_SATURATION).toBe(0.1);
    expect(backoffFor(0, 100, 0.9)).toBe(1);
    expect(backoffFor(10, 100, 0.9)).toBeCloseTo(0.9, 12);
    expect(backoffFor(100, 100, 0.81)).toBeCloseTo(0.81, 12);
    expect(backoffFor(1, 100, 0.9)).toBeCloseTo(0.99, 12); // one 429 in 100
    expect(backoffFor(5, 100, 0.81)).toBeCloseTo(1 - 0.19 * 0.5, 12);
    expect(backoffFor(1, 0, 0.9)).toBeCloseTo(0.9, 12); // no answers counted: the one signal is all of it
  });
});

describe('vegas step', () => {
  it('floors log10(L) at 1, as Netflix Log10RootFunction does, and stays continuous above 10', () => {
    expect(vegasLog(4)).toBe(1);
    expect(vegasLog(10)).toBe(1);
    expect(vegasLog(20)).toBeCloseTo(1.30103, 5);
    expect(vegasLog(200)).toBeCloseTo(2.30103, 5);
  });

  it('estimates the queue as L x (1 - baseline / latency - noise), at most L', () => {
    expect(queueEstimate(200, 100, 105)).toBeCloseTo(200 * (5 / 105), 12);
    expect(queueEstimate(200, 100, 105, 0.01)).toBeCloseTo(200 * (5 / 105 - 0.01), 12);
    expect(queueEstimate(200, 100, 1e9)).toBeCloseTo(200 * (1 - 100 / 1e9), 12);
    expect(queueEstimate(200, 100, 1e9, -1)).toBe(200);
    expect(queueEstimate(200, 100, 90)).toBe(0);
    expect(queueEstimate(200, 100, Number.NaN)).toBe(0);
  });

  it('grows by beta when there is no queue at all (queueUse <= alpha / 3)', () => {
    const d = decision();
    vegas.step(200, summary({ latencyMs: 100, baselineMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(200 + defaultBeta(200), 10);
    expect(d.reason).toBe('no-queue');
    vegas.step(20, summary({ latencyMs: latencyFor(20, defaultAlpha(20) / 4) }), d);
    expect(d.estimate).toBeCloseTo(20 + defaultBeta(20), 10);
    expect(d.reason).toBe('no-queue');
  });

  it('grows by step = min(alpha, log10 L) while queueUse is below alpha', () => {
    const d = decision();
    vegas.step(200, summary({ latencyMs: latencyFor(200, defaultAlpha(200) / 2) }), d);
    expect(d.estimate).toBeCloseTo(200 + Math.log10(200), 10); // log10 200 = 2.30 < alpha(200)
    expect(d.reason).toBe('queue-below-alpha');
    vegas.step(10, summary({ latencyMs: latencyFor(10, defaultAlpha(10) / 2) }), d);
    expect(d.estimate).toBeCloseTo(10 + defaultAlpha(10), 10); // alpha(10) < log10 10 = 1
  });

  it('holds while queueUse is between alpha and beta', () => {
    const d = decision();
    vegas.step(200, summary({ latencyMs: latencyFor(200, (defaultAlpha(200) + defaultBeta(200)) / 2) }), d);
    expect(d).toEqual({ estimate: 200, reason: 'queue-within-band' });
  });

  it('shrinks by a step when the queue is just past beta', () => {
    const d = decision();
    // Half of an excess of one request is less than the step of 2.30.
    vegas.step(200, summary({ latencyMs: latencyFor(200, defaultBeta(200) + 1) }), d);
    expect(d.estimate).toBeCloseTo(200 - Math.log10(200), 10);
    expect(d.reason).toBe('queue-above-beta');
  });

  it('shrinks by half the excess queue when that is more than a step', () => {
    const d = decision();
    // L = 100, latency 200 ms over 100: queueUse = 50, cut = 0.5 x (50 - beta(100)).
    vegas.step(100, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(100 - 0.5 * (50 - defaultBeta(100)), 10);
  });

  it('never cuts more than half the limit in one window, however far latency has risen', () => {
    const d = decision();
    // queueUse -> L as latency -> infinity: cut = 0.5 x (200 - beta(200)) < 100.
    vegas.step(200, summary({ latencyMs: 1e9 }), d);
    expect(d.estimate).toBeGreaterThan(100);
    expect(d.estimate).toBeCloseTo(200 - 0.5 * (200 * (1 - 100 / 1e9) - defaultBeta(200)), 6);
  });

  it('keeps about one request queued at a limit of 10, not 3 to 6 (adr/0036, adr/0049)', () => {
    const d = decision();
    expect(defaultBeta(10)).toBeLessThan(2);
    // 2 requests queued at L = 10: inside Netflix's band (3 to 6, it would grow), past ours: cut
    // by a step of alpha(10) (half the excess is less).
    vegas.step(10, summary({ latencyMs: latencyFor(10, 2) }), d);
    expect(d.reason).toBe('queue-above-beta');
    expect(d.estimate).toBeCloseTo(10 - Math.max(defaultAlpha(10), 0.5 * (2 - defaultBeta(10))), 10);
    // 5 queued (latency 200 ms): cut max(step, 0.5 x (5 - beta)).
    vegas.step(10, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(10 - 0.5 * (5 - defaultBeta(10)), 10);
  });

  it('grows by beta per window floor the window lasted when nothing queues, at most doubling (adr/0090)', () => {
    const d = decision();
    // A window that waited three floors for its samples grows three betas...
    vegas.step(40, summary({ latencyMs: 100, floorSpans: 3 }), d);
    expect(d).toEqual({ estimate: 40 + 3 * defaultBeta(40), reason: 'no-queue' });
    // ...one at its floor one beta, as before...
    vegas.step(40, summary({ latencyMs: 100, floorSpans: 1 }), d);
    expect(d.estimate).toBeCloseTo(40 + defaultBeta(40), 10);
    // ...and one of fifty floors (a stream's 30 s window of 280 ms calls) at most doubles.
    vegas.step(40, summary({ latencyMs: 100, floorSpans: 50 }), d);
    expect(d.estimate).toBe(80);
    // Only the no-queue branch scales: room to grow is one step, whatever the window's length.
    vegas.step(40, summary({ latencyMs: latencyFor(40, defaultAlpha(40) / 2), floorSpans: 50 }), d);
    expect(d).toEqual({ estimate: 40 + Math.min(defaultAlpha(40), vegasLog(40)), reason: 'queue-below-alpha' });
  });

  it('grows a small limit by a fraction of a request, as its band is (one of 50 clients at L = 1-2)', () => {
    const d = decision();
    // beta(2) and beta(1) are fractions of a request; at most doubling.
    expect(defaultBeta(2)).toBeLessThan(1);
    vegas.step(2, summary({ latencyMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(2 + defaultBeta(2), 10);
    expect(d.reason).toBe('no-queue');
    vegas.step(1, summary({ latencyMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(1 + defaultBeta(1), 10);
    // With room to grow, a step of alpha(1), a quarter of a request.
    vegas.step(1, summary({ latencyMs: latencyFor(1, defaultAlpha(1) / 2) }), d);
    expect(d.estimate).toBeCloseTo(1 + defaultAlpha(1), 10);
    expect(d.reason).toBe('queue-below-alpha');
  });

  it("does not count a rise within the window's noise as a queue", () => {
    const d = decision();
    // Latency 105 is 4.76% above the baseline; a noise of 5% covers it: no queue at all.
    vegas.step(200, summary({ latencyMs: 105, meanNoise: 0.05 }), d);
    expect(d.reason).toBe('no-queue');
    // Without the noise it is 200 x 0.0476 = 9.5 requests queued, inside the band; 1% of noise
    // takes 2 of them off, and it still is.
    expect(defaultAlpha(200) < 7.5 && defaultBeta(200) > 9.6).toBe(true);
    vegas.step(200, summary({ latencyMs: 105, meanNoise: 0.01 }), d);
    expect(d.reason).toBe('queue-within-band');
  });

  it('does not read a whole-ms clock as a queue: a 1 ms baseline and a steady 3 ms latency (Workers)', () => {
    const d = decision();
    // Before the floor this was queueUse = 9 x (1 - 1/3) = 6 > beta: vegas held a healthy upstream at 9.
    expect(DEFAULT_TUNING.minBaselineMs).toBe(5);
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

  it('holds on a band a user function got wrong: NaN, beta below alpha, an infinite beta', () => {
    for (const band of [
      { alpha: () => Number.NaN, beta: () => 2 },
      { alpha: () => 3, beta: () => 2 },
      { alpha: () => 1, beta: () => Infinity },
      { alpha: () => -1, beta: () => 2 },
    ]) {
      // A fresh decision each time: one the previous band wrote would pass even if step wrote nothing.
      const d = decision();
      createVegas({ ...VEGAS, ...band }).step(20, summary({ latencyMs: 200 }), d);
      expect(d).toEqual({ estimate: 20, reason: 'invalid-band' });
    }
  });

  it("takes Netflix's one-request steps with stepCap 0, and a step instead of beta with noQueueJump off", () => {
    const d = decision();
    // stepCap 0: a step is log10 L floored at 1, more than alpha(2) = 0.38 and beta(2) = 0.76.
    createVegas({ ...VEGAS, stepCap: 0 }).step(2, summary({ latencyMs: 100 }), d);
    expect(d).toEqual({ estimate: 3, reason: 'no-queue' });
    // noQueueJump false: no queue grows by one step, min(alpha(200), log10 200) = 2.30, not beta.
    createVegas({ ...VEGAS, noQueueJump: false }).step(200, summary({ latencyMs: 100 }), d);
    expect(d.estimate).toBeCloseTo(200 + Math.log10(200), 10);
  });

  it('leaves overloads and timeouts to the loop: a window of 429s with a healthy latency is no queue', () => {
    const d = decision();
    vegas.step(20, summary({ samples: 90, overloads: 10, timeouts: 10 }), d);
    expect(d.reason).toBe('no-queue');
    expect(d.estimate).toBeGreaterThan(20);
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

  it('still grows past the tolerance while the headroom outweighs the gradient', () => {
    const d = decision();
    // gradient = 1.5 x 100/160 = 0.9375; target = 18.75 + 4.472 = 23.22; next = 16 + 4.644 = 20.644.
    gradient2.step(20, summary({ latencyMs: 160 }), d);
    expect(d.estimate).toBeCloseTo(16 + 0.2 * (18.75 + Math.sqrt(20)), 10);
    expect(d.reason).toBe('headroom');
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
    const unsmoothed = createGradient2({ rttTolerance: 1.5, smoothing: 1, minBaselineMs: 5 });
    const d = decision();
    unsmoothed.step(20, summary({ latencyMs: 200 }), d);
    expect(d.estimate).toBeCloseTo(15 + Math.sqrt(20), 10);
  });

  it('compares with a baseline of minBaselineMs at least, like vegas: a whole-ms clock tick is no queue (adr/0125)', () => {
    const d = decision();
    // 1.5 x 0 / 1 would clamp the gradient to 0.5: a 0 ms baseline shrank every window with a 1 ms p90.
    gradient2.step(20, summary({ baselineMs: 0, latencyMs: 1 }), d);
    expect(d.reason).toBe('latency-within-tolerance');
    expect(d.estimate).toBeGreaterThan(20);
    // Past the floor's tolerance it counts: 1.5 x 5 / 10 = 0.75.
    gradient2.step(20, summary({ baselineMs: 1, latencyMs: 10 }), d);
    expect(d.reason).toBe('latency-above-tolerance');
    expect(d.estimate).toBeCloseTo(16 + (0.75 * 20 + Math.sqrt(20)) * 0.2, 10);
  });

  it('holds while warming up, like vegas', () => {
    const d = decision();
    gradient2.step(20, summary({ baselineMs: Number.NaN }), d);
    expect(d).toEqual({ estimate: 20, reason: 'warming-up' });
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
    expect(d.reason).toBe('overload');
    aimd.step(20, summary({ samples: 90, timeouts: 10 }), d);
    expect(d.estimate).toBeCloseTo(18, 10);
    expect(d.reason).toBe('timeout');
  });

  it('scales the backoff with the share of the window (one 429 in 100: x0.99) and names the stronger', () => {
    const d = decision();
    aimd.step(20, summary({ samples: 99, overloads: 1 }), d);
    expect(d).toMatchObject({ reason: 'overload' });
    expect(d.estimate).toBeCloseTo(19.8, 10);
    // overloads 10% -> x0.9; timeouts 1% -> x0.991: the overload cut applies.
    aimd.step(20, summary({ samples: 89, overloads: 10, timeouts: 1 }), d);
    expect(d).toMatchObject({ reason: 'overload' });
    expect(d.estimate).toBeCloseTo(18, 10);
  });

  it('holds on a window without latency samples', () => {
    const d = decision();
    aimd.step(20, summary({ samples: 0, failures: 5 }), d);
    expect(d).toEqual({ estimate: 20, reason: 'no-samples' });
  });
});

describe('fixed step', () => {
  it('holds whatever the window says', () => {
    const d = decision();
    fixed.step(20, summary({ samples: 50, timeouts: 50, latencyMs: 1e6 }), d);
    expect(d).toEqual({ estimate: 20, reason: 'fixed' });
  });
});
