/**
 * The numeric claims of adr/0016-quantile-estimator.md and docs/quantiles.md, checked against
 * the seeded accuracy measurement. Set WRITE_REPORT=1 to regenerate docs/quantiles.md (that
 * also measures heap and ns per add, which are printed, never asserted).
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { AccuracyCell } from '../../scripts/quantile-report';
import {
  buildQuantileReport,
  BUDGET_BYTES_PER_KEY,
  measureAccuracy,
  measureMemory,
  WINDOW_NOISE,
} from '../../scripts/quantile-report';
import { DISTRIBUTIONS } from './support/latency-samples';

const accuracy = measureAccuracy();
const GAP_MIX = 'bimodal 90/10';
const ALL = DISTRIBUTIONS.map((distribution) => distribution.name);

function cell(estimator: string, distribution: string, windowSize: number): AccuracyCell {
  const found = accuracy.find(
    (candidate) =>
      candidate.estimator === estimator &&
      candidate.distribution === distribution &&
      candidate.windowSize === windowSize,
  );
  if (found === undefined) throw new Error(`no cell ${estimator} / ${distribution} / ${windowSize}`);
  return found;
}

function cells(estimator: string, distributions: readonly string[], windowSizes: readonly number[]) {
  return distributions.flatMap((distribution) =>
    windowSizes.map((windowSize) => cell(estimator, distribution, windowSize)),
  );
}

describe('quantile estimator report (ADR 0016)', () => {
  it('hybrid 64 is exact on every window of 10 and 50 values, on every distribution', () => {
    for (const measured of cells('hybrid 64', ALL, [10, 50])) {
      expect(measured.p95RelativeError, `${measured.distribution} n=${measured.windowSize}`).toBe(0);
    }
  });

  it('hybrid 64 keeps the median error at or under 7% on windows of 250 and 1000, gap mix aside', () => {
    const distributions = ALL.filter((name) => name !== GAP_MIX);
    for (const measured of cells('hybrid 64', distributions, [250, 1000])) {
      expect(measured.medianRelativeError, `${measured.distribution} n=${measured.windowSize}`).toBeLessThanOrEqual(
        0.07,
      );
    }
  });

  it('hybrid 64 is never more than 1 point (median) worse than P² alone', () => {
    for (const measured of cells('hybrid 64', ALL, [10, 50, 250, 1000])) {
      const p2 = cell('P²', measured.distribution, measured.windowSize);
      expect(measured.medianRelativeError, `${measured.distribution} n=${measured.windowSize}`).toBeLessThanOrEqual(
        p2.medianRelativeError + 0.01,
      );
    }
  });

  it('P² alone misses the p90 of 10-value windows by at least 10% (median) on every distribution', () => {
    for (const measured of cells('P²', ALL, [10])) {
      expect(measured.medianRelativeError, measured.distribution).toBeGreaterThanOrEqual(0.1);
    }
  });

  it('P² alone misses by at least 25% (median) at n = 50 when the p90 sits near the gap of a bimodal mix', () => {
    for (const measured of cells('P²', ['bimodal 88/12', GAP_MIX], [50])) {
      expect(measured.medianRelativeError, measured.distribution).toBeGreaterThanOrEqual(0.25);
    }
  });

  it('ring 64 loses large windows: at least 40% median error at n = 1000 on a ramp and on bursts', () => {
    for (const measured of cells('ring 64', ['sorted asc', 'bursty'], [1000])) {
      expect(measured.medianRelativeError, measured.distribution).toBeGreaterThanOrEqual(0.4);
    }
  });

  it("at the 90/10 gap the window's own exact p90 is at least 20% (median) from the population p90", () => {
    for (const measured of cells(WINDOW_NOISE, [GAP_MIX], [10, 50, 250, 1000])) {
      expect(measured.medianRelativeError, `n=${measured.windowSize}`).toBeGreaterThanOrEqual(0.2);
    }
  });

  it('hybrid 64 stays under 50% median error at the 90/10 gap on windows of 250 and 1000', () => {
    for (const measured of cells('hybrid 64', [GAP_MIX], [250, 1000])) {
      expect(measured.medianRelativeError, `n=${measured.windowSize}`).toBeLessThan(0.5);
    }
  });

  it('one key holds 632 payload bytes of statistics with hybrid 64, inside the 2 KB budget', () => {
    const perKey = measureMemory(false).find((row) => row.estimator.startsWith('per key: hybrid 64'));
    expect(perKey?.payloadBytes).toBe(632);
    expect(perKey?.payloadBytes).toBeLessThanOrEqual(BUDGET_BYTES_PER_KEY);
  });

  it.runIf(process.env.WRITE_REPORT === '1')('writes docs/quantiles.md', () => {
    const report = buildQuantileReport();
    writeFileSync(new URL('../../docs/quantiles.md', import.meta.url), report);
    console.log(report);
  });
});
