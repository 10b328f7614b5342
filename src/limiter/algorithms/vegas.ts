import type { BandFunction } from '../control-config';
import type { Decision, LimitAlgorithm, WindowSummary } from './algorithm';
import { decide, hasLatencySignal } from './algorithm';

export interface VegasSettings {
  /** Requests queued below which the limit grows (a function of the limit, Netflix's shape). */
  readonly alpha: BandFunction;
  /** Requests queued above which the limit shrinks. */
  readonly beta: BandFunction;
  /** Share of the queue's excess over beta removed in one shrink (control-tuning.ts). */
  readonly excessQueueGain: number;
  /** Grow by beta when there is no queue at all (control-tuning.ts). */
  readonly noQueueJump: boolean;
  /** The largest Little's-law tail correction applied (control-tuning.ts). */
  readonly maxTailRatio: number;
  /** The smallest baseline a latency is compared with, ms (see MIN_BASELINE_MS). */
  readonly minBaselineMs: number;
  /** 1: a step is at most alpha; 0: Netflix's log10(L) floored at 1 (control-tuning.ts). */
  readonly stepCap: number;
}

/**
 * The smallest baseline vegas compares a latency with, ms. Ours: Workers clocks tick in whole
 * milliseconds, so a baseline learnt from 0-1 ms readings and a steady 3 ms latency are a few
 * ticks apart, not a 3x rise (a healthy upstream held vegas at 9). Below 5 ms a ratio is mostly
 * clock resolution; above it, the floor changes nothing.
 */
export const MIN_BASELINE_MS = 5;

/** log10(L) floored at 1: Netflix VegasLimit's step (Log10RootFunction), kept continuous. */
export function vegasLog(limit: number): number {
  const log = Math.log10(limit);
  return log > 1 ? log : 1;
}

/**
 * Requests queued at the upstream, from a latency: L x (1 - baseline / latency - noise) x tail, at
 * most L (no more can queue than are in flight), with the baseline floored; 0 when the latency is
 * within the noise of the baseline, or unknown.
 */
export function queueEstimate(
  limit: number,
  baselineMs: number,
  latencyMs: number,
  tail: number,
  noise = 0,
  minBaselineMs = MIN_BASELINE_MS,
): number {
  if (!(latencyMs > 0)) return 0;
  const floored = baselineMs > minBaselineMs ? baselineMs : minBaselineMs;
  const excess = 1 - floored / latencyMs - noise;
  if (!(excess > 0)) return 0;
  const queued = limit * excess * tail;
  return queued < limit ? queued : limit;
}

/**
 * Vegas-style queue estimation (Brakmo & Peterson 1994, in Netflix VegasLimit's form; spec §4.1):
 *
 *   queueUse = L x (1 - baseline / latency - noise) x tail    requests of ours queued upstream
 *   queueUse <= alpha / 3 -> L + max(beta, step) x spans, at most 2L   no queue at all
 *   queueUse <  alpha     -> L + step                              room to grow
 *   queueUse >  beta      -> L - max(step, gain x (queueUse - beta))
 *   otherwise             -> hold
 *
 * alpha and beta are functions of L (Netflix's shape; defaults in control-config.ts, adr/0036);
 * step = min(alpha, log10 L floored at 1): Netflix's log10 step, but never more than alpha, so a
 * limit of 1-2 (one of 50 clients sharing an upstream) moves by a fraction of a request, as its
 * band does. `tail` (window p90 / window mean) turns the p90-based ratio into Little's law's
 * count; `noise` is noiseZ standard errors of the window quantile, a rise nobody can tell from
 * chance; `spans` is the number of window floors the window lasted (adr/0090). The loop handles
 * the reduce signals and the slow start.
 */
export function createVegas(settings: VegasSettings): LimitAlgorithm {
  return new Vegas(settings);
}

/**
 * The settings live in the instance's own fields and `step` on the prototype: one object per
 * limiter, where a closure over the settings cost an object, the closure and its context (about
 * 130 bytes more per KeyRegistry key; ADR-0029).
 */
class Vegas implements LimitAlgorithm {
  private readonly alphaOf: BandFunction;
  private readonly betaOf: BandFunction;
  private readonly excessQueueGain: number;
  private readonly noQueueJump: boolean;
  private readonly maxTailRatio: number;
  private readonly minBaselineMs: number;
  private readonly stepCap: number;

  constructor(settings: VegasSettings) {
    this.alphaOf = settings.alpha;
    this.betaOf = settings.beta;
    this.excessQueueGain = settings.excessQueueGain;
    this.noQueueJump = settings.noQueueJump;
    this.maxTailRatio = settings.maxTailRatio;
    this.minBaselineMs = settings.minBaselineMs;
    this.stepCap = settings.stepCap;
  }

  get name(): 'vegas' {
    return 'vegas';
  }

  get latencyDriven(): boolean {
    return true;
  }

  step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
    if (!hasLatencySignal(window)) {
      decide(estimate, 'warming-up', decision);
      return;
    }
    // Called as plain functions, as a user's band expects (no `this`).
    const alphaOf = this.alphaOf;
    const betaOf = this.betaOf;
    const alpha = alphaOf(estimate);
    const beta = betaOf(estimate);
    if (!(alpha >= 0 && beta >= alpha && beta < Infinity)) {
      decide(estimate, 'invalid-band', decision);
      return;
    }
    const log = vegasLog(estimate);
    const step = this.stepCap > 0 ? (alpha < log ? alpha : log) : log;
    const ratio = window.tailRatio;
    const tail = ratio > 1 ? (ratio < this.maxTailRatio ? ratio : this.maxTailRatio) : 1;
    const queueUse = queueEstimate(
      estimate,
      window.baselineMs,
      window.latencyMs,
      tail,
      window.quantileNoise,
      this.minBaselineMs,
    );
    if (queueUse <= alpha / 3) {
      // Netflix grows by beta here; we grow by at least one step and at most double (ours): at
      // L = 1 a fixed 6 would multiply the limit by 7 in one window. Per window floor the window
      // lasted (adr/0090): a window that waited for its samples covers that many floors of time.
      const base = this.noQueueJump && beta > step ? beta : step;
      const jump = base * window.floorSpans;
      decide(estimate + (jump < estimate ? jump : estimate), 'no-queue', decision);
      return;
    }
    if (queueUse < alpha) {
      decide(estimate + step, 'queue-below-alpha', decision);
      return;
    }
    if (queueUse > beta) {
      // queueUse <= L, so the proportional cut stays under L / 2 for a gain of 0.5.
      const proportional = this.excessQueueGain * (queueUse - beta);
      decide(estimate - (proportional > step ? proportional : step), 'queue-above-beta', decision);
      return;
    }
    decide(estimate, 'queue-within-band', decision);
  }
}
