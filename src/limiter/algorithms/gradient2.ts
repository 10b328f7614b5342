import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { decide, hasLatencySignal } from './algorithm';

export interface Gradient2Settings {
  /** Latency may reach tolerance x baseline before the gradient drops below 1 (default 1.5). */
  readonly rttTolerance: number;
  /** Weight of the new limit in the smoothed one (default 0.2). */
  readonly smoothing: number;
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
 * The baseline is resilix's (baseline.ts), not Netflix's long-window average of latency, which
 * drifts up to meet a sustained rise. By design it settles where the gradient balances the
 * headroom, latency = tolerance / (1 - 1 / sqrt(L)) x baseline: 2.2x at L = 10, 1.7x at L = 100.
 * The reason names the step: 'latency-within-tolerance' (gradient 1, grows by the headroom),
 * 'headroom' (latency above tolerance but the headroom still outweighs it: grows),
 * 'latency-above-tolerance' (shrinks).
 */
export function createGradient2(settings: Gradient2Settings): LimitAlgorithm {
  const { rttTolerance, smoothing } = settings;
  return {
    name: 'gradient2',
    latencyDriven: true,
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (!hasLatencySignal(window)) {
        decide(estimate, 'warming-up', decision);
        return;
      }
      const share = window.latencyMs > 0 ? window.baselineMs / window.latencyMs : 1;
      let gradient = rttTolerance * share;
      if (gradient < MIN_GRADIENT) gradient = MIN_GRADIENT;
      else if (gradient > MAX_GRADIENT) gradient = MAX_GRADIENT;
      const target = gradient * estimate + Math.sqrt(estimate);
      const next = estimate * (1 - smoothing) + target * smoothing;
      const reason =
        gradient >= MAX_GRADIENT
          ? 'latency-within-tolerance'
          : next > estimate
            ? 'headroom'
            : 'latency-above-tolerance';
      decide(next, reason, decision);
    },
  };
}
