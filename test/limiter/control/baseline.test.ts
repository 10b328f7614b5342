import { describe, expect, it } from 'vitest';
import {
  Baseline,
  KneeEvidence,
  KNEE_GOODPUT_SHARE,
  MIN_EPISODE_WINDOWS,
  MIN_NO_GAIN_WINDOWS,
  RISE_RATIO,
} from '../../../src/limiter/baseline';

/** A baseline of 100 ms, set from a warm filter. */
function baselineAt100(): Baseline {
  const baseline = new Baseline(50);
  expect(baseline.update(100, 100, true, 20, 200, 1)).toBe('set');
  return baseline;
}

/** One window of an exogenous rise: latency 300 whatever the in-flight, goodput = n / 0.3 s. */
function exogenous(baseline: Baseline, inflight: number, latencyMs = 300): string {
  return baseline.update(latencyMs, latencyMs, true, inflight, inflight / 0.3, 1);
}

describe('the baseline: set and fall', () => {
  it('is unknown until the median filter is warm, so no single window can set it', () => {
    const baseline = new Baseline(50);
    expect(baseline.update(1, 1, false, 20, 200, 1)).toBe('none');
    expect(baseline.valueMs).toBeNaN();
    expect(baseline.update(100, 100, true, 20, 200, 1)).toBe('set');
    expect(baseline.valueMs).toBe(100);
  });

  it('falls to a lower smoothed latency at once (the least noisy of the two)', () => {
    const baseline = baselineAt100();
    expect(baseline.update(90, 95, true, 20, 200, 1)).toBe('fall');
    expect(baseline.valueMs).toBe(95);
  });

  it('falls to a measurement taken at the knee when told to', () => {
    const baseline = baselineAt100();
    expect(baseline.fallTo(120)).toBe(false);
    expect(baseline.fallTo(80)).toBe(true);
    expect(baseline.valueMs).toBe(80);
  });

  it('moves to a measurement taken at the knee, up as well as down (a latency cliff, adr/0036)', () => {
    const baseline = baselineAt100();
    expect(baseline.setAtKnee(150)).toBe(true);
    expect(baseline.valueMs).toBe(150);
    expect(baseline.setAtKnee(150)).toBe(false);
    expect(baseline.setAtKnee(Number.NaN)).toBe(false);
    expect(baseline.valueMs).toBe(150);
  });

  it('does not rise on a higher latency without evidence', () => {
    const baseline = baselineAt100();
    for (let i = 0; i < 100; i++) baseline.update(300, 300, true, 20, 66, 1);
    expect(baseline.valueMs).toBe(100);
    expect(baseline.resets).toBe(0);
  });
});

