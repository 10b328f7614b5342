import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type { LimitControllerSnapshot } from '../../../src/limiter/controller';
import { runScripted, type CallStart } from './support/scripted';

/**
 * adr/0109: after a slow start that ended app-limited (idle, no rise), nothing of ours queued, so
 * its no-load cohorts join a baseline window that low traffic closed under minSamples (50); after
 * one that ended on a queue they do not (they are the overshoot's), nor when the window holds
 * minSamples or more, nor when the two differ past the noise. The smoothed latency starts from the
 * baseline so measured.
 */
describe('the first baseline after an app-limited slow start (adr/0109)', () => {
  /**
   * `clients` callers for 30 s on 16 servers (latency x in-flight / 16 past 16): a call admitted
   * during the slow start takes 100 ms at no load, one admitted after it `afterMs`. Returns the first
   * snapshot after the baseline window closed (a baseline over the slow start's 100 ms), and the last.
   */
  function run(
    clients: number | ((now: number) => number),
    options: object = {},
    afterMs = 130,
  ): { first: LimitControllerSnapshot | undefined; last: LimitControllerSnapshot; measured: number | undefined } {
    const controller = new LimitControlLoop(resolveControlConfig(options));
    let first: LimitControllerSnapshot | undefined;
    // The baseline the window set: the first value after the slow start's provisional one.
    let provisional: number | undefined;
    let measured: number | undefined;
    runScripted({
      controller,
      durationMs: 30_000,
      clients,
      call: ({ inflight }: CallStart) => {
        const snapshot = controller.snapshot();
        if (first === undefined && !snapshot.slowStart && snapshot.baselineMs! > 101) first = snapshot;
        if (!snapshot.slowStart && provisional === undefined) provisional = snapshot.baselineMs;
        if (measured === undefined && provisional !== undefined && snapshot.baselineMs !== provisional) {
          measured = snapshot.baselineMs;
        }
        return { latencyMs: (snapshot.slowStart ? 100 : afterMs) * Math.max(1, inflight / 16) };
      },
    });
    return { first, last: controller.snapshot(), measured };
  }

  it("pools the slow start's calls at 100 ms with a short window's at 130 ms: between the two", () => {
    // One caller, windows at most 5 s: the slow start ends idle at a limit of 2, and the baseline
    // window closes at 5 s with ~38 calls at 130 ms, under minSamples; the slow start's cohorts hold
    // a few at 100. The pooled mean is under 130 (the window's own mean, the baseline before adr/0109).
    const { last } = run(1, { maxWindowMs: 5_000 });
    expect(last.slowStart).toBe(false);
    expect(last.baselineMs).toBeLessThan(129);
    expect(last.baselineMs).toBeGreaterThan(115);
  });

  it('starts the smoothed latency from the pooled baseline, not from the window mean', () => {
    // From the window's mean (130) the next window's fall rule would take the baseline back to it,
    // or below it after a window that read low (streaming-mark k = 35: 283 -> 252.5 ms).
    const { first } = run(1, { maxWindowMs: 5_000 });
    expect(first?.baselineMs).toBeLessThan(129);
    expect(first?.latencyMs).toBeCloseTo(first!.baselineMs!, 10);
  });

  it('pools nothing when the window and the slow start differ past the noise: the upstream changed in between', () => {
    // The same short window at 200 ms, or at 50: twice the cohorts' 100 ms or half of it, past the
    // noise bound either way, so the window measures alone.
    expect(run(1, { maxWindowMs: 5_000 }, 200).last.baselineMs).toBeCloseTo(200, 10);
    // (At 50, windows of 2 s hold ~40 calls, and the window's own value is read before the fall
    // rule could take a pooled one down to it.)
    expect(run(1, { maxWindowMs: 2_000 }, 50).measured).toBeCloseTo(50, 10);
  });

  it('pools nothing into a window of minSamples or more: 3 callers fill one with 110 ms calls alone', () => {
    // 110 against 100 agrees within the noise (the bound is at least 1/8): only the window's size
    // keeps the cohorts out.
    const { last } = run(3, {}, 110);
    expect(last.windows).toBeGreaterThan(2);
    expect(last.baselineMs).toBeCloseTo(110, 10);
  });

  it('pools nothing after a slow start that ended on a queue: the drained window measures alone', () => {
    // 400 callers until 1.1 s: the rise past 16 in flight ends the slow start by 1.05 s with a
    // drain. Then one caller: the baseline window closes at 5 s with ~45 calls at 110 ms, short
    // and within the noise of the cohorts' 100 ms, but they were the overshoot's start.
    const { last } = run((now) => (now < 1_100 ? 400 : 1), { maxWindowMs: 5_000 }, 110);
    expect(last.baselineMs).toBeCloseTo(110, 10);
  });

  it('pools nothing for gradient2, which steers on the window quantile, not the mean', () => {
    const { last } = run(1, { algorithm: 'gradient2', maxWindowMs: 5_000 }, 130);
    expect(last.baselineMs).toBeCloseTo(130, 10);
  });
});
