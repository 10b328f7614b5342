import { describe, expect, it } from 'vitest';
import { Baseline } from '../../../src/limiter/baseline';
import { defaultBeta, resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type { LimitChange } from '../../../src/limiter/controller';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { feed, feedUntilClose, feedWindows, observeAt } from './support/feed';
import { runScripted } from './support/scripted';

/** A baseline of 100 ms (mean 90 ms), as the window after a drain sets it. */
function baselineAt100(): Baseline {
  const baseline = new Baseline(DEFAULT_TUNING);
  expect(baseline.set(100, 90)).toBe(true);
  return baseline;
}

/** Shrinking windows of [latency, in-flight] (the window's quantile and mean alike), above the floor: whether each raised. */
function descend(baseline: Baseline, windows: ReadonlyArray<[number, number]>): boolean[] {
  return windows.map(([latencyMs, inflight]) => baseline.shrinking(latencyMs, latencyMs, inflight, false));
}

describe('the baseline: set, offer, fall', () => {
  it('is unknown until set, and set takes a no-load measurement up as well as down', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([Number.NaN, Number.NaN]);
    expect(baseline.set(100, 90)).toBe(true);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([100, 90]);
    expect(baseline.set(300, 280)).toBe(true);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([300, 280]);
    expect(baseline.raises).toBe(0);
  });

  it('keeps the statistic as the mean when no mean is given', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(100, Number.NaN);
    expect(baseline.meanMs).toBe(100);
  });

  it('refuses a latency that is not a finite number at or above 0', () => {
    const baseline = baselineAt100();
    for (const latencyMs of [Number.NaN, -1, Infinity]) {
      expect(baseline.set(latencyMs, 90)).toBe(false);
      expect(baseline.offer(latencyMs, 90)).toBe('none');
    }
    expect(baseline.valueMs).toBe(100);
  });

  it('offers: the first value sets it, then only a lower one moves it', () => {
    const baseline = new Baseline(DEFAULT_TUNING);
    expect(baseline.offer(120, 110)).toBe('set');
    expect(baseline.offer(130, 120)).toBe('none');
    expect(baseline.offer(120, 100)).toBe('none');
    expect(baseline.offer(95, 85)).toBe('fall');
    expect([baseline.valueMs, baseline.meanMs]).toEqual([95, 85]);
  });

  it('falls to a lower smoothed latency with its mean by the same factor, never up, never to NaN (adr/0101)', () => {
    const baseline = baselineAt100(); // mean 90
    baseline.fall(80);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([80, 72]);
    for (const latencyMs of [80, 120, Number.NaN, -1]) baseline.fall(latencyMs);
    expect([baseline.valueMs, baseline.meanMs]).toEqual([80, 72]);
  });
});

