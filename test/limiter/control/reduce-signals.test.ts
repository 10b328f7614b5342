import { describe, expect, it } from 'vitest';
import { defaultBeta, resolveControlConfig, type ControlOptions } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type { LimitChange } from '../../../src/limiter/controller';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { feedUntilClose, feedWindows, observeAt } from './support/feed';
import { knee, limitAt, runScripted } from './support/scripted';

/**
 * Reduce signals (adr/0035, adr/0046): an overload cuts to the concurrency the upstream served
 * (Little's law: the answered calls' completion rate x the no-load mean latency, plus the time a
 * stream held its permit after its mark) and holds growth there for overloadHoldMs; a timeout cuts
 * by backoffRatio^2, scaled by its share of the window. A window that has either never grows.
 */

/**
 * A vegas loop past its slow start (baseline: a 100 ms mean), one steering window grown by beta(31);
 * a window opens at the returned time.
 */
function steering(options: ControlOptions = {}): { controller: LimitControlLoop; open: number } {
  const controller = new LimitControlLoop(resolveControlConfig(options));
  const settled = feedWindows(controller, 2, 0, { inflight: 30 });
  const open = feedUntilClose(controller, settled, { inflight: 30 });
  expect(controller.snapshot()).toMatchObject({ baselineMs: 100, slowStart: false });
  expect(controller.snapshot().estimate).toBeCloseTo(31 + defaultBeta(31), 10);
  return { controller, open };
}

/**
 * One 2 s window from `open`: `answers` answers at 100 ms spread evenly (each marking after
 * `latencyMs` and holding its permit `holdMs` more, when given), and a fast refusal after every
 * `refuseEvery`-th answer. It closes at its 2 s floor, or at the answer `open` + 2 100 ms at the
 * latest (the first update check past it), which has `lastInflight` in flight.
 */
function window(
  controller: LimitControlLoop,
  open: number,
  shape: {
    answers: number;
    refuseEvery: number;
    verdict?: 'overload' | 'timeout';
    holdMs?: number;
    inflight?: number;
    lastInflight?: number;
  },
): number {
  const { answers, refuseEvery, verdict = 'overload', holdMs = 0, inflight = 10 } = shape;
  const step = 2_000 / answers;
  for (let i = 1; i <= answers; i++) {
    const settledAt = open + i * step;
    if (holdMs > 0) {
      controller.observeMark(100, settledAt - holdMs - 1, inflight);
      observeAt(controller, { verdict: 'ok', latencyMs: 100, durationMs: 100 + holdMs }, settledAt - 1, inflight, true);
    } else {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, settledAt - 1, inflight);
    }
    if (i % refuseEvery === 0) {
      observeAt(controller, { verdict, latencyMs: verdict === 'timeout' ? 5_000 : 1 }, settledAt, inflight);
    }
  }
  const closedAt = open + 2_100;
  observeAt(controller, { verdict: 'ok', latencyMs: 100 }, closedAt, shape.lastInflight ?? inflight);
  return closedAt;
}

