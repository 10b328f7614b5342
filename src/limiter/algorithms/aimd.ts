import type { ControlConfig } from '../control-config';
import { backoffFor, decide, type Decision, type LimitAlgorithm, type WindowSummary } from './algorithm';

/**
 * AIMD (Netflix AIMDLimit; spec §4.3): +1 a healthy window; overloads or timeouts x backoffRatio, scaled
 * by their share (adr/0035). Reacts only after damage, hence opt-in; latency does not move it. The loop's
 * slow start doubles it until the first reduce signal, as TCP Reno's does.
 */
export function createAimd({ backoffRatio }: Pick<ControlConfig, 'backoffRatio'>): LimitAlgorithm {
  return {
    name: 'aimd',
    latencyDriven: false,
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (window.overloads > 0 || window.timeouts > 0) {
        const overload = backoffFor(window.overloads, window.reached, backoffRatio);
        const timeout = backoffFor(window.timeouts, window.reached, backoffRatio);
        const timeoutWins = window.timeouts > 0 && timeout <= overload;
        decide(estimate * (timeoutWins ? timeout : overload), timeoutWins ? 'timeout' : 'overload', decision);
      } else if (window.samples === 0) decide(estimate, 'no-samples', decision);
      else decide(estimate + 1, 'healthy-window', decision);
    },
  };
}
