import { describe, expect, it } from 'vitest';
import { Baseline } from '../../../src/limiter/baseline';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';

/** Edges of the baseline (adr/0047) that mutation testing found unpinned (docs/testing.md). */
describe('the baseline: edges', () => {
  it('is set and offered a 0 ms latency (a virtual clock)', () => {
    const set = new Baseline(DEFAULT_TUNING);
    expect(set.set(0, 0)).toBe(true);
    expect(set.valueMs).toBe(0);
    const offered = new Baseline(DEFAULT_TUNING);
    expect(offered.offer(0, 0)).toBe('set');
    expect(offered.valueMs).toBe(0);
  });

  it('falls to a 0 ms smoothed latency, its mean with it', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(100, 80);
    baseline.fall(0);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([0, 0]);
  });

  it('is not offered an infinite latency', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    expect(baseline.offer(Infinity, 100)).toBe('none');
    expect(baseline.valueMs).toBeNaN();
  });

  it('keeps a 0 ms mean as given, not replaced by the statistic', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(100, 0);
    expect(baseline.meanMs).toBe(0);
  });

  it('counts a window at exactly raiseRatio (2x) as high: five at the floor re-take it', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(100, 80);
    const raised = [1, 2, 3, 4, 5].map(() => baseline.shrinking(200, 160, 1, true));
    expect(raised).toEqual([false, false, false, false, true]);
    expect([baseline.valueMs, baseline.meanMs, baseline.raises]).toEqual([200, 160, 1]);
  });

  it('is not re-taken at an elasticity of exactly raiseElasticity (0.5: in-flight / 4, latency / 2)', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(100, 100);
    expect(baseline.shrinking(800, 800, 40, false)).toBe(false); // the descent begins at 40, 800 ms
    for (let i = 0; i < 4; i++) expect(baseline.shrinking(400, 400, 10, false)).toBe(false);
    expect([baseline.valueMs, baseline.raises]).toEqual([100, 0]);
  });

  it('is not re-taken to a level it already has: a 0 ms baseline at the floor stays, with no raise counted', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(0, 0);
    const raised = [1, 2, 3, 4, 5].map(() => baseline.shrinking(0, 0, 1, true));
    expect(raised).toEqual([false, false, false, false, false]);
    expect(baseline.raises).toBe(0);
  });
});