describe('the baseline: re-taken when stale (adr/0047)', () => {
  it('is re-taken at the floor after raiseWindows (5) shrinking windows at 2x or more', () => {
    const baseline = baselineAt100();
    expect([DEFAULT_TUNING.raiseRatio, DEFAULT_TUNING.raiseWindows]).toEqual([2, 5]);
    for (let w = 0; w < 4; w++) expect(baseline.shrinking(300, 280, 1, true)).toBe(false);
    expect(baseline.valueMs).toBe(100);
    expect(baseline.shrinking(300, 280, 1, true)).toBe(true);
    expect([baseline.valueMs, baseline.meanMs, baseline.raises]).toEqual([300, 280, 1]);
  });

  it('counts the windows in a row: one under 2x the baseline starts over', () => {
    const baseline = baselineAt100();
    for (let w = 0; w < 4; w++) baseline.shrinking(300, 280, 1, true);
    expect(baseline.shrinking(199, 190, 1, true)).toBe(false);
    for (let w = 0; w < 4; w++) expect(baseline.shrinking(300, 280, 1, true)).toBe(false);
    expect(baseline.shrinking(300, 280, 1, true)).toBe(true);
  });

  it('above the floor, is re-taken once in-flight fell and latency did not follow (a slower upstream)', () => {
    const baseline = baselineAt100();
    const inflights = [40, 35, 30, 25, 20];
    const raised = inflights.map((inflight) => baseline.shrinking(300, 280, inflight, false));
    expect(raised).toEqual([false, false, false, false, true]);
    expect(baseline.valueMs).toBe(300);
  });

  it('above the floor, takes a rise under 2x too: a 1.3x slower upstream is re-taken once in-flight fell (adr/0114)', () => {
    const baseline = baselineAt100();
    // vegas read 30% over the baseline as queue at every limit and shrank 40 -> 20 calls; latency stayed.
    const raised = [40, 35, 30, 25, 20].map((inflight) => baseline.shrinking(130, 125, inflight, false));
    expect(raised).toEqual([false, false, false, false, true]);
    expect([baseline.valueMs, baseline.meanMs, baseline.raises]).toEqual([130, 125, 1]);
  });

  it('at the floor, keeps the 2x gate: five windows at 1.3x do not re-take it, and a 1.3x window starts the count over', () => {
    const baseline = baselineAt100();
    for (let w = 0; w < 5; w++) expect(baseline.shrinking(130, 125, 1, true)).toBe(false);
    for (let w = 0; w < 4; w++) baseline.shrinking(300, 280, 1, true);
    expect(baseline.shrinking(130, 125, 1, true)).toBe(false);
    expect(baseline.shrinking(300, 280, 1, true)).toBe(false);
    expect([baseline.valueMs, baseline.raises]).toEqual([100, 0]);
  });

  it('above the floor, counts only windows over the baseline: one at it starts over', () => {
    const baseline = baselineAt100();
    for (const inflight of [40, 35, 30, 25]) baseline.shrinking(130, 125, inflight, false);
    expect(baseline.shrinking(100, 95, 22, false)).toBe(false);
    for (const inflight of [21, 20, 19, 18]) expect(baseline.shrinking(130, 125, inflight, false)).toBe(false);
    expect(baseline.shrinking(130, 125, 17, false)).toBe(true);
  });

  it('is kept when latency fell with the in-flight that built it (our own queue: elasticity 1)', () => {
    const baseline = baselineAt100();
    // 400 ms at 40 in flight down to 200 ms at 20: latency halved with in-flight.
    const windows: Array<[number, number]> = [
      [400, 40],
      [340, 34],
      [280, 28],
      [240, 24],
      [200, 20],
    ];
    expect(descend(baseline, windows)).toEqual(windows.map(() => false));
    expect([baseline.valueMs, baseline.raises]).toEqual([100, 0]);
  });

  it("is kept while our in-flight is over raiseInflightShare (0.6) of the descent's start, and re-taken at it (adr/0120)", () => {
    const baseline = baselineAt100();
    // 0.6 x 40 = 24: six windows at 3x down to 25 calls keep it; 24 re-takes it (before adr/0120, a halving: 20).
    for (const inflight of [40, 36, 32, 30, 28, 25]) expect(baseline.shrinking(300, 280, inflight, false)).toBe(false);
    expect(baseline.valueMs).toBe(100);
    expect(baseline.shrinking(300, 280, 24, false)).toBe(true);
    expect([baseline.valueMs, baseline.raises]).toEqual([300, 1]);
  });

  it('starts a new descent after endDescent (a window that did not shrink)', () => {
    const baseline = baselineAt100();
    for (const inflight of [40, 35, 30, 25]) baseline.shrinking(300, 280, inflight, false);
    baseline.endDescent();
    // The descent now begins at 20: five windows down to 13 calls are not 0.6 of it (12) yet; 12 is.
    expect(baseline.shrinking(300, 280, 20, false)).toBe(false);
    for (const inflight of [18, 16, 14, 13]) expect(baseline.shrinking(300, 280, inflight, false)).toBe(false);
    expect(baseline.shrinking(300, 280, 12, false)).toBe(true);
  });

  it("reads the elasticity from the descent's peak: a capacity drop during it is not a slower upstream (adr/0117)", () => {
    // workers-halve: 4 -> 2 servers of 20 ms while vegas shrinks our own queue of 6. From its start (31.6 ms at 6 in
    // flight) 3 calls on 2 servers read the same latency as 6 on 4, elasticity ~0; from the peak the new capacity
    // made (42.3 ms at 4), latency falls with our in-flight.
    const baseline = new Baseline(DEFAULT_TUNING);
    baseline.set(20.6, 20.6);
    const windows: Array<[number, number]> = [
      [31.6, 6],
      [30.9, 6],
      [27.8, 4],
      [42.3, 4],
      [30.7, 3],
      [29.5, 3],
    ];
    expect(descend(baseline, windows)).toEqual(windows.map(() => false));
    expect(baseline.shrinking(21, 21, 2, false)).toBe(false);
    expect([baseline.valueMs, baseline.raises]).toEqual([20.6, 0]);
  });

  it("needs our in-flight below the peak's: a latency that fell at the peak's in-flight says nothing (adr/0117)", () => {
    const baseline = baselineAt100();
    for (const inflight of [40, 35, 30, 25]) baseline.shrinking(130, 125, inflight, false);
    // The peak moves to 20 calls; under 0.6 of 40, but not below the peak's in-flight.
    expect(baseline.shrinking(140, 135, 20, false)).toBe(false);
    expect(baseline.shrinking(130, 125, 20, false)).toBe(false);
    // 20 -> 19 calls and 140 -> 130 ms: latency fell with our in-flight (elasticity 1.4). 20 -> 15: it did not (0.26).
    expect(baseline.shrinking(130, 125, 19, false)).toBe(false);
    expect(baseline.shrinking(130, 125, 15, false)).toBe(true);
    expect([baseline.valueMs, baseline.raises]).toEqual([130, 1]);
  });

  it('keeps a descent through one window inside the band and ends it at the second in a row (adr/0117)', () => {
    const baseline = baselineAt100();
    // 1.15x slower: the descent from 40 touches the band's edge once at 24 and goes on; its fifth window raises.
    for (const inflight of [40, 34, 28, 24]) expect(baseline.shrinking(115, 110, inflight, false)).toBe(false);
    baseline.held();
    expect(baseline.shrinking(115, 110, 20, false)).toBe(true);
    expect([baseline.valueMs, baseline.raises]).toEqual([115, 1]);

    // Two holds in a row: the descent ends, and the next one starts from where it stands.
    const settled = baselineAt100();
    for (const inflight of [40, 34, 28, 24]) settled.shrinking(115, 110, inflight, false);
    settled.held();
    settled.held();
    for (const inflight of [22, 20, 18, 16]) expect(settled.shrinking(115, 110, inflight, false)).toBe(false);
    expect(settled.shrinking(115, 110, 14, false)).toBe(false);
    expect(settled.shrinking(115, 110, 13, false)).toBe(true);
  });

  it('counts holds in a row only: a shrinking window between two holds keeps the descent (adr/0117)', () => {
    const baseline = baselineAt100();
    for (const inflight of [40, 36, 32, 30]) baseline.shrinking(115, 110, inflight, false);
    baseline.held();
    expect(baseline.shrinking(115, 110, 28, false)).toBe(false);
    baseline.held();
    // 24 calls is 0.6 of the descent's start (40), not of anything after the first hold.
    expect(baseline.shrinking(115, 110, 24, false)).toBe(true);
  });

  it('is never re-taken downwards by the stale rule', () => {
    const tuning = { ...DEFAULT_TUNING, raiseRatio: 0.5 };
    const baseline = new Baseline(tuning);
    baseline.set(100, 90);
    for (let w = 0; w < 5; w++) baseline.shrinking(80, 70, 1, true);
    expect([baseline.valueMs, baseline.raises]).toEqual([100, 0]);
  });
});