describe("the baseline: Uber's covariance reset", () => {
  it('moves up after 10 windows of a rise in which goodput scaled with in-flight', () => {
    const baseline = baselineAt100();
    const inflights = [50, 44, 38, 32, 27, 22, 18, 15, 12, 10];
    const updates = inflights.map((n) => exogenous(baseline, n));
    expect(updates.slice(0, MIN_EPISODE_WINDOWS - 1).every((u) => u === 'none')).toBe(true);
    expect(updates[MIN_EPISODE_WINDOWS - 1]).toBe('reset');
    expect(baseline.valueMs).toBe(300);
    expect(baseline.resets).toBe(1);
  });

  it('keeps the baseline when goodput did not follow in-flight (our own queueing)', () => {
    const baseline = baselineAt100();
    // Above the knee: latency rises with in-flight, goodput flat at 100/s.
    for (let i = 0; i < 50; i++) {
      const n = 50 - (i % 25) * 1.6;
      baseline.update(n * 10, n * 10, true, n, 100, 1);
    }
    expect(baseline.valueMs).toBe(100);
    expect(baseline.resets).toBe(0);
  });

  it('keeps the baseline when in-flight barely moved (13 to 19: spread under 1.5)', () => {
    const baseline = baselineAt100();
    for (let i = 0; i < 50; i++) exogenous(baseline, 13 + (i % 7));
    expect(baseline.resets).toBe(0);
  });

  it('keeps the baseline when goodput correlates but does not scale (elasticity under 0.5)', () => {
    const baseline = baselineAt100();
    for (let i = 0; i < 50; i++) {
      const n = 10 + (i % 10) * 5;
      baseline.update(300, 300, true, n, 100 + n * 0.1, 1);
    }
    expect(baseline.resets).toBe(0);
  });

  it('moves up to the latency of the low in-flight half of the episode, never the current one (the drift guard)', () => {
    const baseline = baselineAt100();
    // Latency still carries some queueing at high in-flight; the current window is the highest.
    const latencies = [360, 340, 330, 320, 310, 300, 302, 298, 301, 380];
    [50, 44, 38, 32, 27, 22, 18, 15, 12, 49].forEach((n, i) => {
      exogenous(baseline, n, latencies[i]);
    });
    // Mean in-flight 30.7: the windows at 27, 22, 18, 15, 12 -> median of 310, 300, 302, 298, 301.
    expect(baseline.valueMs).toBe(301);
  });

  it('skips the transition windows of a shift: their p90 still mixes the old latency in', () => {
    const baseline = baselineAt100();
    // The first windows of a 3x shift read 150-250 ms (old and new samples mixed), at high in-flight.
    const latencies = [150, 200, 250, 300, 300, 300, 300, 300, 300, 300];
    [57, 50, 43, 34, 27, 22, 18, 15, 13, 12].forEach((n, i) => {
      exogenous(baseline, n, latencies[i]);
    });
    expect(baseline.valueMs).toBe(300);
  });

  it('needs fresh evidence after a reset: the episode ends with it', () => {
    const baseline = baselineAt100();
    [50, 44, 38, 32, 27, 22, 18, 15, 12, 10].forEach((n) => {
      exogenous(baseline, n);
    });
    expect(baseline.episodeWindows).toBe(0);
    // Latency rises again: a new episode, which needs its own ten windows.
    const again = [50, 44, 38, 32, 27, 22, 18, 15, 12].map((n) => exogenous(baseline, n, 900));
    expect(again.every((u) => u === 'none')).toBe(true);
    expect(exogenous(baseline, 10, 900)).toBe('reset');
    expect(baseline.valueMs).toBe(900);
  });

  it('ends an episode as soon as latency falls back under the threshold', () => {
    const baseline = baselineAt100();
    [50, 44, 38, 32, 27].forEach((n) => {
      exogenous(baseline, n);
    });
    expect(baseline.episodeWindows).toBe(5);
    baseline.update(105, 105, true, 20, 190, 1);
    expect(baseline.episodeWindows).toBe(0);
  });

  it("starts an episode only above RISE_RATIO x the algorithm's own shrink ratio", () => {
    expect(RISE_RATIO).toBe(1.1);
    const baseline = baselineAt100();
    baseline.update(215, 215, true, 20, 93, 2); // 2.15 < 2 x 1.1
    expect(baseline.episodeWindows).toBe(0);
    baseline.update(225, 225, true, 20, 89, 2); // 2.25 > 2.2
    expect(baseline.episodeWindows).toBe(1);
  });

  it('keeps the threshold it started with while the algorithm shrinks (and tolerates more)', () => {
    const baseline = baselineAt100();
    baseline.update(150, 150, true, 40, 266, 1.2); // threshold 1.32: an episode
    baseline.update(150, 150, true, 30, 200, 5); // Vegas at a small limit tolerates 5x: still one
    expect(baseline.episodeWindows).toBe(2);
  });

  it('ignores windows while the filter is not warm (after an idle gap)', () => {
    const baseline = baselineAt100();
    expect(baseline.update(1, 1, false, 20, 200, 1)).toBe('none');
    expect(baseline.valueMs).toBe(100);
  });
});

describe('the knee evidence (no-gain rule)', () => {
  it('stands down once goodput is seen to follow in-flight (the limiter ran below the knee)', () => {
    const knee = new KneeEvidence(50);
    const steps = [10, 12, 14, 16, 18].map((n) => knee.observe(n, n * 10, true, false));
    expect(steps).toEqual([false, false, false, false, false]);
    expect(knee.confirmed).toBe(true);
  });

  it('calls for a descent when in-flight moved 1.25x and goodput stayed flat', () => {
    const knee = new KneeEvidence(50);
    expect(MIN_NO_GAIN_WINDOWS).toBe(5);
    const steps = [36, 30, 27, 25, 24].map((n) => knee.observe(n, 100, true, false));
    expect(steps).toEqual([false, false, false, false, true]);
    expect(knee.descending).toBe(true);
  });

  it('keeps descending until goodput falls below 90% of the plateau, then stands down', () => {
    const knee = new KneeEvidence(50);
    [36, 30, 27, 25, 24].forEach((n) => {
      knee.observe(n, 100, true, false);
    });
    expect(KNEE_GOODPUT_SHARE).toBe(0.9);
    expect(knee.observe(21, 95, true, false)).toBe(true);
    expect(knee.observe(19, 91, true, false)).toBe(true);
    expect(knee.observe(17, 85, true, false)).toBe(false);
    expect(knee.confirmed).toBe(true);
    expect(knee.observe(30, 100, true, false)).toBe(false);
  });

  it('starts a descent at once when the upstream answers 429 while latency sits at the baseline', () => {
    const knee = new KneeEvidence(50);
    expect(knee.observe(20, 400, false, true)).toBe(true);
    // The descent goes on without the limit binding (the 429s keep in-flight below it) ...
    expect(knee.observe(18, 398, false, false)).toBe(true);
    // ... until goodput falls under 90% of the 400/s plateau.
    expect(knee.observe(9, 350, false, false)).toBe(false);
    expect(knee.foundKnee).toBe(true);
    expect(knee.confirmed).toBe(true);
  });

  it('collects evidence only from windows in which the limit bound', () => {
    const knee = new KneeEvidence(50);
    const steps = [36, 30, 27, 25, 24, 22].map((n) => knee.observe(n, 100, false, false));
    expect(steps.every((step) => !step)).toBe(true);
  });

  it('says nothing while in-flight has not moved', () => {
    const knee = new KneeEvidence(50);
    const steps = Array.from({ length: 20 }, () => knee.observe(20, 100, true, false));
    expect(steps.every((step) => !step)).toBe(true);
    expect(knee.confirmed).toBe(false);
  });
});
