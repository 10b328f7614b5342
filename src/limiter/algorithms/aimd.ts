import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { backoffFor, decide } from './algorithm';

export interface AimdSettings {
  /** Multiplier on a window of overloads or timeouts (default 0.9, Netflix AIMDLimit). */
  readonly backoffRatio: number;
}

/** Additive increase of one request per healthy window (Netflix AIMDLimit; spec §4.3). */
const INCREASE = 1;

/**
 * AIMD, error-driven (spec §4.3): +1 on a healthy window; on a window with overloads or timeouts,
 * x backoffRatio, scaled by their share of the window (full at PRESSURE_SATURATION, adr/0035):
 * both at the same ratio, as Netflix AIMDLimit treats every drop. It reacts only after damage,
 * which is why it is opt-in. Latency does not move it. (The control loop's slow start doubles
 * it until the first reduce signal, as TCP Reno's does.)
 */
export function createAimd(settings: AimdSettings): LimitAlgorithm {
  const { backoffRatio } = settings;
  return {
    name: 'aimd',
    latencyDriven: false,
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (window.overloads > 0 || window.timeouts > 0) {
        const overload = backoffFor(window.overloads, window.reached, backoffRatio);
        const timeout = backoffFor(window.timeouts, window.reached, backoffRatio);
        const timeoutWins = window.timeouts > 0 && timeout <= overload;
        decide(estimate * (timeoutWins ? timeout : overload), timeoutWins ? 'timeout' : 'overload', decision);
        return;
      }
      if (window.samples === 0) {
        decide(estimate, 'no-samples', decision);
        return;
      }
      decide(estimate + INCREASE, 'healthy-window', decision);
    },
  };
}
