import { describe, expect, it } from 'vitest';
import type { AlgorithmName } from '../../../src/limiter/controller';
import { vegasLog } from '../../../src/limiter/algorithms/vegas';
import { LimitControlLoop, resolveControlConfig } from '../../../src/limiter/control-loop';
import { fmt, lowestLimit, report, runModel, settledAfter, span } from './support/model';

/**
 * Closed-loop behaviour on a tiny deterministic model (support/model.ts): an upstream with C
 * servers and a 100 ms service time (latency = 100 ms x max(1, in-flight / C) x lognormal jitter
 * of 10%), 400 clients calling again as soon as a call settles, so in-flight is pinned at the
 * limit. Each scenario prints its measured figures beside its criteria.
 *
 * What "converged" means depends on the algorithm, by design:
 * - vegas keeps alpha to beta requests queued at the upstream (Vegas's "extra buffers", spec §4.1):
 *   its limit settles in [C + alpha, C + beta]. alpha and beta are 3 and 6 log10(L) for large
 *   limits, and narrower below L ~ 115 (adr/0036: 1 and 2 requests at L = 10, where the spec's
 *   floored 3 and 6 were +30% to +60% of C); the band check below uses the spec's edges, an
 *   upper bound.
 * - gradient2 tolerates latency up to rttTolerance (1.5) x baseline and adds sqrt(L) headroom
 *   (spec §4.2): it settles where L = 1.5 C + sqrt(L), capped at maxLimit.
 */

const SERVICE_MS = 100;
const CLIENTS = 400;

function controllerFor(algorithm: AlgorithmName): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig({ algorithm }));
}

/** Solves L = C + k x log10(L) (Vegas's band edges, k = 3 for alpha and 6 for beta). */
function vegasEdge(capacity: number, k: number): number {
  let limit = capacity;
  for (let i = 0; i < 50; i++) limit = capacity + k * vegasLog(limit);
  return limit;
}

/** Solves L = 1.5 C + sqrt(L), capped at 200. */
function gradient2Equilibrium(capacity: number): number {
  let limit = capacity;
  for (let i = 0; i < 50; i++) limit = 1.5 * capacity + Math.sqrt(limit);
  return Math.min(200, limit);
}

