import { describe, expect, it } from 'vitest';
import { record } from './support/record';
import { summary } from './support/summary';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { LATENCY_SMOOTHING, LatencySignal, SamplingWindow, type WindowRules } from '../../../src/limiter/window';

const rules: WindowRules = {
  quantile: 0.9,
  minSamples: 50,
  maxWindowMs: 30_000,
  failure: 'hold',
  overloadCloseShare: 0.5,
  overloadCloseMinAnswers: 10,
};
/** A call admitted before any window opened: it ends a window without completing a round trip. */
const BEFORE = -Infinity;

function windowWith(samples: number, openedAt = 0, overrides: Partial<WindowRules> = {}): SamplingWindow {
  const window = new SamplingWindow({ ...rules, ...overrides });
  for (let i = 0; i < samples; i++) record(window, 'ok', 100 + i, 5, openedAt, BEFORE);
  return window;
}

describe('the sampling window: what each verdict teaches', () => {
  it('takes latency samples from ok and answered only', () => {
    const window = new SamplingWindow(rules);
    expect(record(window, 'ok', 100, 1, 0, BEFORE)).toBe(true);
    expect(record(window, 'answered', 120, 1, 0, BEFORE)).toBe(true);
    expect(window.samples).toBe(2);
    expect(window.reached).toBe(2);
  });

  it('counts overload and timeout as reduce signals, never as latency samples', () => {
    const window = new SamplingWindow(rules);
    record(window, 'overload', 1, 1, 0, BEFORE);
    record(window, 'timeout', 5_000, 1, 0, BEFORE);
    expect(window.samples).toBe(0);
    expect(window.overloads).toBe(1);
    expect(window.timeouts).toBe(1);
    expect(window.latencyQuantile()).toBeNaN();
  });

  it("keeps the window's mean latency and coefficient of variation for vegas's queue estimate (adr/0036)", () => {
    const window = new SamplingWindow(rules);
    expect(window.latencyMean()).toBeNaN();
    expect(window.latencyCv()).toBe(0);
    for (const latencyMs of [80, 100, 120]) record(window, 'ok', latencyMs, 1, 0, BEFORE);
    record(window, 'timeout', 5_000, 1, 0, BEFORE);
    expect(window.latencyMean()).toBe(100);
    // Sample standard deviation 20 over a mean of 100.
    expect(window.latencyCv()).toBeCloseTo(0.2, 10);
    window.restart(0);
    expect(window.latencyMean()).toBeNaN();
  });

  it('learns nothing from rejected and cancelled', () => {
    const window = new SamplingWindow(rules);
    expect(record(window, 'rejected', 1, 1, 0, BEFORE)).toBe(false);
    expect(record(window, 'cancelled', 1, 1, 0, BEFORE)).toBe(false);
    expect(window.reached).toBe(0);
    expect(window.openedAt).toBeNaN();
  });

  it("counts a failure as 'hold' by default: no sample, a failure tally", () => {
    const window = new SamplingWindow(rules);
    record(window, 'failure', 1, 1, 0, BEFORE);
    expect(window.samples).toBe(0);
    expect(window.failures).toBe(1);
  });

  it("treats a failure as an overload with failure: 'overload', and as nothing with 'ignore'", () => {
    const asOverload = new SamplingWindow({ ...rules, failure: 'overload' });
    record(asOverload, 'failure', 1, 1, 0, BEFORE);
    expect(asOverload.overloads).toBe(1);
    const ignoring = new SamplingWindow({ ...rules, failure: 'ignore' });
    expect(record(ignoring, 'failure', 1, 1, 0, BEFORE)).toBe(false);
    expect(ignoring.reached).toBe(0);
  });

  it('ignores a sample whose latency is negative or not finite', () => {
    const window = new SamplingWindow(rules);
    expect(record(window, 'ok', -1, 1, 0, BEFORE)).toBe(false);
    expect(record(window, 'ok', Number.NaN, 1, 0, BEFORE)).toBe(false);
    expect(record(window, 'ok', Infinity, 1, 0, BEFORE)).toBe(false);
    expect(window.reached).toBe(0);
  });

  it('summarises the window: counts, peak and mean in-flight, duration', () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 4, 1_000, BEFORE);
    record(window, 'ok', 200, 8, 1_500, BEFORE);
    record(window, 'timeout', 900, 6, 2_000, BEFORE);
    const out = summary();
    window.summarise(3_000, out);
    expect(out).toMatchObject({
      samples: 2,
      timeouts: 1,
      reached: 3,
      peakInflight: 8,
      meanInflight: 6,
      durationMs: 2_000,
    });
  });

  it('summarises latency as the p90 of its samples (exact up to 64 samples)', () => {
    const window = new SamplingWindow(rules);
    for (let ms = 1; ms <= 11; ms++) record(window, 'ok', ms * 10, 1, 0, BEFORE);
    expect(window.latencyQuantile()).toBe(100); // type 7: h = 1 + 10 x 0.9 = 10 -> the 10th value
  });

  it('opens at its first counted observation and empties on restart', () => {
    const window = windowWith(3, 500);
    expect(window.openedAt).toBe(500);
    window.restart(2_600);
    expect(window.openedAt).toBe(2_600);
    expect(window.samples).toBe(0);
    expect(window.latencyQuantile()).toBeNaN();
  });
});