describe('overload: cut to the concurrency the upstream served (adr/0046)', () => {
  it("cuts to the answered calls' completion rate x the no-load mean: 201 answers in 2 s x 100 ms = 10", () => {
    const { controller, open } = steering();
    window(controller, open, { answers: 200, refuseEvery: 5 });
    // ~200 answers in 2 s x the 100 ms no-load mean: 10 calls served.
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, direction: 'shrink', reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(10);
  });

  it('holds growth at that ceiling for overloadHoldMs (10 s), then grows again', () => {
    const { controller, open } = steering();
    const end = window(controller, open, { answers: 200, refuseEvery: 5 });
    const cutAt = controller.snapshot().lastChange!.at;
    const changes: LimitChange[] = [];
    const decisions: string[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    let windows = controller.snapshot().windows;
    let at = end;
    for (let w = 0; w < 8; w++) {
      at = feedWindows(controller, 1, at, { inflight: 10 });
      const snapshot = controller.snapshot();
      if (snapshot.windows > windows)
        decisions.push(`${snapshot.lastChange?.at}: ${snapshot.lastChange?.reason} ${snapshot.limit}`);
      windows = snapshot.windows;
    }
    expect(DEFAULT_TUNING.overloadHoldMs).toBe(10_000);
    // vegas finds no queue at all and would grow by beta(10) = 2 every window; the hold keeps 10.
    expect(decisions.slice(0, 4)).toEqual([
      `${cutAt + 2_000}: overload-hold 10`,
      `${cutAt + 4_000}: overload-hold 10`,
      `${cutAt + 6_000}: overload-hold 10`,
      `${cutAt + 8_000}: overload-hold 10`,
    ]);
    expect(changes[0]).toMatchObject({ from: 10, to: 12, reason: 'no-queue', at: cutAt + 10_000 });
  });

  it('stops growth during the hold, and does not cut a limit set by hand above its ceiling', () => {
    const { controller, open } = steering();
    const end = window(controller, open, { answers: 200, refuseEvery: 5 });
    expect(controller.snapshot().estimate).toBe(10);
    controller.setLimit(30, end);
    // A clean window at the baseline, demand at the limit: vegas would grow past 30; the hold keeps
    // 30 (the ceiling, 10, stops growth; it is no cut).
    const next = feedWindows(controller, 1, end, { inflight: 30 });
    expect(controller.snapshot()).toMatchObject({ limit: 30, estimate: 30 });
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'overload-hold', direction: 'hold' });
    // Below the ceiling, growth is vegas's own step, not a jump to the ceiling.
    controller.setLimit(5, next);
    feedWindows(controller, 1, next, { inflight: 5 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 5, direction: 'grow', reason: 'no-queue' });
    expect(controller.snapshot().estimate).toBeLessThan(10);
  });

  it('does not renew the hold from the floor: a refusal at one call in flight is no probe past a cap (adr/0098)', () => {
    const { controller, open } = steering();
    const changes: LimitChange[] = [];
    controller.changes.subscribe((change) => changes.push(change));
    // One call at a time, 100 ms each (one served: the floor), and a refusal after every tenth
    // answer for the first 12 s (one bad replica), none after.
    for (let i = 1, at = open; at < open + 40_000; i++) {
      at = open + i * 100;
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at, 1);
      if (i % 10 === 0 && at < open + 12_000) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, at, 1);
    }
    const cut = changes.find((change) => change.reason === 'overload')!;
    const grew = changes.find((change) => change.direction === 'grow')!;
    expect(cut).toMatchObject({ to: 1 });
    // Windows close every 3.2 s (50 samples x 2 s at 10 a second). Growth waits for the first cut's
    // hold (to 13.2 s) and the first clean window (16 s); renewed by the refusals at the floor (their
    // last window closes at 12.8 s), the hold would last to 22.8 s and growth wait to 25.6 s.
    expect([cut.at - open, grew.at - open]).toEqual([3_200, 16_000]);
  });

  it("counts a stream's hold after its mark: Little's law needs the whole hold (50 in 2 s x 400 ms = 10)", () => {
    const { controller, open } = steering();
    // 50 streams: first token at 100 ms, then 300 ms of body; every fifth followed by a 429.
    window(controller, open, { answers: 50, refuseEvery: 5, holdMs: 300 });
    // The samples come from the marks, the holds from the settles: ~50 / 2 s x (100 + 300) ms = 10;
    // without the hold it would be 2.5.
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(10);
  });

  it('closes a window of refusals at the next update check, without waiting for its 2 s floor', () => {
    const { controller, open } = steering();
    const windows = controller.snapshot().windows;
    for (let i = 1; i <= 30; i++) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + i, 10);
    expect(controller.snapshot().windows).toBe(windows);
    observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + 100, 10);
    expect(controller.snapshot().windows).toBe(windows + 1);
    expect(controller.snapshot().lastChange).toMatchObject({ reason: 'overload', direction: 'shrink' });
  });

  it("takes failures as overloads with failure: 'overload'", () => {
    const { controller, open } = steering({ failure: 'overload' });
    for (let i = 1; i <= 200; i++) {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + i * 10 - 1, 10);
      if (i % 5 === 0) observeAt(controller, { verdict: 'failure', latencyMs: 1 }, open + i * 10, 10);
    }
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + 2_010, 10);
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, reason: 'overload' });
  });

  it('ends the slow start at once and drains to half what its round served (a hard cap of 20 answering 429 in 1 ms)', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    const { changes } = runScripted({
      controller,
      durationMs: 650,
      clients: 400,
      call: ({ inflight }) => (inflight > 20 ? { latencyMs: 1, verdict: 'overload' } : { latencyMs: 100 }),
    });
    // The round that first meets the cap (limit 13 -> 25) answered 12 calls in its 100 ms: the
    // overload cut alone would be 12 (against a cap of 20: one short round is a noisy measure),
    // and the drain goes to half that, so the baseline window measures no queue (adr/0093).
    expect(changes.find((change) => change.reason !== 'slow-start')).toEqual({
      from: 25,
      to: 6,
      direction: 'shrink',
      reason: 'drain',
      at: 600,
    });
    expect(controller.snapshot().slowStart).toBe(false);
  });

  // Regression (fixed): after a cut, calls admitted before it are still in flight above the cap and
  // come back as refusals; the window after the cut closes early on them (an overload majority) a
  // single update interval (100 ms) later, with one or two completions in it: "served" = 1-2 calls,
  // and the overload hold keeps the limit there for 10 s. The upstream serves 20 all along.
  it('keeps the limit near a hard cap of 20 after cutting to it, through the overload hold', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}));
    // 30 callers at 100 ms; from 10 s the upstream refuses (429 in 50 ms) any call past 20 in flight.
    const { changes } = runScripted({
      controller,
      durationMs: 20_000,
      clients: 30,
      call: ({ inflight, now }) =>
        now >= 10_000 && inflight > 20 ? { latencyMs: 50, verdict: 'overload' } : { latencyMs: 100 },
    });
    const cut = changes.find((change) => change.reason === 'overload');
    expect(cut).toMatchObject({ to: 20 }); // this much works: 239 answers in 1.2 s x 100 ms
    const lowest = Math.min(...changes.filter((change) => change.at > cut!.at).map((change) => change.to));
    expect(lowest).toBeGreaterThanOrEqual(10); // 2, held until 20.6 s
    expect(limitAt(changes, 19_000, 1)).toBeGreaterThanOrEqual(10);
  });

  // An LLM API's concurrency cap: 20 calls at 1 s, a 429 in 5 ms past them. A window that closed on the refusals' majority
  // before a round trip of the service held 0-2 completions: "served" was one call, and the hold kept it there for 10 s
  // and more (24 -> 1 at 5.2 s, back to 2 at 47 s). Refusals are a round trip only once the window lasted the no-load
  // latency (adr/0126).
  it.each([1_000, 3_000])(
    'cuts to the cap behind a cap that refuses at once, whatever the service time (%i ms)',
    (serviceMs) => {
      const { changes } = runScripted({
        controller: new LimitControlLoop(resolveControlConfig({})),
        durationMs: 60 * serviceMs,
        clients: 60,
        call: ({ inflight }) => (inflight > 20 ? { latencyMs: 5, verdict: 'overload' } : { latencyMs: serviceMs }),
      });
      const cuts = changes.filter((change) => change.reason === 'overload').map((change) => change.to);
      expect(cuts.length).toBeGreaterThan(0);
      expect(Math.min(...cuts)).toBeGreaterThanOrEqual(16);
      expect(limitAt(changes, 50 * serviceMs, 1)).toBeGreaterThanOrEqual(16);
    },
  );
});