describe('closed loop: convergence on capacity (600 s, measured over the last 300 s)', () => {
  for (const capacity of [10, 50, 150]) {
    it(`vegas settles inside its band above a capacity of ${capacity}, steady, at full throughput`, () => {
      const controller = controllerFor('vegas');
      const run = runModel({
        controller,
        seed: 7,
        durationMs: 600_000,
        initial: { capacity, serviceMs: SERVICE_MS, clients: CLIENTS },
      });
      const s = span(run, 300_000, 600_000);
      const low = vegasEdge(capacity, 3);
      const high = vegasEdge(capacity, 6);
      const settled = settledAfter(run, 0, 600_000, s.meanLimit, 0.2);
      report(
        `vegas C=${capacity}`,
        `limit ${fmt(s.meanLimit)} = ${fmt(s.meanLimit / capacity, 2)}x C (band [${fmt(low)}, ${fmt(high)}]; ` +
          `within 20% of C: ${Math.abs(s.meanLimit - capacity) <= 0.2 * capacity ? 'yes' : 'no'}), ` +
          `oscillation +-${fmt(100 * s.oscillation)}% (<= 20%), throughput ${fmt((100 * s.throughput) / (capacity * 10))}% ` +
          `of capacity (>= 97%), settled after ${fmt(settled / 2_000, 0)} windows (<= 60), baseline ${fmt(s.lastBaselineMs)} ms`,
      );
      expect(s.meanLimit).toBeGreaterThanOrEqual(capacity);
      expect(s.meanLimit).toBeLessThanOrEqual(high + 1);
      // adr/0036: with the narrower band at small limits this holds at C = 10 too (11.7; 13-16 before).
      expect(Math.abs(s.meanLimit - capacity)).toBeLessThanOrEqual(0.2 * capacity);
      expect(s.throughput).toBeGreaterThanOrEqual(0.97 * capacity * 10);
      if (capacity >= 50) {
        expect(s.oscillation).toBeLessThanOrEqual(0.2);
        expect(settled).toBeLessThanOrEqual(60 * 2_000);
      }
    });
  }

  // Known problem (sim/known-failures.ts, convergence-c10-vegas): at C = 10 the band is 1 to 2
  // requests, and the smoothed latency lags a forming queue by about two windows, so vegas
  // limit-cycles 9 -> 15 -> 9 around its mean (+-25.6% here, settling never "for good").
  it.fails('vegas holds within +-20% of a capacity of 10 once settled [known: limit cycle from latency lag]', () => {
    const capacity = 10;
    const controller = controllerFor('vegas');
    const run = runModel({
      controller,
      seed: 7,
      durationMs: 600_000,
      initial: { capacity, serviceMs: SERVICE_MS, clients: CLIENTS },
    });
    const s = span(run, 300_000, 600_000);
    const settled = settledAfter(run, 0, 600_000, s.meanLimit, 0.2);
    expect(s.oscillation).toBeLessThanOrEqual(0.2);
    expect(settled).toBeLessThanOrEqual(60 * 2_000);
  });

  for (const capacity of [10, 50, 150]) {
    it(`vegas takes its baseline at the no-load p90 for a capacity of ${capacity}, even from a start above it`, () => {
      const controller = controllerFor('vegas');
      const run = runModel({
        controller,
        seed: 7,
        durationMs: 600_000,
        initial: { capacity, serviceMs: SERVICE_MS, clients: CLIENTS },
      });
      const s = span(run, 300_000, 600_000);
      // The baseline is the no-load p90 (100 ms x e^(1.28 x 0.1) = 114 ms), even from a start above capacity.
      expect(s.lastBaselineMs).toBeGreaterThan(105);
      expect(s.lastBaselineMs).toBeLessThan(125);
    });

    it(`gradient2 settles at L = 1.5 C + sqrt(L) for a capacity of ${capacity}, steady, at full throughput`, () => {
      const controller = controllerFor('gradient2');
      const run = runModel({
        controller,
        seed: 7,
        durationMs: 600_000,
        initial: { capacity, serviceMs: SERVICE_MS, clients: CLIENTS },
      });
      const s = span(run, 300_000, 600_000);
      const expected = gradient2Equilibrium(capacity);
      const settled = settledAfter(run, 0, 600_000, s.meanLimit, 0.2);
      report(
        `gradient2 C=${capacity}`,
        `limit ${fmt(s.meanLimit)} = ${fmt(s.meanLimit / capacity, 2)}x C (designed ${fmt(expected)}, within 20%), ` +
          `oscillation +-${fmt(100 * s.oscillation)}% (<= 20%), throughput ${fmt((100 * s.throughput) / (capacity * 10))}% ` +
          `of capacity (>= 97%), settled after ${fmt(settled / 2_000, 0)} windows (<= 100), baseline ${fmt(s.lastBaselineMs)} ms`,
      );
      expect(Math.abs(s.meanLimit - expected)).toBeLessThanOrEqual(0.2 * expected);
      expect(s.oscillation).toBeLessThanOrEqual(0.2);
      expect(s.throughput).toBeGreaterThanOrEqual(0.97 * capacity * 10);
      // gradient2 grows by smoothing x sqrt(L) = 0.9 to 2.8 a window: 20 -> 200 takes ~90 windows.
      expect(settled).toBeLessThanOrEqual(100 * 2_000);
    });
  }
});