describe('the sampling window: when it may close (floor 2 s, 50 samples, max 30 s)', () => {
  it('does not close before its floor, however many samples it has', () => {
    expect(windowWith(500).ready(1_999, 2_000)).toBe(false);
  });

  it('closes on count at its floor with minSamples samples', () => {
    expect(windowWith(50).ready(2_000, 2_000)).toBe(true);
    expect(windowWith(49).ready(2_000, 2_000)).toBe(false);
  });

  it('closes on time with fewer samples once samples x age >= minSamples x floor (25 at 4 s)', () => {
    expect(windowWith(25).ready(4_000, 2_000)).toBe(true);
    expect(windowWith(24).ready(4_000, 2_000)).toBe(false);
    // 8 requests a minute: 4 samples close a window at 25 s.
    expect(windowWith(4).ready(25_000, 2_000)).toBe(true);
    expect(windowWith(3).ready(25_000, 2_000)).toBe(false);
  });

  it('closes at maxWindowMs with a single sample', () => {
    expect(windowWith(1).ready(29_999, 2_000)).toBe(false);
    expect(windowWith(1).ready(30_000, 2_000)).toBe(true);
  });

  it('closes at its floor with reduce signals and no samples', () => {
    const window = new SamplingWindow(rules);
    record(window, 'timeout', 5_000, 1, 0, BEFORE);
    expect(window.ready(2_000, 2_000)).toBe(true);
  });

  it('closes at its floor when its reduce signals at least match its samples (adr/0105)', () => {
    // aimd two calls past a secret capacity: every call it admits times out but a few.
    const timedOut = windowWith(7);
    for (let i = 0; i < 700; i++) record(timedOut, 'timeout', 50, 5, 0, BEFORE);
    expect(timedOut.ready(1_999, 2_000)).toBe(false);
    expect(timedOut.ready(2_000, 2_000)).toBe(true);
    const refused = windowWith(3);
    for (let i = 0; i < 3; i++) record(refused, 'overload', 1, 5, 0, BEFORE);
    expect(refused.ready(2_000, 2_000)).toBe(true);
  });

  it('waits for samples while they outnumber its reduce signals, and failures are not reduce signals', () => {
    const mostlySamples = windowWith(4);
    for (let i = 0; i < 3; i++) record(mostlySamples, 'timeout', 50, 5, 0, BEFORE);
    expect(mostlySamples.ready(2_000, 2_000)).toBe(false);
    const failing = windowWith(3);
    for (let i = 0; i < 30; i++) record(failing, 'failure', 1, 5, 0, BEFORE);
    expect(failing.ready(2_000, 2_000)).toBe(false);
  });

  it('waits out maxWindowMs with failures alone', () => {
    const window = new SamplingWindow(rules);
    record(window, 'failure', 1, 1, 0, BEFORE);
    expect(window.ready(29_999, 2_000)).toBe(false);
    expect(window.ready(30_000, 2_000)).toBe(true);
  });

  it('never closes empty', () => {
    expect(new SamplingWindow(rules).ready(1e9, 2_000)).toBe(false);
  });

  it('scales the low-traffic rule with the floor (a 10 s floor needs 50 x 10 s of sample-time)', () => {
    expect(windowWith(25).ready(19_999, 10_000)).toBe(false);
    expect(windowWith(25).ready(20_000, 10_000)).toBe(true);
  });
});

