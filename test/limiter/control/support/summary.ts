import type { Decision, WindowSummary } from '../../../../src/limiter/algorithms/algorithm';
import type { LimitChangeReason } from '../../../../src/limiter/controller';

/** A window summary for algorithm unit tests: 100 healthy samples, no pressure, unless overridden. */
export function summary(overrides: Partial<WindowSummary> = {}): WindowSummary {
  const base: WindowSummary = {
    latencyMs: 100,
    baselineMs: 100,
    samples: 100,
    overloads: 0,
    timeouts: 0,
    failures: 0,
    reached: 100,
    peakInflight: 20,
    meanInflight: 20,
    durationMs: 2000,
    meanNoise: 0,
    floorSpans: 1,
  };
  const merged = { ...base, ...overrides };
  if (overrides.reached === undefined) {
    merged.reached = merged.samples + merged.overloads + merged.timeouts + merged.failures;
  }
  return merged;
}

/** A decision no algorithm has written yet (an empty reason, so a test sees that one was). */
export function decision(): Decision {
  return { estimate: Number.NaN, reason: '' as LimitChangeReason };
}