describe('closed loop: capacity halves (50 -> 25 at 300 s)', () => {
  for (const algorithm of ['vegas', 'gradient2'] as const) {
    it(`${algorithm} re-converges on the new capacity and keeps its baseline`, () => {
      const controller = controllerFor(algorithm);
      const run = runModel({
        controller,
        seed: 11,
        durationMs: 600_000,
        initial: { capacity: 50, serviceMs: SERVICE_MS, clients: CLIENTS },
        schedule: [{ atMs: 300_000, set: { capacity: 25 } }],
      });
      const before = span(run, 200_000, 300_000);
      const after = span(run, 450_000, 600_000);
      const expected = algorithm === 'vegas' ? vegasEdge(25, 6) : gradient2Equilibrium(25);
      const settled = settledAfter(run, 300_000, 600_000, after.meanLimit, 0.2);
      report(
        `${algorithm} capacity 50 -> 25`,
        `limit ${fmt(before.meanLimit)} -> ${fmt(after.meanLimit)} (designed <= ${fmt(expected)}), re-converged within 20% after ` +
          `${fmt(settled / 2_000, 0)} windows (<= 30), oscillation +-${fmt(100 * after.oscillation)}%, throughput ` +
          `${fmt((100 * after.throughput) / 250)}% of the new capacity, baseline ${fmt(before.lastBaselineMs)} -> ${fmt(after.lastBaselineMs)} ms, ` +
          `resets ${controller.snapshot().baselineResets} (0)`,
      );
      expect(after.meanLimit).toBeGreaterThanOrEqual(25);
      expect(after.meanLimit).toBeLessThanOrEqual(1.2 * expected);
      expect(after.oscillation).toBeLessThanOrEqual(0.2);
      expect(settled).toBeLessThanOrEqual(30 * 2_000);
      expect(after.throughput).toBeGreaterThanOrEqual(0.95 * 250);
      expect(controller.snapshot().baselineResets).toBe(0);
      expect(after.lastBaselineMs).toBeCloseTo(before.lastBaselineMs, 0);
    });
  }
});

describe('closed loop: a permanent 3x slowdown at unchanged capacity (100 -> 300 ms at 300 s, C = 50)', () => {
  for (const algorithm of ['vegas', 'gradient2'] as const) {
    it(`${algorithm} returns near capacity instead of clamping at minLimit`, () => {
      const controller = controllerFor(algorithm);
      const run = runModel({
        controller,
        seed: 11,
        durationMs: 900_000,
        initial: { capacity: 50, serviceMs: SERVICE_MS, clients: CLIENTS },
        schedule: [{ atMs: 300_000, set: { serviceMs: 300 } }],
      });
      const before = span(run, 200_000, 300_000);
      const after = span(run, 600_000, 900_000);
      const lowest = lowestLimit(run, 300_000, 600_000);
      const expected = algorithm === 'vegas' ? vegasEdge(50, 6) : gradient2Equilibrium(50);
      const recovered = settledAfter(run, 300_000, 900_000, after.meanLimit, 0.2);
      report(
        `${algorithm} permanent 3x slowdown`,
        `limit ${fmt(before.meanLimit)} -> lowest ${lowest} -> ${fmt(after.meanLimit)} (>= 0.8 x C = 40; designed ${fmt(expected)}), ` +
          `back within 20% after ${fmt(recovered / 2_000, 0)} windows, baseline ${fmt(before.lastBaselineMs)} -> ` +
          `${fmt(after.lastBaselineMs)} ms (about 3x), resets ${controller.snapshot().baselineResets} (>= 1)`,
      );
      expect(after.meanLimit).toBeGreaterThanOrEqual(40);
      expect(after.meanLimit).toBeLessThanOrEqual(1.2 * expected);
      expect(controller.snapshot().baselineResets).toBeGreaterThanOrEqual(1);
      expect(after.lastBaselineMs / before.lastBaselineMs).toBeGreaterThan(2.7);
      expect(after.lastBaselineMs / before.lastBaselineMs).toBeLessThan(3.3);
      expect(recovered).toBeLessThanOrEqual(60 * 2_000);
    });
  }
});

