import { describe, expect, it } from 'vitest';
import { sortedQuantile } from '../../src/stats/exact-quantile';
import { P2Quantile } from '../../src/stats/p2-quantile';

/**
 * Gaps Stryker found in src/stats (docs/testing.md): initFromSorted with fewer values than
 * markers had no test at all, and copyMarkers was only read with positions.
 */
describe('P2Quantile, behaviours the mutation run found untested', () => {
  it('initFromSorted with fewer than five values behaves exactly as adding them one by one', () => {
    const fromSorted = new P2Quantile(0.9);
    fromSorted.initFromSorted([10, 20, 30], 3);
    const added = new P2Quantile(0.9);
    for (const x of [10, 20, 30]) added.add(x);
    expect(fromSorted.value()).toBe(added.value());
    expect(fromSorted.value()).toBe(28); // (3 - 1) x 0.9 = 1.8: 20 + 0.8 x 10
    const heights = new Float64Array(5);
    const positions = new Float64Array(5);
    expect(fromSorted.copyMarkers(heights, positions)).toBe(3);
    expect([...heights.slice(0, 3)]).toEqual([10, 20, 30]);
    expect([...positions.slice(0, 3)]).toEqual([1, 2, 3]);
  });

  it('copies marker heights without positions when none are asked for', () => {
    const p = new P2Quantile(0.5);
    for (const x of [5, 1, 4, 2, 3, 9, 7]) p.add(x);
    const heights = new Float64Array(5);
    expect(p.copyMarkers(heights)).toBe(5);
    expect(heights[0]).toBe(1);
    expect(heights[4]).toBe(9);
  });

  it('reads the exact sample quantile while it holds four values, seeding markers only at the fifth', () => {
    const p = new P2Quantile(0.5);
    for (const x of [40, 10, 30, 20]) p.add(x);
    expect(p.value()).toBe(25);
    p.add(50);
    expect(p.value()).toBe(30);
  });
});

describe('sortedQuantile at an exact position', () => {
  it('returns the order statistic itself, even next to an infinite value', () => {
    expect(sortedQuantile([1, Infinity], 2, 0)).toBe(1);
    expect(sortedQuantile([1, 2, Infinity], 3, 0.5)).toBe(2);
  });
});