describe('timeout: the strongest signal, backoffRatio^2 scaled by its share (adr/0035)', () => {
  it('cuts by the full x0.81 from a share of 10%', () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    window(controller, open, { answers: 100, refuseEvery: 5, verdict: 'timeout' });
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.snapshot().estimate).toBeCloseTo(estimate * 0.81, 10);
  });

  it('scales the cut with the share below 10%: 5 timeouts of 106 answers cut by x0.91', () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    window(controller, open, { answers: 100, refuseEvery: 20, verdict: 'timeout' });
    // 100 answers, 5 timeouts and the settle that closed the window before: 5 / 106 of the window.
    expect(controller.snapshot().estimate).toBeCloseTo(estimate * (1 - 0.19 * (5 / 106 / 0.1)), 10);
  });

  it('takes the stronger of the overload and timeout cuts and names it', () => {
    const { controller, open } = steering();
    // 200 answers, 40 refusals and 2 timeouts: the overload cut (to 10) is deeper than x0.98.
    const step = 2_000 / 200;
    for (let i = 1; i <= 200; i++) {
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + i * step - 1, 10);
      if (i % 5 === 0) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + i * step, 10);
      if (i % 100 === 0) observeAt(controller, { verdict: 'timeout', latencyMs: 5_000 }, open + i * step, 10);
    }
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + 2_010, 10);
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, reason: 'overload' });
  });

  it("names a window with a timeout for it even when vegas's own shrink is the deeper cut", () => {
    const { controller, open } = steering();
    const estimate = controller.snapshot().estimate;
    // 200 answers at 1.8x the baseline (a queue past beta, under the 2x jump) and one timeout: the
    // timeout's cut is x0.99, vegas's shrink deeper. The window shrinks by vegas, named 'timeout'.
    for (let i = 1; i <= 200; i++) observeAt(controller, { verdict: 'ok', latencyMs: 180 }, open + i * 10 - 1, 30);
    observeAt(controller, { verdict: 'timeout', latencyMs: 5_000 }, open + 1_000, 30);
    observeAt(controller, { verdict: 'ok', latencyMs: 180 }, open + 2_100, 30);
    expect(controller.snapshot().lastChange).toMatchObject({ direction: 'shrink', reason: 'timeout' });
    expect(controller.snapshot().estimate).toBeLessThan(estimate * 0.95);
  });
});

