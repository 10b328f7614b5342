import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { applyPressure, hasLatencySignal, hold, noLoadShare } from './algorithm';

export interface Gradient2Settings {
  /** Latency may reach tolerance x baseline before the gradient drops below 1 (default 1.5). */
  readonly rttTolerance: number;
  /** Weight of the new limit in the smoothed one (default 0.2). */
  readonly smoothing: number;
  readonly overloadBackoff: number;
  readonly timeoutBackoff: number;
}

/** Netflix Gradient2Limit clamps the gradient to [0.5, 1] (spec §4.2). */
const MIN_GRADIENT = 0.5;
const MAX_GRADIENT = 1;

/**
 * Gradient2 (Netflix Gradient2Limit with Envoy's headroom; spec §4.2):
 *
 *   gradient = clamp(rttTolerance x baseline / latency, 0.5, 1)
 *   target   = gradient x L + sqrt(L)              headroom sqrt(L): Envoy hardcodes it, and so do we
 *   next     = L x (1 - smoothing) + target x smoothing
 *
 * The baseline is resilix's (minimum of filtered window p90s with Uber's covariance reset, see
 * baseline.ts), not Netflix's long-window average of latency, which drifts up to meet a sustained
 * rise (failure mode 4 in test/limiter/control/failure-modes.test.ts).
 */
export function createGradient2(settings: Gradient2Settings): LimitAlgorithm {
  const { rttTolerance, smoothing, overloadBackoff, timeoutBackoff } = settings;
  return {
    name: 'gradient2',
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (applyPressure(estimate, window, overloadBackoff, timeoutBackoff, decision)) return;
      if (!hasLatencySignal(window)) {
        hold(estimate, 'warming-up', decision);
        return;
      }
      let gradient = rttTolerance * noLoadShare(window);
      if (gradient < MIN_GRADIENT) gradient = MIN_GRADIENT;
      else if (gradient > MAX_GRADIENT) gradient = MAX_GRADIENT;
      const target = gradient * estimate + Math.sqrt(estimate);
      decision.estimate = estimate * (1 - smoothing) + target * smoothing;
      decision.reason = gradient < MAX_GRADIENT ? 'latency-above-tolerance' : 'latency-within-tolerance';
    },
    shrinkRatio(estimate: number): number {
      // gradient x L + sqrt(L) < L  <=>  latency / baseline > tolerance / (1 - 1 / sqrt(L)).
      const root = Math.sqrt(estimate);
      return root > 1 ? rttTolerance / (1 - 1 / root) : Infinity;
    },
  };
}
