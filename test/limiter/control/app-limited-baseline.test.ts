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
    clients: number,
    options: object = {},
    afterMs = 130,
  ): { first: LimitControllerSnapshot | undefined; last: LimitControllerSnapshot } {
    const controller = new LimitControlLoop(resolveControlConfig(options));
    let first: LimitControllerSnapshot | undefined;
    runScripted({
      controller,
      durationMs: 30_000,
      clients,
      call: ({ inflight }: CallStart) => {
        const snapshot = controller.snapshot();
        if (first === undefined && !snapshot.slowStart && snapshot.baselineMs! > 101) first = snapshot;
        return { latencyMs: (snapshot.slowStart ? 100 : afterMs) * Math.max(1, inflight / 16) };
      },
    });
    return { first, last: controller.snapshot() };
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
    // The same short window at 200 ms: twice the cohorts' 100 ms, far past the noise bound of a
    // few dozen samples, so the window measures alone.
    const { last } = run(1, { maxWindowMs: 5_000 }, 200);
    expect(last.baselineMs).toBeCloseTo(200, 10);
  });

  it('pools nothing into a window of minSamples or more: 3 callers fill one with 130 ms calls alone', () => {
    const { last } = run(3);
    expect(last.windows).toBeGreaterThan(2);
    expect(last.baselineMs).toBeCloseTo(130, 10);
  });

  it('pools nothing after a slow start that ended on a queue: the drained window measures alone', () => {
    // 400 callers: the rise past 16 in flight ends the slow start by 1.05 s with a drain; the
    // baseline window counts only calls admitted after it, all at 130 ms (the drain keeps in-flight
    // under 16), and the slow start's cohorts at 100 ms stay out of it.
    const { last } = run(400);
    expect(last.baselineMs).toBeCloseTo(130, 10);
  });
});
