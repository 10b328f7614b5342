import type { Verdict } from '../../../../src/core/verdict';
import type { SamplingWindow } from '../../../../src/limiter/window';

/** Counts one settled call as the loop does (recordSettle, then recordLog); false when it teaches nothing. */
export function record(
  window: SamplingWindow,
  verdict: Verdict,
  latencyMs: number,
  inflight: number,
  now: number,
  startedAt: number,
): boolean {
  window.settledAt = now;
  const observation = { verdict, latencyMs, durationMs: now - startedAt };
  const counted = window.recordSettle(observation, inflight, false);
  if (counted) window.recordLog(observation);
  return counted;
}