describe('aimd: its own reduce signals', () => {
  // Regression (fixed): control-loop.ts ends aimd's slow start on the window whose decision shrinks
  // (over = decision.estimate < estimate) but then keeps the estimate (`else if (!pressured)`):
  // `pressured` is only set for latency-driven algorithms. The reduce signal that ends the slow
  // start is dropped: TCP Reno halves its window on that loss.
  it('backs off on the reduce signal that ends its slow start (10 -> 9 on a window of overloads)', () => {
    const controller = new LimitControlLoop(
      resolveControlConfig({ algorithm: 'aimd', initialLimit: 10, updateIntervalMs: 0, minWindowMs: 0, minSamples: 1 }),
    );
    observeAt(controller, { verdict: 'overload', latencyMs: 10 }, 10, 10);
    expect(controller.snapshot().slowStart).toBe(false);
    expect(controller.limit).toBe(9);
  });

  it('backs off by x0.9 on the windows of overloads after its slow start', () => {
    const controller = new LimitControlLoop(
      resolveControlConfig({ algorithm: 'aimd', initialLimit: 10, updateIntervalMs: 0, minWindowMs: 0, minSamples: 1 }),
    );
    observeAt(controller, { verdict: 'overload', latencyMs: 10 }, 10, 10); // ends the slow start: 10 -> 9
    observeAt(controller, { verdict: 'overload', latencyMs: 10 }, 20, 9); // 9 x 0.9
    expect(controller.snapshot()).toMatchObject({ slowStart: false, limit: 8, estimate: 8.1 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 9, to: 8, reason: 'overload' });
  });
});

