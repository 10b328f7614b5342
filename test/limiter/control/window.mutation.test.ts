import { describe, expect, it } from 'vitest';
import { LatencySignal, SamplingWindow, type WindowRules } from '../../../src/limiter/window';
import { summary } from './support/summary';

/** Edges of the sampling window and the latency signal that mutation testing found unpinned (docs/testing.md). */

const rules: WindowRules = {
  quantile: 0.9,
  minSamples: 50,
  minWindowMs: 2_000,
  maxWindowMs: 30_000,
  failure: 'hold',
  overloadCloseShare: 0.5,
};

describe('the sampling window: summary of an empty window', () => {
  it('summarises a window that counted nothing as 0 mean in-flight and 0 duration, not NaN', () => {
    const window = new SamplingWindow(rules);
    const out = summary({ meanInflight: 7, durationMs: 7 });
    window.summarise(5_000, out);
    expect(out).toMatchObject({ samples: 0, reached: 0, meanInflight: 0, durationMs: 0 });
  });
});

describe('the latency signal: what it refuses', () => {
  it('ignores a negative, NaN or infinite window quantile and keeps the last one', () => {
    const signal = new LatencySignal();
    signal.add(100);
    for (const bad of [-1, Number.NaN, Infinity]) signal.add(bad);
    expect([signal.filteredMs, signal.smoothedMs]).toEqual([100, 100]);
    expect(signal.warm).toBe(false); // one window only: the refused ones did not count
  });

  it('takes a 0 ms window quantile (a virtual clock)', () => {
    const signal = new LatencySignal();
    signal.add(0);
    expect(signal.smoothedMs).toBe(0);
  });
});
