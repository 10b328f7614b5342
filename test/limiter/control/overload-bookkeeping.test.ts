import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { feedUntilClose, feedWindows, observeAt } from './support/feed';

/**
 * The overload cut's bookkeeping (adr/0046): which refusals count, and the limit a window served in
 * full, which a noisy one-below estimate does not cut under. Scripted through the public API; the
 * figures are the ones the rules decide.
 */

/** A vegas loop past its slow start (baseline 100 ms, limit 34); a window opens at the returned time. */
function steering(): { controller: LimitControlLoop; open: number } {
  const controller = new LimitControlLoop(resolveControlConfig({}));
  const settled = feedWindows(controller, 2, 0, { inflight: 30 });
  const open = feedUntilClose(controller, settled, { inflight: 30 });
  expect(controller.snapshot()).toMatchObject({ baselineMs: 100, slowStart: false, limit: 34 });
  return { controller, open };
}

/**
 * From `open`: `answers` answers at 100 ms spread over 2 s, ten in flight, and a fast refusal after
 * every fifth; then one settle at `open` + 2 100 ms with `lastInflight` in flight. The window these
 * fall in closes at its 2 s floor, so that last settle usually opens the next one.
 */
function refusingWindow(controller: LimitControlLoop, open: number, answers: number, lastInflight = 10): number {
  const step = 2_000 / answers;
  for (let i = 1; i <= answers; i++) {
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + i * step - 1, 10);
    if (i % 5 === 0) observeAt(controller, { verdict: 'overload', latencyMs: 1 }, open + i * step, 10);
  }
  observeAt(controller, { verdict: 'ok', latencyMs: 100 }, open + 2_100, lastInflight);
  return open + 2_100;
}

/** A loop cut by an overload window to 10 (200 answers in 2 s x 100 ms); returns the cut's time and the window's end. */
function cutToTen(lastInflight = 10): { controller: LimitControlLoop; cutAt: number; end: number } {
  const { controller, open } = steering();
  const end = refusingWindow(controller, open, 200, lastInflight);
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

describe('overload: a limit served in full is not cut by an estimate one call under it', () => {
  it('keeps the served 10 when the next window measures 9, and then 9 when one measures 8', () => {
    const { controller, end } = cutToTen();
    // A clean window during the hold with demand at the limit: 10 is served in full.
    let at = feedWindows(controller, 1, end, { inflight: 10 });
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, reason: 'overload-hold' });
    // 182 answers (10 carried from the clean feed) in 2.01 s x 100 ms: 9.05, 9 served, one under
    // the limit served in full: kept.
    at = refusingWindow(controller, at, 180);
    expect(controller.snapshot().lastChange).toMatchObject({ to: 10, direction: 'hold', reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(10);
    // That refusing window leaves 9 as the limit served in full: about 160 answers (8 served) cut to 9, not 8.
    refusingWindow(controller, at, 160);
    expect(controller.snapshot().lastChange).toMatchObject({ from: 10, to: 9, reason: 'overload' });
    expect(controller.snapshot().estimate).toBe(9);
  });

  it('does not count a window whose demand stayed under the limit as served in full', () => {
    const { controller, end } = cutToTen(9);
    // Nine in flight at most: the window used 9 of the 10.
    const at = feedWindows(controller, 1, end, { inflight: 9 });
    expect(controller.snapshot().limit).toBe(10);
    // So 9 served cuts to 9 (after a window that used all 10 it would keep 10: see above).
    refusingWindow(controller, at, 180);
    expect(controller.snapshot().lastChange).toMatchObject({ from: 10, to: 9, reason: 'overload' });
  });
});
