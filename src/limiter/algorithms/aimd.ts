import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { applyPressure, hold } from './algorithm';

export interface AimdSettings {
  /** Multiplier on a window of overloads or timeouts (default 0.9, Netflix AIMDLimit). */
  readonly backoffRatio: number;
}

/** Additive increase of one request per healthy window (Netflix AIMDLimit; spec §4.3). */
const INCREASE = 1;

/**
 * AIMD, error-driven (spec §4.3): +1 on a healthy window, x backoffRatio on a window with
 * overloads or timeouts (both at the same ratio, as Netflix AIMDLimit treats every drop). It
 * reacts only after damage, which is why it is opt-in. Latency does not move it.
 */
export function createAimd(settings: AimdSettings): LimitAlgorithm {
  const { backoffRatio } = settings;
  return {
    name: 'aimd',
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (applyPressure(estimate, window, backoffRatio, backoffRatio, decision)) return;
      if (window.samples === 0) {
        hold(estimate, 'no-samples', decision);
        return;
      }
      decision.estimate = estimate + INCREASE;
      decision.reason = 'healthy-window';
    },
    shrinkRatio(): number {
      return Infinity;
    },
  };
}