describe("the sampling window: what the slow start and Little's law read (adr/0045, adr/0046)", () => {
  it('spans a round trip once a call admitted after it opened has ended', () => {
    const window = new SamplingWindow(rules);
    record(window, 'ok', 100, 1, 1_000, 900); // opens the window at 1 000
    record(window, 'ok', 100, 1, 1_050, 950); // admitted before it opened
    expect(window.roundTrip).toBe(false);
    record(window, 'ok', 100, 1, 1_100, 1_000); // admitted as it opened
    expect(window.roundTrip).toBe(true);
    window.restart(1_100);
    expect(window.roundTrip).toBe(false);
  });

  it('takes a refusal for a round trip only once the window lasted the no-load latency (adr/0126)', () => {
    const window = new SamplingWindow(rules);
    window.minRoundTripMs = 1_000; // a service of 1 s behind a cap that answers 429 in 1 ms
    record(window, 'ok', 1_000, 20, 0, -1_000); // opens the window at 0
    record(window, 'overload', 1, 20, 50, 49); // admitted after it opened, but 50 ms is no round trip of the service
    expect(window.roundTrip).toBe(false);
    record(window, 'ok', 40, 20, 60, 20); // an answer is one, however fast
    expect(window.roundTrip).toBe(true);
    window.restart(2_000);
    record(window, 'overload', 1, 20, 2_500, 2_499);
    expect(window.roundTrip).toBe(false);
    record(window, 'overload', 1, 20, 3_000, 2_999); // the window has lasted 1 s
    expect(window.roundTrip).toBe(true);
  });

  it("keeps the mean and variance of the log latency (the slow start's exit test runs on logs)", () => {
    const window = new SamplingWindow(rules);
    expect(window.latencyLogMean()).toBeNaN();
    expect(window.latencyLogVariance()).toBe(0);
    record(window, 'ok', 100, 1, 0, BEFORE);
    expect(window.latencyLogVariance()).toBe(0); // one sample
    record(window, 'ok', 400, 1, 0, BEFORE);
    expect(window.latencyLogMean()).toBeCloseTo(Math.log(200), 12); // the geometric mean
    // (n - 1) in the denominator: ((ln 100 - ln 200)^2 + (ln 400 - ln 200)^2) / 1 = 2 ln(2)^2.
    expect(window.latencyLogVariance()).toBeCloseTo(2 * Math.LN2 ** 2, 12);
    // A 0 ms sample (a virtual clock) is a latency sample but has no log.
    record(window, 'ok', 0, 1, 0, BEFORE);
    expect(window.samples).toBe(3);
    expect(window.latencyLogMean()).toBeCloseTo(Math.log(200), 12);
  });

  it('waits for more samples when the caller asks (the baseline window: baselineSamples 100)', () => {
    expect(windowWith(50).ready(2_000, 2_000, 100)).toBe(false);
    expect(windowWith(100).ready(2_000, 2_000, 100)).toBe(true);
    // The low-traffic rule scales with it: 50 samples x 4 s = 100 x 2 s.
    expect(windowWith(50).ready(4_000, 2_000, 100)).toBe(true);
  });

  it('closes before its floor once overloads are half of at least 10 answers (a hard cap answering 429 in 1 ms)', () => {
    expect(DEFAULT_TUNING.overloadCloseMinAnswers).toBe(10);
    const window = new SamplingWindow(rules);
    window.minRoundTripMs = 100;
    for (let i = 0; i < 3; i++) record(window, 'ok', 100, 20, 0, BEFORE);
    for (let i = 0; i < 6; i++) record(window, 'overload', 1, 20, 50, 49);
    expect(window.ready(100, 2_000)).toBe(false); // 9 answers
    record(window, 'overload', 1, 20, 60, 59);
    // 7 of 10, but not before a round trip: the cut reads the concurrency served from the completions, and a window
    // shorter than the service counts too few (adr/0126).
    expect(window.ready(100, 2_000)).toBe(false);
    record(window, 'overload', 1, 20, 100, 99);
    expect(window.ready(100, 2_000)).toBe(true); // 8 of 11, and the window has lasted the no-load 100 ms
    // refusalRoundTrip false (the tree before adr/0126): a majority closes early with no round trip at all.
    const before = new SamplingWindow({ ...rules, refusalRoundTrip: false });
    for (let i = 0; i < 10; i++) record(before, 'overload', 1, 20, 0, BEFORE);
    expect(before.roundTrip).toBe(false);
    expect(before.ready(100, 2_000)).toBe(true);
    const few = new SamplingWindow({ ...rules, overloadCloseShare: 1 });
    for (let i = 0; i < 4; i++) record(few, 'ok', 100, 20, 0, BEFORE);
    for (let i = 0; i < 20; i++) record(few, 'overload', 1, 20, 0, BEFORE);
    expect(few.ready(100, 2_000)).toBe(false); // overloadCloseShare 1: only a window of nothing else
  });

  it("takes the answers an early close needs from the loop's tuning (the ablation varies overloadCloseMinAnswers)", () => {
    const loop = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, overloadCloseMinAnswers: 4 });
    const window = (loop as unknown as { window: SamplingWindow }).window;
    record(window, 'overload', 1, 20, 0, BEFORE);
    for (let i = 0; i < 2; i++) record(window, 'overload', 1, 20, 100, 99); // a round trip: the loop knows no latency yet
    expect(window.ready(100, 2_000)).toBe(false); // 3 answers
    record(window, 'overload', 1, 20, 100, 99);
    expect(window.ready(100, 2_000)).toBe(true); // 4 of 4, where the shipped 10 would wait
  });

  it('keeps the mean time its calls held their permit after the mark, 0 for calls that did not mark', () => {
    const window = new SamplingWindow(rules);
    expect(window.afterMarkMeanMs()).toBe(0);
    window.recordHold(300); // a stream: 300 ms of body after its first token
    window.recordHold(0); // a plain call
    window.recordHold(-5); // clock noise counts as no hold
    expect(window.afterMarkMeanMs()).toBe(100);
    window.restart(0);
    expect(window.afterMarkMeanMs()).toBe(0);
  });

  it("gives the served concurrency by Little's law: summed latency over the window's duration", () => {
    const window = new SamplingWindow(rules);
    for (let i = 0; i < 40; i++) record(window, 'ok', 250, 10, i * 50, BEFORE);
    expect(window.servedConcurrency(2_000)).toBe(5); // 40 x 250 ms / 2 000 ms
    expect(window.servedConcurrency(0)).toBeNaN();
    expect([window.latencyMean(), window.latencyCv()]).toEqual([250, 0]);
  });
});

