import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { applyPressure, hasLatencySignal, hold, noLoadShare } from './algorithm';

export interface VegasSettings {
  /** Multiplier for a window saturated with `overload` verdicts (default 0.9, see control-loop). */
  readonly overloadBackoff: number;
  /** Multiplier for a window saturated with `timeout` verdicts (default 0.81, see control-loop). */
  readonly timeoutBackoff: number;
}

/** alpha = 3 log10(L), beta = 6 log10(L): Netflix VegasLimit defaults (spec §4.1, §6). */
const ALPHA_FACTOR = 3;
const BETA_FACTOR = 6;
/**
 * Share of the excess queue (queueUse - beta) removed in one window when the queue is far past
 * beta (adr/0035-reduce-signals-and-steps.md). Ours: Netflix removes log10(L) per sample; we
 * step once per window (2 s or more), so a fixed log10(L) step would need ~40 windows to halve
 * a limit of 160 after capacity halves.
 * Removing half the excess each window closes the gap geometrically while the smoothed latency,
 * which lags by about two windows, catches up (the other half absorbs that lag: see the
 * closed-loop tests, test/limiter/control/closed-loop.test.ts).
 */
const EXCESS_QUEUE_GAIN = 0.5;

/**
 * log10(L), floored at 1: the unit of alpha (3x), beta (6x), the fast-growth threshold (1x) and
 * the steps. Netflix's VegasLimit computes all of them with Log10RootFunction, which floors at 1
 * (so below L = 10, alpha = 3 and beta = 6 requests: Vegas's "extra buffers", spec §4.1); unlike
 * Netflix we keep it continuous rather than truncating to an integer, so alpha moves smoothly
 * from 3 at L = 10 to 6.9 at L = 200. The unfloored log10 was tried (adr/0035): it cut a
 * 10-server upstream's goodput during a 30 s latency cliff from 78% to 70% and did not bring a
 * 3-server upstream inside +-1.
 */
export function vegasLog(limit: number): number {
  const log = Math.log10(limit);
  return log > 1 ? log : 1;
}

/**
 * Vegas-style queue estimation (Brakmo & Peterson 1994, in Netflix VegasLimit's form; spec §4.1):
 *
 *   queueUse = L x (1 - baseline / latency)      requests queued at the upstream beyond no-load
 *   queueUse <= log10(L)  -> L + min(beta, L)     no queue at all: grow fast (Netflix's threshold rule)
 *   queueUse <  alpha     -> L + step             room to grow
 *   queueUse >  beta      -> L - max(step, 0.5 (queueUse - beta))
 *   otherwise             -> hold
 *
 * with log10 floored at 1 (`vegasLog`): alpha = 3 log10(L), beta = 6 log10(L), step = log10(L). Reduce signals
 * (overload, timeout) take precedence over the latency rule and back off multiplicatively.
 */
export function createVegas(settings: VegasSettings): LimitAlgorithm {
  const { overloadBackoff, timeoutBackoff } = settings;
  return {
    name: 'vegas',
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (applyPressure(estimate, window, overloadBackoff, timeoutBackoff, decision)) return;
      if (!hasLatencySignal(window)) return hold(estimate, 'warming-up', decision);
      const log = vegasLog(estimate);
      const step = log;
      const share = noLoadShare(window);
      const queueUse = share < 1 ? estimate * (1 - share) : 0;
      const alpha = ALPHA_FACTOR * log;
      const beta = BETA_FACTOR * log;
      if (queueUse <= log) {
        // Netflix grows by beta here; we also cap it at doubling (ours): at L = 1 beta (6) would
        // multiply the limit by 7 in one window, overshooting a small upstream by its whole size.
        decision.estimate = estimate + (beta < estimate ? beta : estimate);
        decision.reason = 'no-queue';
      } else if (queueUse < alpha) {
        decision.estimate = estimate + step;
        decision.reason = 'queue-below-alpha';
      } else if (queueUse > beta) {
        // queueUse < L, so the proportional cut stays under L / 2.
        const proportional = EXCESS_QUEUE_GAIN * (queueUse - beta);
        decision.estimate = estimate - (proportional > step ? proportional : step);
        decision.reason = 'queue-above-beta';
      } else {
        hold(estimate, 'queue-within-band', decision);
      }
    },
    shrinkRatio(estimate: number): number {
      // queueUse > beta  <=>  latency / baseline > L / (L - beta); never when beta >= L (L <= 6).
      const beta = BETA_FACTOR * vegasLog(estimate);
      return beta < estimate ? estimate / (estimate - beta) : Infinity;
    },
  };
}
