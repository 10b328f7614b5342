import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { applyPressure, hasLatencySignal, hold } from './algorithm';

export interface VegasSettings {
  /** Multiplier for a window saturated with `overload` verdicts (default 0.9, see control-loop). */
  readonly overloadBackoff: number;
  /** Multiplier for a window saturated with `timeout` verdicts (default 0.81, see control-loop). */
  readonly timeoutBackoff: number;
}

/** alpha = 3 units, beta = 6 units; the unit is log10(L) in Netflix VegasLimit (spec §4.1, §6). */
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
 * log10(L), floored at 1: the steps, and the unit of alpha (3x), beta (6x) and the fast-growth
 * threshold (1x) for large limits (below L ~ 115 the band unit is narrower: `vegasUnit`, adr/0036). Netflix's VegasLimit computes all of them with Log10RootFunction, which floors at 1
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
 * The band at small limits (adr/0036). Ours, from the simulation, after Netflix's own VegasLimit
 * comment on alpha ("Max(3, 10% of the current limit)"): 3 log10(L) requests queued is 30% of a
 * limit of 10 (a settled limit of 13-16 against 10 servers) and 4% of one of 200. The band unit is
 * min(log10 L floored at 1, SMALL_UNIT_AT_10 x (L / 10)^SMALL_UNIT_POWER): alpha = 1 and beta = 2
 * requests at L = 10, 2 and 4 at L = 25, 3.3 and 6.7 at L = 50, and the spec's 3 log10(L) /
 * 6 log10(L) from L ~ 150 up. The power is below 1 on purpose: a band proportional to L
 * (alpha = 0.1 L) fixes the latency ratio rather than the queue per client, and ten clients
 * sharing one upstream then drifted apart (Jain's index 0.75 vs 0.96 with the power 0.75).
 */
const SMALL_UNIT_AT_10 = 1 / 3;
const SMALL_UNIT_POWER = 0.75;

/**
 * The largest tailRatio vegas applies. Ours: p90 / mean of a lognormal latency with sigma 0.6
 * (a wide API) is 1.8; a window that straddles two regimes (the first window after a latency
 * cliff ends) reads 5 or more, which is not a queue.
 */
const MAX_TAIL_RATIO = 2;

/**
 * Standard errors of the window quantile a latency rise must exceed before it counts as a queue.
 * Ours: the smoothed latency (median of 3, then an EWMA) carries about half the noise of one
 * window's p90, and the baseline, a minimum of that series, sits about that much below its
 * typical value (the streaming scenario: 337 ms vs a typical 360 ms); 0.5 covers it.
 */
const NOISE_Z = 0.5;

/**
 * The smallest baseline vegas compares a latency with, ms. Ours: Workers clocks tick in whole
 * milliseconds, so a baseline learnt from 0-1 ms readings and a steady 3 ms latency are a few
 * ticks apart, not a 3x rise (a healthy upstream held vegas at 9). Below 5 ms a ratio is mostly
 * clock resolution; above it, the floor changes nothing (the simulated upstreams' baselines are
 * 7 ms and up).
 */
export const MIN_BASELINE_MS = 5;

/**
 * The band unit: min(log10 L floored at 1, (1/3) x (L / 10)^0.75) (see SMALL_UNIT_AT_10).
 * alpha = 3 x unit, beta = 6 x unit, and the "no queue at all" threshold is 1 x unit (Netflix's
 * proportions).
 */
export function vegasUnit(limit: number): number {
  const log = vegasLog(limit);
  const small = SMALL_UNIT_AT_10 * (limit / 10) ** SMALL_UNIT_POWER;
  return small < log ? small : log;
}

/**
 * Requests queued at the upstream, from a latency: L x (1 - baseline / latency - noise) x tail,
 * at most L (no more can queue than are in flight), with the baseline floored at MIN_BASELINE_MS;
 * 0 when the latency is within the noise of the baseline, or unknown.
 */
export function queueEstimate(
  limit: number,
  baselineMs: number,
  latencyMs: number,
  tail: number,
  noise: number,
): number {
  if (!(latencyMs > 0)) return 0;
  const floored = baselineMs > MIN_BASELINE_MS ? baselineMs : MIN_BASELINE_MS;
  const excess = 1 - floored / latencyMs - noise;
  if (!(excess > 0)) return 0;
  const queued = limit * excess * tail;
  return queued < limit ? queued : limit;
}

/**
 * Vegas-style queue estimation (Brakmo & Peterson 1994, in Netflix VegasLimit's form; spec §4.1):
 *
 *   queueUse = L x (1 - baseline / latency - noise) x tail   requests queued at the upstream
 *   queueUse <= unit      -> L + max(beta, step), at most 2L     no queue at all: grow fast
 *   queueUse <  alpha     -> L + step                            room to grow
 *   queueUse >  beta      -> L - max(step, 0.5 (queueUse - beta))
 *   otherwise             -> hold
 *
 * with alpha = 3 unit, beta = 6 unit (`vegasUnit`: the spec's 3 log10 L / 6 log10 L for large
 * limits, narrower below ~150, adr/0036) and step = log10 L floored at 1. `tail` (window p90 /
 * window mean, in [1, 2]) turns the p90-based ratio into Little's law's count; `noise` is half a
 * standard error of the window p90; the baseline is floored at 5 ms, below which whole-ms
 * clocks make ratios noise (adr/0036). Reduce signals (overload, timeout) take precedence over the latency rule and back
 * off multiplicatively.
 */
export function createVegas(settings: VegasSettings): LimitAlgorithm {
  const { overloadBackoff, timeoutBackoff } = settings;
  return {
    name: 'vegas',
    step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
      if (applyPressure(estimate, window, overloadBackoff, timeoutBackoff, decision)) return;
      if (!hasLatencySignal(window)) {
        hold(estimate, 'warming-up', decision);
        return;
      }
      const step = vegasLog(estimate);
      const unit = vegasUnit(estimate);
      const alpha = ALPHA_FACTOR * unit;
      const beta = BETA_FACTOR * unit;
      const ratio = window.tailRatio;
      const tail = ratio > 1 ? (ratio < MAX_TAIL_RATIO ? ratio : MAX_TAIL_RATIO) : 1;
      const queueUse = queueEstimate(
        estimate,
        window.baselineMs,
        window.latencyMs,
        tail,
        NOISE_Z * window.quantileNoise,
      );
      if (queueUse <= unit) {
        // Netflix grows by beta here; we grow by at least one step and at most double (ours): at
        // L = 1 a fixed 6 would multiply the limit by 7 in one window.
        const jump = beta > step ? beta : step;
        decision.estimate = estimate + (jump < estimate ? jump : estimate);
        decision.reason = 'no-queue';
      } else if (queueUse < alpha) {
        decision.estimate = estimate + step;
        decision.reason = 'queue-below-alpha';
      } else if (queueUse > beta) {
        // queueUse <= L, so the proportional cut stays under L / 2.
        const proportional = EXCESS_QUEUE_GAIN * (queueUse - beta);
        decision.estimate = estimate - (proportional > step ? proportional : step);
        decision.reason = 'queue-above-beta';
      } else {
        hold(estimate, 'queue-within-band', decision);
      }
    },
    shrinkRatio(estimate: number): number {
      // queueUse > beta  <=>  latency / baseline > L / (L - beta) (tail 1, no noise); beta < L.
      const beta = BETA_FACTOR * vegasUnit(estimate);
      return beta < estimate ? estimate / (estimate - beta) : Infinity;
    },
  };
}
