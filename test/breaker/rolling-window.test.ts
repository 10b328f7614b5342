import { describe, expect, it } from 'vitest';
import { RollingWindow } from '../../src/breaker/rolling-window';

function counts(w: RollingWindow): [number, number, number] {
  return [w.calls, w.failures, w.slowCalls];
}

describe('the rolling window', () => {
  it('counts calls, failures and slow calls in the head bucket', () => {
    const w = new RollingWindow(10_000, 10, 0);
    w.record(0, true, false);
    w.record(500, false, true);
    w.record(999, true, true);
    expect(counts(w)).toEqual([3, 2, 2]);
  });

  it('keeps a call until the window has moved a full length past its bucket', () => {
    const w = new RollingWindow(10_000, 10, 0);
    w.record(0, true, false); // bucket [0, 1000)
    w.advance(9_999);
    expect(counts(w)).toEqual([1, 1, 0]);
    w.advance(10_000);
    expect(counts(w)).toEqual([0, 0, 0]);
  });

  it('forgets buckets one at a time as time passes', () => {
    const w = new RollingWindow(10_000, 10, 0);
    for (let t = 0; t < 10_000; t += 1_000) w.record(t, t < 5_000, false);
    expect(counts(w)).toEqual([10, 5, 0]);
    w.advance(13_000); // a bucket starting at s is gone at s + 10000: 0, 1000, 2000 and 3000
    expect(counts(w)).toEqual([6, 1, 0]);
  });

  it('forgets everything after an idle gap of a whole window, in one step', () => {
    const w = new RollingWindow(60_000, 10, 0);
    for (let i = 0; i < 20; i++) w.record(0, true, false);
    w.record(60_000, true, false);
    expect(counts(w)).toEqual([1, 1, 0]);
  });

  it('forgets only what aged out after an idle gap shorter than the window', () => {
    const w = new RollingWindow(60_000, 10, 0);
    w.record(0, true, false); // bucket [0, 6000)
    w.record(30_000, true, false); // bucket [30000, 36000)
    w.record(65_000, false, false); // the first bucket is gone, the second stays
    expect(counts(w)).toEqual([2, 1, 0]);
  });

  it('starts over from an instant when cleared', () => {
    const w = new RollingWindow(10_000, 10, 0);
    w.record(100, true, true);
    w.clear(2_500);
    expect(counts(w)).toEqual([0, 0, 0]);
    w.record(2_500, true, false);
    w.advance(12_499);
    expect(counts(w)).toEqual([1, 1, 0]);
    w.advance(12_500);
    expect(counts(w)).toEqual([0, 0, 0]);
  });

  it('lists non-empty buckets oldest first with their age from the bucket start', () => {
    const w = new RollingWindow(10_000, 10, 0);
    w.record(1_500, true, false);
    w.record(4_200, false, true);
    w.record(4_300, false, false);
    const seen: number[][] = [];
    w.forEachBucket(5_000, (age, calls, failures, slow) => seen.push([age, calls, failures, slow]));
    expect(seen).toEqual([
      [4_000, 1, 1, 0],
      [1_000, 2, 0, 1],
    ]);
  });

  it('puts restored counts in the bucket holding their instant and drops those older than the window', () => {
    const w = new RollingWindow(10_000, 10, 50_000);
    w.add(50_000, 3_000, 4, 2, 1); // began at 47000: three buckets back
    w.add(50_000, 10_000, 9, 9, 9); // began a full window ago: dropped
    expect(counts(w)).toEqual([4, 2, 1]);
    w.advance(56_999);
    expect(counts(w)).toEqual([4, 2, 1]);
    w.advance(57_000);
    expect(counts(w)).toEqual([0, 0, 0]);
  });

  it('holds only the last window of a long steady stream', () => {
    const w = new RollingWindow(1_000, 4, 0);
    for (let t = 0; t < 100_000; t += 333) w.record(t, t % 2 === 0, false);
    // 250 ms buckets; at 99900 the window holds buckets from 99000: the calls at 99234, 99567, 99900 (even times failed)
    expect(counts(w)).toEqual([3, 2, 0]);
  });
});