/** A loop cut by an overload window to 10 (200 answers in 2 s x 100 ms); returns the cut's time and the window's end. */
function cutToTen(
  lastInflight = 10,
  options: ControlOptions = {},
): { controller: LimitControlLoop; cutAt: number; end: number } {
  const { controller, open } = steering(options);
  const end = window(controller, open, { answers: 200, refuseEvery: 5, lastInflight });
  const cut = controller.snapshot().lastChange!;
  expect(cut).toMatchObject({ from: 34, to: 10, reason: 'overload' });
  return { controller, cutAt: cut.at, end };
}

describe('overload: refusals of calls admitted before the last cut answer the old limit', () => {
  for (const marked of [false, true]) {
    const path = marked ? 'the full path (a marked settle)' : 'the per-call path';
    it(`does not count them, and counts one admitted at the cut itself, on ${path}`, () => {
      const reasons: string[] = [];
      for (const beforeCutMs of [1, 0]) {
        const { controller, cutAt, end } = cutToTen();
        const windows = controller.snapshot().windows;
        // A window of answers at the ceiling, ten in flight, and 40 refusals that started
        // `beforeCutMs` before the cut (held upstream since): 20 % of the answers, far past any tail.
        for (let i = 1; i <= 200; i++) {
          const at = end + i * 10;
          observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at, 10);
          if (i % 5 === 0) {
            observeAt(controller, { verdict: 'overload', latencyMs: at - cutAt + beforeCutMs }, at, 10, marked);
          }
        }
        observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 2_100, 10);
        expect(controller.snapshot().windows).toBe(windows + 1);
        reasons.push(controller.snapshot().lastChange!.reason);
      }
      // Stale, the window is clean: the hold keeps the ceiling. Admitted at the cut: a new overload.
      expect(reasons).toEqual(['overload-hold', 'overload']);
    });
  }
});

describe('overload: only refusals go stale at a cut', () => {
  it.each([
    // The default ('hold'): a failure is no refusal, and a window half failures does not grow, stale or not.
    [{}, 'failure', 400, 'failures'],
    // failure: 'overload' makes failures refusals, not timeouts: a timeout admitted before the cut still cuts.
    [{ failure: 'overload' }, 'timeout', 40, 'timeout'],
  ] as const)(
    "counts a %o call's %s admitted before the cut (%i of 200 answers): %s",
    (options, verdict, count, reason) => {
      const { controller, cutAt, end } = cutToTen(10, options);
      for (let i = 1; i <= 200; i++) {
        const at = end + i * 10;
        observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at, 10);
        // `count` calls spread evenly over the 200 answers, each started 1 ms before the cut.
        const due = Math.floor((i * count) / 200) - Math.floor(((i - 1) * count) / 200);
        for (let k = 0; k < due; k++) observeAt(controller, { verdict, latencyMs: at - cutAt + 1 }, at, 10);
      }
      observeAt(controller, { verdict: 'ok', latencyMs: 100 }, end + 2_100, 10);
      expect(controller.snapshot().lastChange!.reason).toBe(reason);
    },
  );
});

describe("overload: with failure: 'overload', a failure is a refusal, stale ones included", () => {
  it('cuts and recovers exactly as with overload answers: failures admitted before the cut do not cut again', () => {
    // A cap of 8: calls past it fail after 300 ms, the rest answer in 100 ms; 60 callers from a limit of 20.
    const changesWith = (verdict: 'overload' | 'failure'): LimitChange[] =>
      runScripted({
        controller: new LimitControlLoop(resolveControlConfig({ failure: 'overload', initialLimit: 20 })),
        durationMs: 30_000,
        clients: 60,
        call: ({ inflight }) => (inflight > 8 ? { latencyMs: 300, verdict } : { latencyMs: 100 }),
      }).changes;
    const failures = changesWith('failure');
    // The slow start's refusals cut 28 -> 3. Counted as fresh, the failures still out from before the cut cut again,
    // 3 -> 1 at 0.6 s, and growth waited until 17.8 s instead of 13.6 s.
    expect(failures.find((change) => change.reason === 'overload')).toMatchObject({ from: 28, to: 3 });
    expect(failures).toEqual(changesWith('overload'));
  });
});

