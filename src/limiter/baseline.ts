import type { ControlTuning } from './control-tuning';

/** What one window did to the baseline. */
export type BaselineUpdate = 'none' | 'set' | 'fall' | 'raise';

/**
 * The no-load reference latency (spec §5.3), in the statistic the algorithm compares it with (the
 * window mean for vegas, adr/0048; the window quantile, p90 by default, for gradient2), and the
 * no-load mean beside it (Little's law needs the mean).
 *
 * - It is measured where it can be: after the slow start (adr/0045) has found a limit near the
 *   upstream's capacity and drained to the concurrency the upstream serves at no load, the first
 *   clean window, with only calls admitted after the drain, sets it (`set`). The slow start's
 *   own rounds cannot: a round lasts one round trip and its first completions are its fastest
 *   calls, so its quantiles run low. From then on it falls to any lower smoothed latency (a
 *   running minimum, as Vegas's BaseRTT). A clean window has no overload or timeout and failures
 *   under half; samples come from `ok` and `answered` only, so fast failures never lower it
 *   (adr/0030).
 * - It only falls, except when the evidence says it is stale (adr/0047): the latency rule has
 *   halved our in-flight and latency did not follow, while it sits at least `raiseRatio` times
 *   above the baseline (a queue of ours halves with the in-flight that builds it; a slower upstream
 *   does not care); or the limit has sat at its floor for `raiseWindows` windows with latency
 *   at least `raiseRatio` times the baseline (at one call in flight we queue nothing). Then the baseline is re-taken from
 *   the current window: the upstream got slower (a deploy, a failover, a latency cliff), and the
 *   loop re-discovers the capacity from there with a new slow start.
 *
 * There is no covariance reset (adr/0033 is superseded): in-flight and goodput rise together both
 * when the upstream got slower and when demand rose from app-limited to overloaded, and the second
 * is the common case. Allocates nothing.
 */
export class Baseline {
  /** The no-load latency in the window statistic, ms; NaN until known. */
  valueMs = Number.NaN;
  /** The mean latency of the window that gave `valueMs`, ms; NaN until known. */
  meanMs = Number.NaN;
  /** Times the baseline was re-taken upwards since construction. */
  raises = 0;
  /** Mean in-flight when the current descent began; NaN outside a descent. */
  private descentInflight = Number.NaN;
  /** The window quantile when the current descent began. */
  private descentLatencyMs = Number.NaN;
  /** Consecutive shrinking windows with latency at least raiseRatio x the baseline. */
  private highWindows = 0;
  constructor(private readonly tuning: ControlTuning) {}

  /** Sets the baseline from a window measured at no load (the first clean window after a drain). */
  set(latencyMs: number, meanMs: number): boolean {
    if (!(latencyMs >= 0) || latencyMs === Infinity) return false;
    this.take(latencyMs, meanMs);
    return true;
  }

  /** Sets or lowers the baseline from a clean window; returns 'set', 'fall' or 'none'. */
  offer(latencyMs: number, meanMs: number): BaselineUpdate {
    if (!(latencyMs >= 0) || latencyMs === Infinity) return 'none';
    if (this.valueMs !== this.valueMs) {
      this.take(latencyMs, meanMs);
      return 'set';
    }
    if (!(latencyMs < this.valueMs)) return 'none';
    this.take(latencyMs, meanMs);
    return 'fall';
  }

  /**
   * Feeds a clean window in which the latency rule shrank the limit: its own quantile and mean,
   * its mean in-flight, and whether the limit sat at its floor. Returns true when the evidence
   * says the baseline is stale; it has then been re-taken from this window.
   */
  shrinking(quantileMs: number, meanMs: number, meanInflight: number, atFloor: boolean): boolean {
    const tuning = this.tuning;
    if (this.descentInflight !== this.descentInflight) {
      this.descentInflight = meanInflight;
      this.descentLatencyMs = quantileMs;
    }
    // Both rules need latency at least raiseRatio x the baseline, for raiseWindows windows in a
    // row. Below the ratio the latency may be the standing queue of other clients sharing the
    // upstream (each keeps its band queued), which a client can never drain alone; and for a few
    // windows it may be their start-up overshoot draining. Taken for a slower upstream, either
    // would make every client raise its baseline in turn, and the queue would grow without bound.
    if (!(quantileMs >= tuning.raiseRatio * this.valueMs)) {
      this.highWindows = 0;
      return false;
    }
    this.highWindows++;
    if (this.highWindows < tuning.raiseWindows) return false;
    // At the floor we queue nothing of our own (one call in flight); above it, our in-flight must
    // have halved over the descent with latency not following.
    if (atFloor) return this.raise(quantileMs, meanMs);
    if (!(meanInflight <= this.descentInflight / 2)) return false;
    // Elasticity of latency to our in-flight over the descent: 1 when the queue is ours, 0 when not.
    const elasticity = Math.log(quantileMs / this.descentLatencyMs) / Math.log(meanInflight / this.descentInflight);
    return elasticity < tuning.raiseElasticity ? this.raise(quantileMs, meanMs) : false;
  }

  /** A window that did not shrink the limit ends the descent. */
  endDescent(): void {
    this.descentInflight = Number.NaN;
    this.highWindows = 0;
  }

  private raise(latencyMs: number, meanMs: number): boolean {
    this.endDescent();
    if (!(latencyMs > this.valueMs)) return false;
    this.take(latencyMs, meanMs);
    this.raises++;
    return true;
  }

  private take(latencyMs: number, meanMs: number): void {
    this.valueMs = latencyMs;
    this.meanMs = meanMs >= 0 ? meanMs : latencyMs;
  }
}
