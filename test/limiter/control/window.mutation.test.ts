import { describe, expect, it } from 'vitest';
import { LatencySignal, SamplingWindow, type WindowRules } from '../../../src/limiter/window';
import { record } from './support/record';
import { summary } from './support/summary';

/** Edges of the sampling window and the latency signal that mutation testing found unpinned (docs/testing.md). */

const rules: WindowRules = {
  quantile: 0.9,
  minSamples: 50,
  maxWindowMs: 30_000,
  failure: 'hold',
  overloadCloseShare: 0.5,
  overloadCloseMinAnswers: 10,
};

describe('the sampling window: summary of an empty window', () => {
  it('summarises a window that counted nothing as 0 mean in-flight and 0 duration, not NaN', () => {
    const window = new SamplingWindow(rules);
    const out = summary({ meanInflight: 7, durationMs: 7 });
    window.summarise(5_000, out);
    expect(out).toMatchObject({ samples: 0, reached: 0, meanInflight: 0, durationMs: 0 });
  });
});

describe('the sampling window: when it may close', () => {
  it('closes at maxWindowMs with one sample, short of the low-traffic rule (1 x 30 s < 50 x 2 s)', () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 1, 0, -100);
    expect(window.ready(29_999, 2_000)).toBe(false);
    expect(window.ready(30_000, 2_000)).toBe(true);
  });
});

/** A call admitted before any window opened. */
const BEFORE = -Infinity;

describe('the sampling window: what it counts', () => {
  it("counts a plain call's whole hold as latency: two calls and one 300 ms hold after a mark average 100 ms", () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 1, 0, BEFORE);
    record(window, 'ok', 100, 1, 0, BEFORE);
    window.recordHold(300);
    expect(window.afterMarkMeanMs()).toBe(100);
  });

  it('takes no log latency from a settle it does not count (a rejected call)', () => {
    const window = new SamplingWindow(rules);
    record(window, 'rejected', 50, 1, 0, BEFORE);
    record(window, 'ok', 100, 1, 0, BEFORE);
    expect(window.latencyLogMean()).toBeCloseTo(Math.log(100), 12);
  });

  it('takes no log of an infinite latency', () => {
    const window = new SamplingWindow(rules);
    window.recordLog({ verdict: 'ok', latencyMs: Infinity });
    expect(window.latencyLogMean()).toBeNaN();
  });

  it('dates a call by its duration, not its latency: a 100 ms answer held 500 ms did not start in the window', () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 1, 1_000, 900); // opens the window at 1 000
    record(window, 'ok', 100, 1, 1_200, 700); // latency 100 ms, but started at 700
    expect(window.roundTrip).toBe(false);
  });

  it('gives the coefficient of variation from two samples: 100 and 300 ms, sd 141 over mean 200', () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 1, 0, BEFORE);
    record(window, 'ok', 300, 1, 0, BEFORE);
    expect(window.latencyCv()).toBeCloseTo(Math.SQRT2 / 2, 12);
  });

  it('reports 0 spread, not NaN or a negative variance, for identical samples that round off (3 x 123.4 ms)', () => {
    const window = new SamplingWindow(rules);
    for (let i = 0; i < 3; i++) record(window, 'ok', 123.4, 1, 0, BEFORE);
    expect(window.latencyCv()).toBe(0);
    expect(window.latencyLogVariance()).toBe(0);
  });
});

describe('the sampling window: closing edges', () => {
  it('does not close a restarted window that has counted nothing, however old', () => {
    const window = new SamplingWindow(rules);
    window.restart(0);
    expect(window.ready(30_000, 2_000)).toBe(false);
  });

  it('closes before its floor on exactly half overloads of 10 answers', () => {
    const window = new SamplingWindow(rules);
    for (let i = 0; i < 5; i++) record(window, 'ok', 100, 20, 0, BEFORE);
    for (let i = 0; i < 5; i++) record(window, 'overload', 1, 20, 100, 99); // round trips (minRoundTripMs 0)
    expect(window.ready(100, 2_000)).toBe(true);
  });
});

describe('the latency signal: what it refuses', () => {
  it('ignores a negative, NaN or infinite window quantile and keeps the last one', () => {
    const signal = new LatencySignal();
    signal.add(100);
    for (const bad of [-1, Number.NaN, Infinity]) signal.add(bad);
    expect(signal.smoothedMs).toBe(100);
  });

  it('does not smooth an infinite window quantile in again: 100, 300, 300 then Infinity stays at 166.7', () => {
    const signal = new LatencySignal();
    for (const ms of [100, 300, 300]) signal.add(ms);
    // Median 300, EWMA 100 + (300 - 100) / 3. The median filter ignores Infinity; fed to the EWMA
    // anyway, its unchanged 300 would move the smoothed latency to 211.1.
    expect(signal.smoothedMs).toBeCloseTo(500 / 3, 10);
    signal.add(Infinity);
    expect(signal.smoothedMs).toBeCloseTo(500 / 3, 10);
  });

  it('takes a 0 ms window quantile (a virtual clock)', () => {
    const signal = new LatencySignal();
    signal.add(0);
    expect(signal.smoothedMs).toBe(0);
  });
});
