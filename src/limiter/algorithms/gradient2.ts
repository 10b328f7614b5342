import type { ControlConfig } from '../control-config';
import type { ControlTuning } from '../control-tuning';
import { decide, warmingUp, type Decision, type LimitAlgorithm, type WindowSummary } from './algorithm';

/** Netflix Gradient2Limit clamps the gradient to [0.5, 1] (spec §4.2). */
const MIN_GRADIENT = 0.5;
const MAX_GRADIENT = 1;

/**
 * Netflix Gradient2Limit with Envoy's hardcoded sqrt(L) headroom (spec §4.2; docs/algorithms.md):
 * next = L (1 - smoothing) + (gradient L + sqrt(L)) smoothing, gradient = clamp(rttTolerance x baseline /
 * latency, 0.5, 1). The baseline is ours: Netflix's long-window average drifts up to meet a rise (adr/0033), and
 * it is compared at minBaselineMs at least, as vegas does: under it a ratio is whole-ms clock ticks (adr/0125).
 */
export function createGradient2(
  settings: Pick<ControlConfig, 'rttTolerance' | 'smoothing'> & Pick<ControlTuning, 'minBaselineMs'>,
): LimitAlgorithm {
  const { rttTolerance, smoothing, minBaselineMs } = settings;
  return {
    name: 'gradient2',
    latencyDriven: true,
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (warmingUp(estimate, window, decision)) return;
      const baselineMs = window.baselineMs > minBaselineMs ? window.baselineMs : minBaselineMs;
      const share = window.latencyMs > 0 ? baselineMs / window.latencyMs : 1;
      let gradient = rttTolerance * share;
      if (gradient < MIN_GRADIENT) gradient = MIN_GRADIENT;
      else if (gradient > MAX_GRADIENT) gradient = MAX_GRADIENT;
      const target = gradient * estimate + Math.sqrt(estimate);
      const next = estimate * (1 - smoothing) + target * smoothing;
      if (gradient >= MAX_GRADIENT) decide(next, 'latency-within-tolerance', decision);
      else decide(next, next > estimate ? 'headroom' : 'latency-above-tolerance', decision);
    },
  };
}
