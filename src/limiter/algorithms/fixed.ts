import { decide, type Decision, type LimitAlgorithm, type WindowSummary } from './algorithm';

/**
 * A constant limit, `initialLimit` moved only by `setLimit`: for comparisons, or a semaphore with a queue.
 * Windows still close, so the snapshot reports latency and baseline.
 */
export function createFixed(): LimitAlgorithm {
  return {
    name: 'fixed',
    latencyDriven: false,
    step(estimate: number, _window: Readonly<WindowSummary>, decision: Decision): void {
      decide(estimate, 'fixed', decision);
    },
  };
}