describe('the control loop re-measures a stale baseline (adr/0047)', () => {
  it('drains and re-measures on a latency jump of raiseRatio while the limit did not grow, then restores the served concurrency', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    // 30 calls in flight at 100 ms: past the slow start, vegas holds at the app-limited 60.
    const settled = feedWindows(controller, 20, 0, { inflight: 30 });
    const at = feedUntilClose(controller, settled, { inflight: 30 });
    expect(controller.snapshot()).toMatchObject({ limit: 60, baselineMs: 100 });
    const changes: LimitChange[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    // From the next window on the upstream answers in 300 ms (a failover): 200 answers per 2 s.
    feedWindows(controller, 6, at + 1, { inflight: 30, latencyMs: 300 });
    // The window at 300 ms: the drain, 0.1005 answers/ms x the 100 ms no-load mean x 0.5 = 5.0...
    expect(changes[0]).toMatchObject({ from: 60, to: 5, direction: 'shrink', reason: 'baseline-raised' });
    // ...the settling runs out (minWindowMs) with latency still at 300 ms, raiseRatio x the old
    // no-load mean past the noise: the upstream got slower, and the drain is re-aimed with the new
    // latency, 0.1005 x 300 ms x 0.5 = 15.1 (adr/0091)...
    expect(changes[1]).toMatchObject({ from: 5, to: 15, direction: 'grow', reason: 'drain' });
    expect(changes[1]!.at - changes[0]!.at).toBeGreaterThanOrEqual(2_000);
    // ...where the window of calls admitted after it measures 300 ms, and the limit returns to the
    // exit rate x 300 ms = 30.
    expect(changes[2]).toMatchObject({ from: 15, to: 30, direction: 'grow', reason: 'drain' });
    expect(controller.snapshot().baselineMs).toBe(300);
    expect(changes.slice(3).every((change) => change.reason === 'no-queue')).toBe(true);
  });

  it('re-takes the baseline on a jump after an idle restart too: a jump sets, whatever the last slow start did (adr/0031, adr/0047)', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    let at = feedWindows(controller, 20, 0, { inflight: 30 });
    // Idle for 70 s (idleAfterMs is 60 s): the next slow start only offers (it keeps a lower baseline it knows).
    at = feedWindows(controller, 20, at + 70_000, { inflight: 30 });
    expect(controller.snapshot()).toMatchObject({ limit: 60, baselineMs: 100, slowStart: false });
    // Then a failover to 300 ms: the jump's baseline window sets the baseline, which an offer could not raise.
    feedWindows(controller, 6, at + 1, { inflight: 30, latencyMs: 300 });
    expect(controller.snapshot().baselineMs).toBe(300);
  });

  it("lowers the baseline's mean with the smoothed latency, not to the window that lowered it: a jump drains by the no-load mean (adr/0101)", () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    let at = feedWindows(controller, 20, 0, { inflight: 30 });
    // A faster upstream (100 -> 90 ms) lowers the smoothed latency, and the baseline with it.
    at = feedWindows(controller, 3, at + 1, { inflight: 30, latencyMs: 90 });
    // Then 500 ms. The first window that closes holds both latencies (its mean ~180 ms), and the
    // smoothed latency (a median of three windows first) still falls: the baseline falls to it. The
    // next window jumps 2x past it and drains to Little's law: 30 / 500 ms x the no-load mean x 0.5.
    feedWindows(controller, 2, at + 1, { inflight: 30, latencyMs: 500 });
    const { baselineMs, estimate } = controller.snapshot();
    expect(baselineMs).toBeCloseTo(93.58, 2);
    // With the straddling window's mean (~179 ms) as the no-load mean, the drain stopped at 5.4.
    expect(estimate).toBeCloseTo((30 / 500) * baselineMs! * DEFAULT_TUNING.drainGain, 10); // 2.81
  });

  it('takes a rise of 2x over the window before last for a jump: a change inside a window spreads it over two (adr/0103)', () => {
    const drainedBy = (latencies: number[]): LimitChange | undefined => {
      const controller = new LimitControlLoop(resolveControlConfig({}));
      let at = feedWindows(controller, 20, 0, { inflight: 30 });
      const changes: LimitChange[] = [];
      controller.changes.subscribe((change) => changes.push(change));
      for (const latencyMs of latencies) at = feedWindows(controller, 1, at + 1, { inflight: 30, latencyMs });
      return changes.find((change) => change.reason === 'baseline-raised');
    };
    // 100 -> 150 -> 280 ms: 1.5x, then 1.87x over the last window, 2.8x over the one before it.
    const drain = drainedBy([150, 280]);
    expect(drain?.direction).toBe('shrink');
    expect(drain!.to).toBeLessThan(10); // drained by Little's law, not walked down by vegas
    // A slow climb is no jump: 1.5x a window, 1.87x... never 2x over either of the last two.
    expect(drainedBy([130, 170, 220])).toBeUndefined();
  });

  it('asks 4x over the window before last when the limit grew in between: a window at most doubles it (adr/0103)', () => {
    /** P at 100 ms (growing when its demand reaches the limit), W at 150 ms ending in timeouts (cut x0.81), then C. */
    const decisionAfter = (grow: boolean, latencyMs: number): { reason: string | undefined; estimate: number } => {
      const controller = new LimitControlLoop(resolveControlConfig({}));
      let at = feedWindows(controller, 20, 0, { inflight: 30 });
      at = feedUntilClose(controller, at, { inflight: 30 }) + 1;
      at = feedWindows(controller, 1, at, grow ? {} : { inflight: 30 });
      feed(controller, { count: 360, fromMs: at + 1, toMs: at + 1_800, latencyMs: 150, inflight: 30 });
      feed(controller, {
        count: 40,
        fromMs: at + 1_800,
        toMs: at + 2_000,
        latencyMs: 1_000,
        verdict: 'timeout',
        inflight: 30,
      });
      at = feedWindows(controller, 1, at + 2_000, { inflight: 30, latencyMs });
      feedUntilClose(controller, at, { inflight: 30, latencyMs });
      const { lastChange, estimate } = controller.snapshot();
      return { reason: lastChange?.reason, estimate };
    };
    // 280 ms is 2.8x P and 1.9x W. With P at the app-limited ceiling (60 -> 60), a jump: drained.
    expect(decisionAfter(false, 280)).toMatchObject({ reason: 'baseline-raised' });
    expect(decisionAfter(false, 280).estimate).toBeLessThan(10);
    // With P grown 60 -> 65 our own calls may have made part of it: 2.8x < 4x, vegas shrinks instead.
    expect(decisionAfter(true, 280)).toMatchObject({ reason: 'queue-above-beta' });
    expect(decisionAfter(true, 280).estimate).toBeGreaterThan(30);
    // 420 ms is 2.8x W itself: a jump over the last window, whatever P did.
    expect(decisionAfter(true, 420)).toMatchObject({ reason: 'baseline-raised' });
  });

  it('takes a jump whose window also timed out for a jump: a 10x slower upstream makes both (adr/0091)', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    const settled = feedWindows(controller, 20, 0, { inflight: 30 });
    const at = feedUntilClose(controller, settled, { inflight: 30 });
    const changes: LimitChange[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    // One window of a 10x slower upstream: 60 answers at 1 s, and 6 calls past a 1.5 s deadline.
    for (let i = 1; i <= 66; i++) {
      const timeout = i % 11 === 0;
      observeAt(
        controller,
        { verdict: timeout ? 'timeout' : 'ok', latencyMs: timeout ? 1_500 : 1_000 },
        at + i * 30,
        30,
      );
    }
    observeAt(controller, { verdict: 'ok', latencyMs: 1_000 }, at + 2_100, 30);
    // The timeouts alone would cut by the square of the backoff; the jump drains to the concurrency
    // served at the old no-load latency, 0.5 x (60 / 2 100 ms) x 100 ms = 1.4: the lower wins.
    expect(changes[0]).toMatchObject({ from: 60, to: 1, direction: 'shrink', reason: 'baseline-raised' });
  });

  /** Settled with 30 in flight at `latencyMs` (vegas: a limit of 60, that baseline); limit changes recorded from here. */
  function settledAt(
    latencyMs = 100,
    algorithm: 'vegas' | 'gradient2' = 'vegas',
  ): { controller: LimitControlLoop; at: number; changes: LimitChange[] } {
    const controller = new LimitControlLoop(resolveControlConfig({ algorithm }));
    const settled = feedWindows(controller, 20, 0, { inflight: 30, latencyMs });
    const at = feedUntilClose(controller, settled, { inflight: 30, latencyMs });
    const changes: LimitChange[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    return { controller, at, changes };
  }

  it('does not re-aim a drain whose settling runs out under raiseRatio x the no-load level (adr/0091)', () => {
    const { controller, at, changes } = settledAt();
    // A 2.5x jump drains; then the upstream answers in 150 ms, 1.5x: slower, but not raiseRatio x.
    const drainedAt = feedWindows(controller, 1, at + 1, { inflight: 30, latencyMs: 250 });
    feedWindows(controller, 8, drainedAt + 1, { inflight: 30, latencyMs: 150 });
    expect(changes[0]).toMatchObject({ from: 60, to: 6, reason: 'baseline-raised' });
    // No re-aim when the settling runs out (it would aim at 0.5 x 0.12 answers/ms x 150 ms = 9, 2 s after the
    // jump): the baseline window measures 150 ms at the drained limit. Then adr/0128's return, not raiseRatio slower:
    // the jump window served 0.12 x 150 = 18 calls at the new latency, less beta(18) = 2.42.
    expect(changes[1]).toMatchObject({ from: 6, to: 15, direction: 'grow', reason: 'drain' });
    expect(changes[1]!.at - changes[0]!.at).toBeGreaterThanOrEqual(4_000);
    expect(changes.slice(2, 4).map((change) => change.reason)).toEqual(['no-queue', 'no-queue']);
    expect(controller.snapshot().baselineMs).toBe(150);
  });

  it('keeps the baseline over an idle gap: 1.3x the old latency after it is read as queue, not measured (adr/0140)', () => {
    const { controller, at } = settledAt();
    // 70 s without calls (idle after 60 s), then the same demand at 130 ms: under raiseRatio, so no jump. The gap
    // measures nothing, and 30 windows later the baseline is still 100 (before adr/0140 the restart's baseline window
    // only offered, with the same result).
    feedWindows(controller, 30, at + 70_000, { inflight: 30, latencyMs: 130 });
    expect(controller.snapshot()).toMatchObject({ baselineMs: 100, slowStart: false });
  });

  it.each(['timeout', 'overload'] as const)(
    'does not let a window with a %s lower the baseline, however low its latency',
    (verdict) => {
      const lowered = (reduce: boolean): number | undefined => {
        const { controller, at } = settledAt();
        // Four windows at 60 ms; with `reduce`, every tenth answer is followed by a reduce signal.
        for (let w = 0; w < 4; w++) {
          for (let i = 1; i <= 300; i++) {
            const t = at + w * 2_000 + i * 6;
            observeAt(controller, { verdict: 'ok', latencyMs: 60 }, t, 30);
            if (reduce && i % 10 === 0) {
              observeAt(controller, { verdict, latencyMs: verdict === 'timeout' ? 1_500 : 1 }, t + 1, 30);
            }
          }
        }
        observeAt(controller, { verdict: 'ok', latencyMs: 60 }, at + 8_100, 30);
        return controller.snapshot().baselineMs;
      };
      expect(lowered(false)).toBeLessThan(80); // clean, the smoothed 60 ms lowers it
      expect(lowered(true)).toBe(100);
    },
  );

  it("re-measures over baselineSamples (100), not the first baseline window's firstBaselineSamples (adr/0089)", () => {
    const restoredAt = (tuning: Partial<typeof DEFAULT_TUNING>): number => {
      const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, ...tuning });
      const settled = feedWindows(controller, 20, 0, { inflight: 30 });
      const at = feedUntilClose(controller, settled, { inflight: 30 });
      const changes: LimitChange[] = [];
      controller.changes.subscribe((change) => changes.push(change));
      feedWindows(controller, 12, at + 1, { inflight: 30, latencyMs: 300 });
      // changes[1] re-aims the drain when the settling runs out; changes[2] ends the re-measure.
      expect(changes[2]).toMatchObject({ reason: 'drain', direction: 'grow', to: 30 });
      return changes[2]!.at;
    };
    const shipped = restoredAt({});
    // The first window's size does not change a re-measure the floor sets (a constant latency: no spread, so vegas's
    // sizing asks for none, adr/0122); the floor itself does.
    expect(restoredAt({ firstBaselineSamples: 100 })).toBe(shipped);
    expect(restoredAt({ baselineSamples: 400 })).toBeGreaterThan(shipped);
  });

  it('sizes a re-measure for the concurrency it served: as many samples as the band needs there (adr/0122)', () => {
    // A closed loop of `clients` callers on 40 servers at 200 ms x (0.6, 1, 1 / 0.6 in turn; the slow start measures a
    // log spread of 0.43 within its rounds), three times slower from 60 s on: a jump, its drain, a re-measure.
    const spread = [0.6, 1, 1 / 0.6];
    type Setting = { firstBaselineSamples?: number; algorithm?: 'vegas' | 'gradient2'; minLimit?: number };
    const remeasureEnds = (
      clients: number,
      remeasureForLimit: boolean,
      { firstBaselineSamples = 400, algorithm = 'vegas', minLimit = 1 }: Setting = {},
    ): LimitChange[] => {
      const tuning = { ...DEFAULT_TUNING, remeasureForLimit, firstBaselineSamples };
      const controller = new LimitControlLoop(resolveControlConfig({ algorithm, minLimit }), tuning);
      const { changes } = runScripted({
        controller,
        durationMs: 75_000,
        clients,
        call: ({ now, inflight, index }) => ({
          latencyMs: (now < 60_000 ? 200 : 600) * spread[index % 3]! * Math.max(1, inflight / 40),
        }),
      });
      // The change that ends the re-measure: the restore, the last of the drains that follow the jump's (the first change
      // after the jump if no drain follows it).
      const jump = changes.findIndex((change) => change.at > 60_000 && change.reason === 'baseline-raised');
      const after = jump < 0 ? [] : changes.slice(jump + 1);
      const drains = after.findIndex((change) => change.reason !== 'drain');
      return after.slice(0, drains < 0 ? after.length : Math.max(drains, 1)).slice(-1);
    };
    // How much later the sized re-measure of 30 callers ends than the fixed one; both end on the same change.
    const sizingDelay = (setting: Setting, end: Partial<LimitChange>): number => {
      const [sized] = remeasureEnds(30, true, setting);
      const [fixed] = remeasureEnds(30, false, setting);
      expect(sized).toMatchObject(end);
      expect(fixed).toMatchObject(end);
      return sized!.at - fixed!.at;
    };
    // 30 callers: app-limited at a limit of 60 with 30 in flight. The jump drains to 5 calls (7.7 answers a second),
    // and the re-measure's restore to 30 ends it. Sized for the 30 calls served, not the limit of 60: a baseline
    // 2 x 0.43 / sqrt(n) low must stay under alpha(30) / 30 = 1.64 / 30 of it, n = 247 (at 60 it would be 400, the
    // cap), against baselineSamples' 100. The window closes by the low-traffic rule, 7.7 t x t >= n x 2 s: 8.0 s
    // after it opened instead of 5.1 s (10.2 s at 400).
    const appLimited = sizingDelay({}, { from: 5, to: 30, reason: 'drain' });
    expect(appLimited).toBeGreaterThan(2_000);
    expect(appLimited).toBeLessThan(4_000);
    // firstBaselineSamples caps it. At 150 the first baseline differs, the settling runs out and re-aims the drain to
    // 14 calls (21 answers a second), and the re-measure there, n = 150 for 247, ends 3.7 s after it opened instead of
    // 3.1 s at 100.
    const capped = sizingDelay({ firstBaselineSamples: 150 }, { from: 14, to: 29, reason: 'drain' });
    expect(capped).toBeGreaterThan(300);
    expect(capped).toBeLessThan(1_000);
    // 4 callers hold 4 calls (a log spread of 0.53 in their rounds): 2 x 0.53 x 4 / alpha(4) = 8.6, n = 75, under
    // baselineSamples, and nothing moves.
    const small = remeasureEnds(4, true);
    expect(small).toMatchObject([{ from: 1, to: 3, reason: 'drain' }]);
    expect(small).toEqual(remeasureEnds(4, false));
    // minLimit 40 over the same 30 calls: the drain stops at 40 (61 answers a second), and the re-measure is sized for
    // the 40 calls the loop will run at (a spread of 0.39 there: n = 254, 2.9 s), not the 30 in use (n = 202, 2.6 s),
    // against the window floor's 2 s at 100.
    const floored = sizingDelay({ minLimit: 40 }, { from: 40, to: 44, reason: 'no-queue' });
    expect(floored).toBeGreaterThan(1_000);
    expect(floored).toBeLessThan(1_500);
    // gradient2 has no band to size by: its re-measure of the same jump takes baselineSamples.
    const gradient2 = remeasureEnds(30, true, { algorithm: 'gradient2' });
    expect(gradient2).toMatchObject([{ from: 5, to: 31, reason: 'drain' }]);
    expect(gradient2).toEqual(remeasureEnds(30, false, { algorithm: 'gradient2' }));
  });

  it('raises a baseline that keeps the limit at the floor with latency at 2x and more, and restarts a slow start', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    let at = feedWindows(controller, 2, 0, { inflight: 30 });
    controller.setLimit(1, at);
    // One call in flight; the upstream slows down a step at a time (no rise of 2x over one window or
    // two), and vegas shrinks to the floor and sits there with latency at 2x and more (220 ms on).
    const phases = [100, 115, 130, 150, 170, 195, 220, 250, 280, 300, 300, 300, 300, 300, 300, 300];
    let raisedAt = Number.NaN;
    for (let i = 0; i < phases.length * 30 && raisedAt !== raisedAt; i++) {
      at += 2_000 / 30;
      observeAt(controller, { verdict: 'ok', latencyMs: phases[Math.floor(i / 30)]! }, at, 1);
      if (controller.snapshot().baselineRaises > 0) raisedAt = at;
    }
    // Five shrinking windows at 2x or more (220, then 300 ms): the upstream is slower, not busier.
    expect(raisedAt).toBeGreaterThan(16_000);
    expect(controller.snapshot()).toMatchObject({ baselineMs: 300, baselineRaises: 1, slowStart: true, limit: 1 });
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'baseline-raised', direction: 'hold' });
    // The new slow start grows from the floor on the next binding sample.
    observeAt(controller, { verdict: 'ok', latencyMs: 300 }, at + 10, 1);
    expect(controller.limit).toBe(2);
  });

  /** 400 callers on 50 servers at 100 ms that drop to 8 servers at `dropAt`; the baseline 30 s later. */
  function capacityDrop(
    dropAt: number,
    changes: LimitChange[] = [],
    tuning = DEFAULT_TUNING,
    algorithm: 'vegas' | 'gradient2' = 'vegas',
    estimates: number[] = [],
  ): LimitControlLoop {
    const controller = new LimitControlLoop(resolveControlConfig({ algorithm }), tuning);
    controller.changes.subscribe((change) => {
      changes.push(change);
      estimates.push(controller.snapshot().estimate);
    });
    runScripted({
      controller,
      durationMs: dropAt + 30_000,
      clients: 400,
      call: ({ inflight, now }) => ({ latencyMs: 100 * Math.max(1, inflight / (now >= dropAt ? 8 : 50)) }),
    });
    return controller;
  }

  it('keeps a descent through a window inside the band: a 1.15x slower upstream is re-taken at 23 calls of 40, not 15 (adr/0117, adr/0120)', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    let at = feedWindows(controller, 2, 0, { inflight: 30 });
    controller.setLimit(40, at);
    // Ten windows 15% over the baseline shrink 40 -> 26; one reads inside the band; then 20% over.
    const windows = [...Array<number>(10).fill(115), 108, ...Array<number>(14).fill(120)];
    const reasons: string[] = [];
    let raisedFrom = Number.NaN;
    for (const latencyMs of windows) {
      const limit = controller.limit;
      at = feedWindows(controller, 1, at, { latencyMs });
      reasons.push(controller.snapshot().lastChange?.reason ?? '');
      if (controller.snapshot().baselineRaises > 0) {
        raisedFrom = limit;
        break;
      }
    }
    expect(reasons[10]).toBe('queue-within-band');
    // The descent began at 40 in flight (0.6 of it: 24). The first window 20% over moves its peak to 26 calls, and the
    // raise comes two windows later, at 23. Had the hold ended it, a new descent from 26 would need 15.6.
    expect(raisedFrom).toBe(23);
    expect(controller.snapshot()).toMatchObject({ baselineMs: 120, baselineRaises: 1 });
  });

  it('re-measures the no-load latency after a capacity drop (50 -> 8 servers at 20 s): the jump drains below 8', () => {
    const controller = capacityDrop(20_000);
    expect(controller.snapshot()).toMatchObject({ baselineMs: 100, baselineRaises: 0 });
    expect(controller.limit).toBeLessThanOrEqual(10);
  });

  it("returns after the jump's re-measure to the served concurrency less beta, under the new capacity (adr/0128, 0133)", () => {
    const returned: number[] = [];
    const limits = [true, false].map((jumpReturn) => {
      const changes: LimitChange[] = [];
      const estimates: number[] = [];
      capacityDrop(20_000, changes, { ...DEFAULT_TUNING, jumpReturn }, 'vegas', estimates);
      const jump = changes.findIndex((change) => change.reason === 'baseline-raised');
      // The drain took drainGain (0.5) x the jump window's served concurrency S; the re-measure read the same 100 ms.
      const served = 2 * estimates[jump]!;
      returned.push(estimates[jump + 2]! - (served - defaultBeta(served)));
      // The jump drains 39 -> 5 at 24.5 s; the settling holds 4; the baseline window measures 100 ms again.
      expect(changes.slice(jump, jump + 2)).toMatchObject([
        { from: 39, to: 5, reason: 'baseline-raised' },
        { from: 5, to: 4, reason: 'warming-up' },
      ]);
      return changes.slice(jump + 2, jump + 4).map(({ to, reason }) => `${to} ${reason}`);
    });
    // The jump window served S = 8.6 calls (its completion rate x 100 ms, a little over the 8 servers' 0.08
    // answers/ms): back to S - beta(S) = 7.0, then vegas grows into its band. Without the return it grows from 4: 5,
    // then 7, a window (2 s) each.
    expect(limits).toEqual([
      ['7 drain', '8 no-queue'],
      ['5 no-queue', '7 no-queue'],
    ]);
    // On: S - beta(S), within the re-measure's error (alpha under it would be 0.8 more); off: vegas's own step.
    expect(Math.abs(returned[0]!)).toBeLessThan(0.2);
    // gradient2 goes back to all of S (no band: its 1.5x tolerance is its headroom; adr/0133), then steers by its
    // gradient. Without the return it climbs from the drain a call a window.
    const gradient2 = [true, false].map((jumpReturn) => {
      const changes: LimitChange[] = [];
      const estimates: number[] = [];
      capacityDrop(20_000, changes, { ...DEFAULT_TUNING, jumpReturn }, 'gradient2', estimates);
      const jump = changes.findIndex((change) => change.reason === 'baseline-raised');
      if (jumpReturn) expect(estimates[jump + 1]).toBeCloseTo(2 * estimates[jump]!, 10);
      return changes.slice(jump, jump + 4).map(({ to, reason }) => `${to} ${reason}`);
    });
    expect(gradient2).toEqual([
      ['4 baseline-raised', '8 drain', '9 latency-within-tolerance', '10 latency-within-tolerance'],
      ['4 baseline-raised', '5 latency-within-tolerance', '6 latency-within-tolerance', '7 latency-within-tolerance'],
    ]);
  });

  // Known bug (it.fails until fixed): when the drop falls late in a window, the jump rule's drain target uses that
  // window's completion rate, mostly at 50 servers: above the 8 left. The baseline window after it
  // measures our own queue and keeps it: 145.6 ms. Drops every 100 ms from 20 s to 25.9 s: 3 of 60
  // leave a baseline over 105 ms (24.4-24.6 s; 4 of 60, 22.5 s among them, before adr/0096 moved
  // the slow start's drain and so the windows' phase).
  it.fails('re-measures the no-load latency after a capacity drop wherever it falls in a window (at 24.6 s)', () => {
    const controller = capacityDrop(24_600);
    expect(controller.snapshot().baselineMs).toBeLessThan(105);
  });

  it("re-measures when a window falls under the baseline, and returns to what it held: a cliff's end under overload, 5x and 2x (adr/0130, 0131, 0136)", () => {
    // 64 callers on 16 servers at 100 ms (processor sharing past 16), five times slower from 30 s to 60 s: the cliff's
    // jump re-measures the baseline at 500 ms. Returns the changes after the cliff's end and the loop at 120 s.
    const afterCliff = (fallRestart: boolean, factor = 5, fallBand = true, fallReturn = true) => {
      const tuning = { ...DEFAULT_TUNING, fallRestart, fallBand, fallReturn };
      const controller = new LimitControlLoop(resolveControlConfig({}), tuning);
      const { changes } = runScripted({
        controller,
        durationMs: 120_000,
        clients: 64,
        call: ({ now, inflight }) => ({
          latencyMs: 100 * (now >= 30_000 && now < 60_000 ? factor : 1) * Math.max(1, inflight / 16),
        }),
      });
      return { after: changes.filter((change) => change.at > 60_000), end: controller.snapshot() };
    };
    const shipped = afterCliff(true);
    // The first window after the end (it straddles it: mean under 250 ms) drains to half what it served, and the
    // re-measure finds 100 ms again; vegas grows back into its band over 16.
    expect(shipped.after[0]).toMatchObject({ from: 18, to: 11, direction: 'shrink', reason: 'drain' });
    expect(shipped.end.baselineMs).toBe(100);
    expect(shipped.end.limit).toBeGreaterThanOrEqual(16);
    expect(shipped.end.limit).toBeLessThanOrEqual(20);
    // After the re-measure, back to the concurrency the fall window held less beta (adr/0136): 11 -> 15. Its
    // completion rate straddled the cliff, so Little's law on it read low, and vegas grew from the drain instead:
    // 11 -> 10 (the settling's whole calls) -> 13 -> 15, two windows later.
    expect(shipped.after[1]).toMatchObject({ from: 11, to: 15, direction: 'grow', reason: 'drain' });
    const fromDrain = afterCliff(true, 5, true, false);
    expect(fromDrain.after.slice(0, 4).map((change) => [change.to, change.reason])).toEqual([
      [11, 'drain'],
      [10, 'warming-up'],
      [13, 'no-queue'],
      [15, 'no-queue'],
    ]);
    const reached = (run: typeof shipped) => run.after.find((change) => change.to >= 15)!.at;
    expect(reached(fromDrain) - reached(shipped)).toBeGreaterThanOrEqual(4_000);
    // Without the rule the baseline followed the smoothed latency down only as fast as the growth its staleness allowed
    // let it fall, and the two met at a queue of more than a capacity: the limit past 2 x 16 with 2x the latency.
    const without = afterCliff(false);
    expect(without.after.slice(0, 5).every((change) => change.reason === 'no-queue')).toBe(true);
    expect(without.end.baselineMs).toBeGreaterThan(200);
    expect(without.end.limit).toBeGreaterThan(32);
    // A 2x cliff: no window after its end reads half the 200 ms baseline (the first straddles it, and by the next vegas's
    // growth has queued), but the fall is worth more than alpha(L) calls of queue (adr/0131).
    const twice = afterCliff(true, 2);
    expect(twice.after[0]).toMatchObject({ from: 18, to: 10, reason: 'drain' });
    // Its return: to the 18 held less beta, not to its straddling window's rate x 100 ms less beta (14).
    expect(twice.after[2]).toMatchObject({ from: 9, to: 16, reason: 'drain' });
    expect(afterCliff(true, 2, true, false).after[2]).toMatchObject({ from: 9, to: 14, reason: 'drain' });
    expect(twice.end.baselineMs).toBe(100);
    expect(twice.end.limit).toBeLessThanOrEqual(20);
    const halvingOnly = afterCliff(true, 2, false);
    expect(halvingOnly.after.some((change) => change.reason === 'drain')).toBe(false);
    expect(halvingOnly.end.baselineMs).toBeGreaterThan(150);
    expect(halvingOnly.end.limit).toBeGreaterThan(24);
  });

  it("returns after a later slow start's re-measure, not the first's: a 1.6x slower upstream on 16 servers (adr/0137)", () => {
    // 64 callers on 16 servers at 100 ms, 1.6x slower from 30 s: under raiseRatio, so no jump. vegas reads the
    // slowdown as queue and descends 19 -> 10; the stale raise (adr/0114) re-takes the baseline at 160 ms, and a slow
    // start finds the capacity again and drains to half of it.
    const run = (startReturn: boolean) => {
      const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, startReturn });
      const estimates: number[] = [];
      const changes: LimitChange[] = [];
      controller.changes.subscribe((change) => {
        if (change.reason === 'slow-start') return;
        changes.push(change);
        estimates.push(controller.snapshot().estimate);
      });
      runScripted({
        controller,
        durationMs: 60_000,
        clients: 64,
        call: ({ now, inflight }) => ({ latencyMs: 100 * (now >= 30_000 ? 1.6 : 1) * Math.max(1, inflight / 16) }),
      });
      expect(controller.snapshot()).toMatchObject({ baselineMs: 160, baselineRaises: 1 });
      const drain = changes.findIndex((change) => change.at > 30_000 && change.reason === 'drain');
      const to = (from: number) => changes.slice(from, from + 3).map((change) => `${change.to} ${change.reason}`);
      const reached = changes.slice(drain).find((change) => change.to >= 16)!.at;
      return { cold: to(0), after: to(drain), returned: estimates[drain + 1]!, reached };
    };
    const shipped = run(true);
    const without = run(false);
    // The first slow start drains to 8 and vegas grows from there, a window at a time, with the switch or without:
    // clients that start together must not return to a share others were still measuring.
    expect(shipped.cold).toEqual(['8 drain', '9 no-queue', '11 no-queue']);
    expect(without.cold).toEqual(shipped.cold);
    // The later one's re-measure finds 160 ms, not raiseRatio slower than the slow start's: back to the 16 servers'
    // served concurrency (completion rate x 160 ms) less beta(16) = 2.25, 13.75. Without: vegas grows from 8.
    expect(shipped.after).toEqual(['8 drain', '13 drain', '16 no-queue']);
    expect(shipped.returned).toBeCloseTo(16 - defaultBeta(16), 1);
    expect(without.after).toEqual(['8 drain', '9 no-queue', '12 no-queue']);
    expect(without.reached - shipped.reached).toBeGreaterThanOrEqual(6_000);
  });

  it("leaves gradient2 to grow from a later slow start's drain: no return (adr/0133, adr/0137)", () => {
    // 64 callers on 16 servers at 100 ms, 2.5x slower from 30 s: gradient2 descends 16 -> 9 under its tolerance, the
    // stale raise re-takes the baseline at 76.8 s, and the raise's slow start drains to 8. At once at the served
    // concurrency gradient2 would sit at its design point, over 1.5 C: it grows from the drain instead.
    const controller = new LimitControlLoop(resolveControlConfig({ algorithm: 'gradient2' }));
    const { changes } = runScripted({
      controller,
      durationMs: 90_000,
      clients: 64,
      call: ({ now, inflight }) => ({ latencyMs: 100 * (now >= 30_000 ? 2.5 : 1) * Math.max(1, inflight / 16) }),
    });
    const after = changes.filter((change) => change.at > 76_000 && change.reason !== 'slow-start');
    expect(after.map((change) => `${change.to} ${change.reason}`)).toEqual([
      '10 baseline-raised',
      '8 drain',
      '9 latency-within-tolerance',
      '10 latency-within-tolerance',
    ]);
    expect(controller.snapshot().baselineRaises).toBe(1);
  });

  it.each([
    // [window latency, in flight, algorithm, the drain's target or null for none]
    // vegas at L = 60 (alpha 2.49 calls): a baseline a share e high misses 60 e calls of queue, so 95 ms (e = 0.05,
    // 3 calls) drains and 96 ms (2.4 calls) does not (adr/0131).
    [95, 60, 'vegas', 28],
    [96, 60, 'vegas', null],
    [50, 59, 'vegas', null], // demand under the limit: growth queues nothing, nothing to re-measure
    [50, 56, 'gradient2', 28], // 2 x 50 ms = the baseline: gradient2 has no band, raiseRatio exactly
    [51, 56, 'gradient2', null], // just over 1 / raiseRatio of it: the smoothed latency lowers the baseline instead
  ] as const)(
    're-measures on a window at %d ms with %d in flight (baseline 100 ms; %s): drains to %s (adr/0130, adr/0131)',
    (latencyMs, inflight, algorithm, to) => {
      const { controller, at, changes } = settledAt(100, algorithm);
      const { limit, baselineMs, windows } = controller.snapshot();
      expect([limit, baselineMs]).toEqual([algorithm === 'vegas' ? 60 : 56, 100]);
      const end = feedWindows(controller, 1, at + 1, { inflight, latencyMs });
      // An answer an update interval past the end closes the window for sure (checks run at most every 100 ms).
      observeAt(controller, { verdict: 'ok', latencyMs }, end + 100, inflight);
      expect(controller.snapshot().windows).toBeGreaterThan(windows);
      // The drain: half the concurrency served at the window's own mean (Little's law), over the window it closed.
      if (to !== null) expect(changes[0]).toMatchObject({ from: limit, to, reason: 'drain' });
      else expect(changes.filter((change) => change.reason === 'drain')).toEqual([]);
    },
  );

  it.each([
    ['0', () => 0],
    ['negative', () => -1],
    ['infinite', () => Infinity],
  ])(
    'takes a user band whose alpha is %s back to the halving: a window at the baseline is no fall (adr/0131)',
    (_, alpha) => {
      const controller = new LimitControlLoop(resolveControlConfig({ alpha, beta: () => 3 }));
      const changes: LimitChange[] = [];
      controller.changes.subscribe((change) => changes.push(change));
      // Pinned at the limit, at the baseline: with alpha 0 the band's test would read every window as a fall.
      const at = feedWindows(controller, 30, 0, { latencyMs: 100 });
      expect(controller.snapshot().baselineMs).toBe(100);
      expect(changes.filter((change) => change.reason === 'drain' && change.at > 20_000)).toEqual([]);
      // Under half the baseline, demand at the limit, still is one.
      const { limit } = controller.snapshot();
      feedWindows(controller, 2, at + 1, { inflight: limit, latencyMs: 40 });
      expect(changes.some((change) => change.reason === 'drain' && change.at > at)).toBe(true);
    },
  );

  it("reads a fall on the algorithm's statistic and drains by the window's mean: gradient2's p90, vegas's mean (adr/0130)", () => {
    // Windows of 2 s whose answers alternate between two latencies, `inflight` in flight; returns the time after them.
    const alternate = (
      controller: LimitControlLoop,
      fromMs: number,
      windows: number,
      a: number,
      b: number,
      inflight: number,
    ): number => {
      const count = Math.round((inflight * 2_000) / ((a + b) / 2));
      for (let w = 0; w < windows; w++) {
        for (let i = 0; i < count; i++) {
          observeAt(
            controller,
            { verdict: 'ok', latencyMs: i % 2 === 0 ? a : b },
            fromMs + w * 2_000 + (i * 2_000) / count,
            inflight,
          );
        }
      }
      // One more answer an update interval past the end closes the last window (checks run at most every 100 ms).
      const end = fromMs + windows * 2_000 + 100;
      observeAt(controller, { verdict: 'ok', latencyMs: a }, end, inflight);
      return end;
    };
    const firstChange = (
      algorithm: 'vegas' | 'gradient2',
      a: number,
      b: number,
    ): { change: LimitChange | undefined; baselineMs: number | undefined } => {
      const controller = new LimitControlLoop(resolveControlConfig({ algorithm }));
      // Settled app-limited on answers of 80 and 120 ms: vegas's baseline is their mean, 100 ms; gradient2's their p90, 120.
      const settled = alternate(controller, 0, 21, 80, 120, 30);
      const { baselineMs } = controller.snapshot();
      // A window of 100 ms answers that closes at a known time, so the next holds only the answers below.
      const at = feedUntilClose(controller, settled, { inflight: 30 });
      const changes: LimitChange[] = [];
      controller.changes.subscribe((change) => changes.push(change));
      alternate(controller, at + 1, 1, a, b, controller.limit);
      return { change: changes[0], baselineMs };
    };
    expect(firstChange('vegas', 80, 120).baselineMs).toBe(100);
    expect(firstChange('gradient2', 80, 120).baselineMs).toBe(120);
    // 30 and 55 ms: a mean of 42.5, a p90 of 55. gradient2 (2 x 55 = 110 <= 120) drains, by the mean: Little's law
    // gives back the 57 calls in flight over the 2 s of answers, in a window of 2.1 s: 0.5 x 57 x 2 / 2.1 = 27.1
    // (by the p90 it would be 35).
    expect(firstChange('gradient2', 30, 55).change).toMatchObject({ from: 57, to: 27, reason: 'drain' });
    // 40 and 70 ms: for gradient2 a p90 of 70, over half of 120.
    expect(firstChange('gradient2', 40, 70).change?.reason).not.toBe('drain');
    // 60 and 120 ms: a mean of 90, under vegas's band threshold at L = 60 (95.8 ms without noise, about 94 ms at this
    // window's cv; adr/0131), a p90 over the baseline.
    expect(firstChange('vegas', 60, 120).change?.reason).toBe('drain');
    // 20 and 70 ms: gradient2's p90 (70) is over half of 120, while the mean (45) is under half of 100: no fall for it.
    expect(firstChange('gradient2', 20, 70).change?.reason).not.toBe('drain');
    expect(firstChange('vegas', 20, 70).change?.reason).toBe('drain');
  });

  it('takes no fall from a window with a reduce signal, one under minSamples, one within the noise, or one under minBaselineMs (adr/0130, adr/0131)', () => {
    const drainsAfter = (
      baselineMs: number,
      latencyMs: number,
      timeouts: number,
      count?: number,
      algorithm: 'vegas' | 'gradient2' = 'vegas',
    ): boolean => {
      const { controller, at, changes } = settledAt(baselineMs, algorithm);
      expect(controller.snapshot().baselineMs).toBeCloseTo(baselineMs, 6);
      for (let i = 0; i < timeouts; i++)
        observeAt(controller, { verdict: 'timeout', latencyMs: 1_000 }, at + 10 + i, 60);
      feedWindows(controller, count === undefined ? 1 : 3, at + 20, {
        inflight: 60,
        latencyMs,
        ...(count === undefined ? {} : { count }),
      });
      return changes.some((change) => change.reason === 'drain');
    };
    expect(drainsAfter(100, 40, 0)).toBe(true);
    expect(drainsAfter(100, 40, 30)).toBe(false);
    // Twelve answers every 2 s: the low-traffic rule closes the window at about 4.2 s with 25 answers (25 x 4.2 s >=
    // minSamples x the 2 s floor), under minSamples (50), where a heavy tail's lucky draw can halve a mean. At 60 every
    // 2 s the window holds its 50.
    expect(drainsAfter(100, 40, 0, 12)).toBe(false);
    expect(drainsAfter(100, 40, 0, 60)).toBe(true);
    // minSamples exactly is enough: 50 answers at 40 ms, then a failure (no sample) past the floor closes the window.
    const closedWith = (answers: number): boolean => {
      const { controller, at, changes } = settledAt();
      for (let i = 0; i < answers; i++) observeAt(controller, { verdict: 'ok', latencyMs: 40 }, at + 20 + i * 30, 60);
      observeAt(controller, { verdict: 'failure', latencyMs: 40 }, at + 2_100, 60);
      return changes.some((change) => change.reason === 'drain');
    };
    expect([closedWith(49), closedWith(50)]).toEqual([false, true]);
    // Windows of 3 ms read as 5 (minBaselineMs): vegas at L = 60 needs 60 x (1 - 5 / B) >= alpha(60) = 2.49, so a
    // baseline B of 5.3 ms drains and 5.2 ms does not; gradient2 needs 2 x 5 <= B: 10 ms drains, 9.9 does not.
    expect([drainsAfter(5.3, 3, 0), drainsAfter(5.2, 3, 0)]).toEqual([true, false]);
    expect([drainsAfter(10, 3, 0, undefined, 'gradient2'), drainsAfter(9.9, 3, 0, undefined, 'gradient2')]).toEqual([
      true,
      false,
    ]);
    // The noise margin, startupNoiseZ (2) standard errors of the window's mean: 50 answers of a 90 ms mean (a fall of
    // 10 %, 0.042 of it alpha(60) / 60) alternating 80 and 100 ms (cv 0.11: 2 x 0.016 of error) drain; alternating 65
    // and 115 ms (cv 0.28: 2 x 0.040) or 10 and 170 ms (cv 0.90) do not.
    const spreadWindow = (a: number, b: number): boolean => {
      const { controller, at, changes } = settledAt();
      for (let i = 0; i < 50; i++)
        observeAt(controller, { verdict: 'ok', latencyMs: i % 2 === 0 ? a : b }, at + 20 + i * 30, 60);
      observeAt(controller, { verdict: 'failure', latencyMs: 90 }, at + 2_100, 60);
      return changes.some((change) => change.reason === 'drain');
    };
    expect([spreadWindow(80, 100), spreadWindow(65, 115), spreadWindow(10, 170)]).toEqual([true, false, false]);
  });
});