describe('overload: a limit served in full is not cut by an estimate one call under it', () => {
  it('keeps the served 10 when the next window measures 9, and then 9 when one measures 8', () => {
    const { controller, end } = cutToTen();
    // A clean window during the hold with demand at the limit: 10 is served in full.
    let at = feedWindows(controller, 1, end, { inflight: 10 });
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, reason: 'overload-hold' });
    // 182 answers (10 carried from the clean feed) in 2.01 s x 100 ms: 9.05, 9 served, one under
    // the limit served in full: kept.
    at = window(controller, at, { answers: 180, refuseEvery: 5 });
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, direction: 'hold', reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(10);
    // That refusing window leaves 9 as the limit served in full: about 160 answers (8 served) cut to 9, not 8.
    window(controller, at, { answers: 160, refuseEvery: 5 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 10, to: 9, reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(9);
  });

  it('does not count a window whose demand stayed under the limit as served in full', () => {
    const { controller, end } = cutToTen(9);
    // Nine in flight at most: the window used 9 of the 10.
    const at = feedWindows(controller, 1, end, { inflight: 9 });
    expect(controller.snapshot().limit).toBe(10);
    // So 9 served cuts to 9 (after a window that used all 10 it would keep 10: see above).
    window(controller, at, { answers: 180, refuseEvery: 5 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 10, to: 9, reason: 'overload' });
  });
});

/** A refusal in `ms` admitted as the `admitted`-th call in flight (the pipeline's `observation.inflight`). */
function refusalAt(controller: LimitControlLoop, at: number, admitted: number): boolean {
  return observeAt(controller, { verdict: 'overload', latencyMs: 1, inflight: admitted }, at, admitted);
}

/** `count` answers at 100 ms over `from`..`from` + 1 s, each admitted as the `admitted`-th call in flight. */
function answersAt(controller: LimitControlLoop, from: number, count: number, admitted: number): number {
  for (let i = 1; i <= count; i++) {
    observeAt(controller, { verdict: 'ok', latencyMs: 100, inflight: admitted }, from + (i * 1_000) / count, admitted);
  }
  return from + 1_000;
}