describe('the latency signal: p90 -> median of 3 -> EWMA', () => {
  it('smooths with weight 1/3 (failsafe-go: 2 / (5 + 1))', () => {
    expect(LATENCY_SMOOTHING).toBeCloseTo(1 / 3, 12);
  });

  it('takes the median of the last three window quantiles, then the EWMA of that', () => {
    const signal = new LatencySignal();
    signal.add(100);
    expect(signal.smoothedMs).toBe(100);
    signal.add(200); // median of two is the lower: a spike in the second window is rejected
    expect(signal.smoothedMs).toBe(100);
    signal.add(150); // the median, 150, enters the EWMA
    expect(signal.smoothedMs).toBeCloseTo(100 + 50 / 3, 10);
  });

  it('follows a step after two windows: the median is of three, not five', () => {
    const signal = new LatencySignal();
    for (const p90 of [100, 100, 100, 900]) signal.add(p90);
    expect(signal.smoothedMs).toBe(100);
    signal.add(900); // median(100, 900, 900); a median of five would still read 100
    expect(signal.smoothedMs).toBeCloseTo(100 + 800 / 3, 10);
  });

  it('rejects a single window spike or dip', () => {
    const signal = new LatencySignal();
    for (const p90 of [100, 100, 100, 5, 100, 100, 900, 100]) signal.add(p90);
    expect(signal.smoothedMs).toBe(100);
  });

  it('forgets its windows on reset', () => {
    const signal = new LatencySignal();
    for (const p90 of [100, 100, 100]) signal.add(p90);
    signal.reset();
    expect(signal.smoothedMs).toBeNaN();
    signal.add(300);
    expect(signal.smoothedMs).toBe(300);
  });
});