describe('closed loop: 8 requests a minute (spec §9.1)', () => {
  // gradient2 climbs by 0.2 sqrt(L) a window, and windows are ~30 s long at this rate. vegas's
  // no-queue step at small limits is beta = 1 to 3 requests (adr/0036; it was 6): 11.2 min here.
  const recoveryMinutes = { vegas: 12, gradient2: 15 };
  for (const algorithm of ['vegas', 'gradient2'] as const) {
    it(`${algorithm} drops the limit on a 10x latency rise, then recovers when it passes`, () => {
      const controller = controllerFor(algorithm);
      // 200 ms service; from 15 to 30 minutes it is 2 s; arrivals 8 per minute, open loop.
      const run = runModel({
        controller,
        seed: 11,
        durationMs: 3_600_000,
        sampleEveryMs: 10_000,
        initial: { capacity: 50, serviceMs: 200, arrivalsPerMinute: 8 },
        schedule: [
          { atMs: 900_000, set: { serviceMs: 2_000 } },
          { atMs: 1_800_000, set: { serviceMs: 200 } },
        ],
      });
      const windowsPerMinute = controller.snapshot().windows / 60;
      const lowest = lowestLimit(run, 900_000, 1_800_000);
      const firstDrop = run.samples.find((s) => s.atMs >= 900_000 && s.limit < 20)?.atMs ?? Number.NaN;
      const back = run.samples.find((s) => s.atMs >= 1_800_000 && s.limit >= 20)?.atMs ?? Number.NaN;
      const end = span(run, 3_000_000, 3_600_000);
      report(
        `${algorithm} 8 req/min, 10x rise for 15 min`,
        `${fmt(windowsPerMinute, 2)} windows a minute (>= 1.5), first drop ${fmt((firstDrop - 900_000) / 60_000, 1)} min after ` +
          `the rise (<= 3), lowest limit ${lowest} (<= 10), back at 20 ${fmt((back - 1_800_000) / 60_000, 1)} min after it ` +
          `passed (<= ${recoveryMinutes[algorithm]}), limit at the end ${fmt(end.meanLimit)}`,
      );
      expect(windowsPerMinute).toBeGreaterThanOrEqual(1.5);
      expect(firstDrop - 900_000).toBeLessThanOrEqual(180_000);
      expect(lowest).toBeLessThanOrEqual(10);
      expect(back - 1_800_000).toBeLessThanOrEqual(recoveryMinutes[algorithm] * 60_000);
      expect(end.minLimit).toBe(20);
    });
  }

  it('vegas, after a permanent 10x rise at 8 requests a minute, finds capacity when demand arrives', () => {
    const controller = controllerFor('vegas');
    const run = runModel({
      controller,
      seed: 11,
      durationMs: 3_600_000,
      sampleEveryMs: 10_000,
      initial: { capacity: 50, serviceMs: 200, arrivalsPerMinute: 8 },
      schedule: [
        { atMs: 900_000, set: { serviceMs: 2_000 } },
        { atMs: 2_400_000, set: { arrivalsPerMinute: 0, clients: 100 } },
      ],
    });
    const quiet = lowestLimit(run, 1_800_000, 2_400_000);
    const busy = span(run, 3_000_000, 3_600_000);
    report(
      'vegas permanent 10x at 8 req/min, then 100 clients',
      `limit while quiet ${quiet}, with demand ${fmt(busy.meanLimit)} (>= 0.8 x C = 40), baseline ${fmt(busy.lastBaselineMs)} ms, ` +
        `resets ${controller.snapshot().baselineResets}`,
    );
    expect(quiet).toBeLessThanOrEqual(10);
    expect(busy.meanLimit).toBeGreaterThanOrEqual(40);
    expect(controller.snapshot().baselineResets).toBeGreaterThanOrEqual(1);
  });
});

describe('closed loop: aimd (error-driven, opt-in)', () => {
  it('does not diverge: with a 250 ms deadline it saws below the timeout point at full throughput', () => {
    const controller = controllerFor('aimd');
    const run = runModel({
      controller,
      seed: 5,
      durationMs: 600_000,
      initial: { capacity: 50, serviceMs: SERVICE_MS, clients: CLIENTS, deadlineMs: 250 },
    });
    const s = span(run, 300_000, 600_000);
    report(
      'aimd C=50, 250 ms deadline',
      `limit ${fmt(s.meanLimit)} in [${s.minLimit}, ${s.maxLimit}] (bounded below 125, where latency reaches the deadline), ` +
        `throughput ${fmt((100 * s.throughput) / 500)}% (>= 95%)`,
    );
    expect(s.maxLimit).toBeLessThan(125);
    expect(s.minLimit).toBeGreaterThanOrEqual(50);
    expect(s.throughput).toBeGreaterThanOrEqual(0.95 * 500);
  });
});