describe('overload: a refusal past every answer steps the limit down at once (adr/0127)', () => {
  it('takes the limit to k - 1 for a refusal admitted as the k-th call, past every answer of the window and the last', () => {
    const { controller, open } = steering();
    const limit = controller.snapshot().limit;
    expect(limit).toBe(34);
    const at = answersAt(controller, open, 100, 30);
    // Admitted as the 30th, as answers were: no evidence of a cap (one bad replica refuses anywhere).
    expect(refusalAt(controller, at, 30)).toBe(false);
    expect(controller.snapshot().limit).toBe(34);
    // The 33rd: past every answer. The limit goes to 32 before the window closes.
    expect(refusalAt(controller, at + 1, 33)).toBe(true);
    expect(controller.snapshot()).toMatchObject({ limit: 32, estimate: 32 });
    expect(controller.snapshot().lastChange).toMatchObject({ from: 34, to: 32, reason: 'overload', at: at + 1 });
    // The 34th, admitted before the step: 33 is no lower than 32. The 31st: 30 is.
    expect(refusalAt(controller, at + 2, 34)).toBe(false);
    expect(refusalAt(controller, at + 3, 31)).toBe(true);
    expect(controller.snapshot().limit).toBe(30);
  });

  it("keeps the last window's answers: after it closes, a refusal at their height is no step", () => {
    const { controller, open } = steering();
    const windows = controller.snapshot().windows;
    let at = answersAt(controller, open, 200, 31);
    at = answersAt(controller, at, 200, 31);
    observeAt(controller, { verdict: 'ok', latencyMs: 100, inflight: 31 }, at + 200, 31);
    expect(controller.snapshot().windows).toBe(windows + 1);
    const limit = controller.snapshot().limit;
    expect(limit).toBeGreaterThan(31);
    expect(refusalAt(controller, at + 201, 31)).toBe(false);
    expect(refusalAt(controller, at + 202, 32)).toBe(true);
    expect(controller.snapshot().limit).toBe(31);
  });

  it('reads the most calls in flight at any answer, of this window and of the last, not the latest answer', () => {
    const { controller, open } = steering();
    const windows = controller.snapshot().windows;
    // This window: 100 answers admitted as the 30th, then 100 as the 10th. A refusal as the 25th is below the 30.
    let at = answersAt(controller, open, 100, 30);
    at = answersAt(controller, at, 100, 10);
    expect(refusalAt(controller, at + 1, 25)).toBe(false);
    // The window closes at its floor; the next one's answers come as the 10th, and the last one's 30 still count.
    observeAt(controller, { verdict: 'ok', latencyMs: 100, inflight: 10 }, open + 2_100, 10);
    expect(controller.snapshot().windows).toBe(windows + 1);
    at = answersAt(controller, open + 2_100, 100, 10);
    const limit = controller.snapshot().limit;
    expect(refusalAt(controller, at + 1, 30)).toBe(false);
    expect(controller.snapshot().limit).toBe(limit);
    expect(refusalAt(controller, at + 2, 31)).toBe(true);
  });

  it("keeps a step's window from the refusal tail: its refusals are a cap's, not a share that comes anyway", () => {
    // Window A: 200 answers admitted as the 30th, 5 refusals admitted as the `refusedAt`-th, closing on an overload cut
    // to 10. Window B: 200 answers and 2 refusals, all admitted as the 10th. Learnt, A's 2.4% excuses B's two.
    const reasons = [30, 33].map((refusedAt) => {
      const { controller, open } = steering();
      let at = answersAt(controller, open, 100, 30);
      for (let i = 1; i <= 5; i++) refusalAt(controller, at + i, refusedAt);
      at = answersAt(controller, at + 10, 100, 30);
      observeAt(controller, { verdict: 'ok', latencyMs: 100, inflight: 30 }, open + 2_100, 30);
      expect(controller.snapshot().lastChange).toMatchObject({ to: 10, reason: 'overload' });
      at = answersAt(controller, open + 2_100, 100, 10);
      refusalAt(controller, at, 10);
      refusalAt(controller, at + 1, 10);
      at = answersAt(controller, at + 2, 100, 10);
      observeAt(controller, { verdict: 'ok', latencyMs: 100, inflight: 10 }, at + 100, 10);
      return controller.snapshot().lastChange!.reason;
    });
    // Refused at the answers' height: a tail, learnt. Past them (a step): not learnt, so B's two still cut.
    expect(reasons).toEqual(['overload-hold', 'overload']);
  });

  it("reads a marked answer (a stream's first token) at its admission, not at its mark", () => {
    // The last window's answers came at 30 (steering's). 100 streams admitted as the 31st mark while two calls past
    // them are out (33 in flight at the mark); then a refusal of a call admitted as the 32nd.
    const limits = [31, undefined].map((admitted) => {
      const { controller, open } = steering();
      for (let i = 1; i <= 100; i++) controller.observeMark(100, open + i * 10, 33, admitted);
      refusalAt(controller, open + 1_001, 32);
      return controller.snapshot().limit;
    });
    // Read at their admission, the refusal is past every answer: 31. Read at the mark (33), it is not.
    expect(limits).toEqual([31, 34]);
  });

  it('steps on a settle the loop reads in full too (after a drain), and only for a refusal', () => {
    // 40 callers into the knee (16 servers at 100 ms) until the slow start drains 41 -> 8 at 1 s; then 3 callers (the
    // limit is not full, so answers come at 3) and, for 50 ms at 2 s, 7. From 1.5 s every call admitted past the 5th
    // is answered at once with `verdict`. After a drain every settle takes the full path (observeInFull).
    const run = (verdict: 'overload' | 'timeout', on = true) => {
      const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, refusalStepDown: on });
      let firstAt = Number.NaN;
      const { changes } = runScripted({
        controller,
        durationMs: 3_000,
        clients: (now) => (now < 1_000 ? 40 : now >= 2_000 && now < 2_050 ? 7 : 3),
        call: (start) => {
          if (start.now < 1_500 || start.inflight <= 5) return knee(start);
          if (firstAt !== firstAt) firstAt = start.now + 5;
          return { latencyMs: 5, verdict };
        },
      });
      expect(changes.find((change) => change.reason === 'drain')).toMatchObject({ at: 1_000, from: 41, to: 8 });
      return changes.find((change) => change.at === firstAt) ?? 'no change';
    };
    // The burst's first refusal, admitted as the 6th, past every answer: 8 -> 5 at its settle.
    expect(run('overload')).toMatchObject({ from: 8, to: 5, reason: 'overload' });
    // A timeout at the same height is no evidence of a cap; with the switch off the window's close cuts, later.
    expect(run('timeout')).toBe('no change');
    expect(run('overload', false)).toBe('no change');
  });

  it('leaves a slow start, aimd, and the switch off to their windows', () => {
    // A slow start (its exit is its round's) before any answer: every refusal is past them.
    const starting = new LimitControlLoop(resolveControlConfig({ initialLimit: 20 }));
    expect(starting.snapshot().slowStart).toBe(true);
    expect(refusalAt(starting, 1, 20)).toBe(false);
    expect(starting.snapshot().limit).toBe(20);
    // aimd past its slow start (ended by a reduce signal), answers admitted as the 5th, a refusal as the 6th.
    const aimd = new LimitControlLoop(resolveControlConfig({ algorithm: 'aimd', initialLimit: 10 }));
    let at = feedWindows(aimd, 1, 0, { verdict: 'overload', latencyMs: 1, count: 20 });
    at = answersAt(aimd, at, 50, 5);
    const before = aimd.snapshot().limit;
    expect([aimd.snapshot().slowStart, before]).toEqual([false, 7]);
    expect(refusalAt(aimd, at, 6)).toBe(false);
    expect(aimd.snapshot().limit).toBe(before);
    // vegas as in the first case, with the switch on and off.
    const limits = [true, false].map((on) => {
      const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, refusalStepDown: on });
      const settled = feedWindows(controller, 2, 0, { inflight: 30 });
      const open = feedUntilClose(controller, settled, { inflight: 30 });
      refusalAt(controller, answersAt(controller, open, 100, 30), 33);
      return controller.snapshot().limit;
    });
    expect(limits).toEqual([32, 34]);
  });

  // An LLM API's concurrency cap again: 20 calls of 1 s or 3 s, a 429 in 5 ms past them, 60 callers. After its hold,
  // vegas grows past the cap; a refused slot went straight to the next waiter, refused in turn, until the window
  // closed a round trip later: 95% of the calls that reached the upstream were refused. Stepped down at the first
  // refusal, a probe costs about one refusal per call past the cap (5-6% here, where every call is synchronised).
  it.each([
    [1_000, true, 101, 1_944],
    [1_000, false, 31_800, 33_529],
    [3_000, true, 116, 2_001],
    [3_000, false, 164_423, 166_080],
  ])(
    'behind a cap of 20 at %i ms, refusalStepDown %s: %i refusals of %i calls from 20 service times on',
    (serviceMs, on, refusals, calls) => {
      let refused = 0;
      let total = 0;
      const { changes } = runScripted({
        controller: new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, refusalStepDown: on }),
        durationMs: 120 * serviceMs,
        clients: 60,
        call: ({ inflight, now }) => {
          const counted = now >= 20 * serviceMs;
          if (counted) total++;
          if (inflight <= 20) return { latencyMs: serviceMs };
          if (counted) refused++;
          return { latencyMs: 5, verdict: 'overload' };
        },
      });
      expect([refused, total]).toEqual([refusals, calls]);
      expect(limitAt(changes, 100 * serviceMs, 1)).toBe(20);
    },
  );
});
