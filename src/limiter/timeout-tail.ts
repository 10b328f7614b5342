import { type ControlTuning, DEFAULT_TUNING } from './control-tuning';

/** A one-sided 1% false excess (the normal quantile 2.326): about one window in a hundred (adr/0037, adr/0100). */
export const TAIL_NOISE_Z = 2.326;
/** Cornish-Fisher's skew term for a Poisson count's quantile, (z^2 - 1) / 6 (adr/0100). */
const TAIL_SKEW_TERM = (TAIL_NOISE_Z * TAIL_NOISE_Z - 1) / 6;

/** The tuning's fields a tail reads, passed per call (no per-key copy). */
type TailTuning = Pick<ControlTuning, 'tailWeight' | 'tailCap'>;

/**
 * The expected timeout tail (adr/0037): the share a healthy upstream shows anyway (a deadline inside its latency
 * tail) is no saturation evidence; only timeouts past it and its noise are reduce signals. A slow, capped EWMA of
 * counts, its first windows averaged (adr/0099): a window weighs by its calls, so the short ones after a drain do not
 * pull the share to 0 (adr/0108). Allocates nothing. A second one learns refusals (adr/0095).
 */
export class TimeoutTail {
  /** Windows learnt from: the first 1 / tailWeight average, not decay from 0 (an EWMA's warm-up). */
  private windows = 0;
  /** The EWMAs of a window's timeouts, capped at tailCap of its calls, and of its calls that reached the upstream. */
  private timeouts = 0;
  private reached = 0;

  /** The expected timeout share, their ratio (at most tailCap); 0 until a window teaches otherwise. */
  share(tuning: TailTuning = DEFAULT_TUNING): number {
    const share = this.reached > 0 ? this.timeouts / this.reached : 0;
    return share < tuning.tailCap ? share : tuning.tailCap;
  }

  /** Only for windows whose latency has not risen: timeouts that come with a queue are not tail. */
  learn(timeouts: number, reached: number, tuning: TailTuning = DEFAULT_TUNING): void {
    if (!(reached > 0)) return;
    const capped = tuning.tailCap * reached;
    const tailWeight = tuning.tailWeight;
    const weight = ++this.windows < 1 / tailWeight ? 1 / this.windows : tailWeight;
    this.timeouts += weight * ((timeouts < capped ? timeouts : capped) - this.timeouts);
    this.reached += weight * (reached - this.reached);
  }

  /** Timeouts beyond the expected tail and its noise, >= 0. */
  excess(timeouts: number, reached: number, tuning: TailTuning = DEFAULT_TUNING): number {
    const expected = this.share(tuning) * reached;
    // The Poisson count's upper quantile by Cornish-Fisher: mean + z sd + (z^2 - 1) / 6. The skew term
    // matters at the counts a window sees: at 0.4 expected, z sd alone excuses 1, and 2 come 6% of the time.
    const allowed = expected > 0 ? expected + TAIL_NOISE_Z * Math.sqrt(expected) + TAIL_SKEW_TERM : 0;
    return timeouts > allowed ? timeouts - allowed : 0;
  }
}
