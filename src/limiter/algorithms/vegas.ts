import type { BandFunction } from '../control-config';
import { type ControlTuning, DEFAULT_TUNING } from '../control-tuning';
import { decide, warmingUp, type Decision, type LimitAlgorithm, type WindowSummary } from './algorithm';

export interface VegasSettings
  extends Pick<ControlTuning, 'excessQueueGain' | 'noQueueJump' | 'stepCap' | 'minBaselineMs'> {
  /** Requests queued below which the limit grows, above which it shrinks: functions of L (Netflix's shape). */
  readonly alpha: BandFunction;
  readonly beta: BandFunction;
}

/** log10(L) floored at 1: Netflix VegasLimit's step (Log10RootFunction), kept continuous. */
export function vegasLog(limit: number): number {
  const log = Math.log10(limit);
  return log > 1 ? log : 1;
}

/** Requests queued upstream: L x (1 - max(baseline, floorMs) / latency - noise), in [0, L]. */
export function queueEstimate(
  limit: number,
  baselineMs: number,
  latencyMs: number,
  noise = 0,
  floorMs = DEFAULT_TUNING.minBaselineMs,
): number {
  if (!(latencyMs > 0)) return 0;
  const floored = baselineMs > floorMs ? baselineMs : floorMs;
  const excess = 1 - floored / latencyMs - noise;
  if (!(excess > 0)) return 0;
  const queued = limit * excess;
  return queued < limit ? queued : limit;
}

/**
 * Vegas (Brakmo & Peterson 1994, as Netflix VegasLimit; spec §4.1), step = min(alpha, vegasLog(L))
 * (stepCap): queueUse <= alpha / 3 grows by max(beta, step) per window floor spanned, at most doubling
 * (adr/0090); < alpha grows by step; > beta shrinks by max(step, gain x (queueUse - beta)); else holds.
 * Band: control-config.ts (adr/0036, adr/0049); in full: docs/algorithms.md. The loop owns reduce signals.
 */
export function createVegas(settings: VegasSettings): LimitAlgorithm {
  return new Vegas(settings);
}

/** A class, not a closure over the settings: one object per KeyRegistry key (adr/0086, after ADR-0029). */
class Vegas implements LimitAlgorithm {
  private readonly alphaOf: BandFunction;
  private readonly betaOf: BandFunction;
  private readonly excessQueueGain: number;
  private readonly noQueueJump: boolean;
  private readonly stepCap: number;
  private readonly minBaselineMs: number;

  constructor(settings: VegasSettings) {
    this.alphaOf = settings.alpha;
    this.betaOf = settings.beta;
    this.excessQueueGain = settings.excessQueueGain;
    this.noQueueJump = settings.noQueueJump;
    this.stepCap = settings.stepCap;
    this.minBaselineMs = settings.minBaselineMs;
  }

  get name(): 'vegas' {
    return 'vegas';
  }

  get latencyDriven(): boolean {
    return true;
  }

  step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void {
    if (warmingUp(estimate, window, decision)) return;
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
    const queueUse = queueEstimate(estimate, window.baselineMs, window.latencyMs, window.meanNoise, this.minBaselineMs);
    if (queueUse <= alpha / 3) {
      // Netflix grows by beta; ours: at least a step, at most double (at L = 1, +6 is x7; adr/0035),
      // per window floor the window lasted: one that waited for samples spans several (adr/0090).
      const base = this.noQueueJump && beta > step ? beta : step;
      const jump = base * window.floorSpans;
      decide(estimate + (jump < estimate ? jump : estimate), 'no-queue', decision);
    } else if (queueUse < alpha) decide(estimate + step, 'queue-below-alpha', decision);
    else if (queueUse > beta) {
      // queueUse <= L, so the proportional cut stays under L / 2 for a gain of 0.5.
      const proportional = this.excessQueueGain * (queueUse - beta);
      decide(estimate - (proportional > step ? proportional : step), 'queue-above-beta', decision);
    } else decide(estimate, 'queue-within-band', decision);
  }
}
