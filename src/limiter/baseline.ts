import type { ControlTuning } from './control-tuning';

/**
 * The no-load reference latency (spec §5.3) in the statistic the algorithm compares (vegas: the
 * window mean, adr/0048; gradient2: the quantile), with its mean for Little's law; failures never
 * reach it (adr/0030). Set by the first clean window after the slow start's drain (adr/0045), then a
 * running minimum (Vegas's BaseRTT), raised only on evidence it is stale (adr/0047; no covariance
 * reset, adr/0033).
 */
export class Baseline {
  /** The no-load latency in the window statistic, ms; NaN until known. */
  valueMs = Number.NaN;
  /** The mean latency of the window that gave `valueMs`, ms; NaN until known. */
  meanMs = Number.NaN;
  /** Times the baseline was re-taken upwards since construction. */
  raises = 0;
  /** Mean in-flight when the descent began; NaN outside one. */
  private descentInflight = Number.NaN;
  /** The descent's highest window statistic and the mean in-flight it came with (adr/0117); NaN outside one. */
  private peakLatencyMs = Number.NaN;
  private peakInflight = Number.NaN;
  /** Shrinking windows in a row at raiseRatio x the baseline or more (the floor's test), and over it at all. */
  private highWindows = 0;
  private risenWindows = 0;
  /**
   * The last window held inside the band: one more ends the descent. A shrinking window clears it; once a descent has
   * ended it is moot (a hold then ends an empty descent), so endDescent leaves it.
   */
  private holding = false;
  constructor(private readonly tuning: ControlTuning) {}

  /** From a window at no load: the first clean one after a drain. `offer` sets through it. */
  set(latencyMs: number, meanMs: number): boolean {
    if (!(latencyMs >= 0) || latencyMs === Infinity) return false;
    this.take(latencyMs, meanMs);
    return true;
  }

  /** Sets or lowers the baseline from a clean window, and says which it did. */
  offer(latencyMs: number, meanMs: number): 'none' | 'set' | 'fall' {
    const unset = this.valueMs !== this.valueMs;
    if (!unset && !(latencyMs < this.valueMs)) return 'none';
    return this.set(latencyMs, meanMs) ? (unset ? 'set' : 'fall') : 'none';
  }

  /** Lowers the baseline to a lower smoothed latency; its mean falls by the same factor (adr/0097, adr/0101). */
  fall(latencyMs: number): void {
    if (!(latencyMs >= 0) || !(latencyMs < this.valueMs)) return;
    this.meanMs *= latencyMs / this.valueMs;
    this.valueMs = latencyMs;
  }

  /** A clean window in which the latency rule shrank the limit; true if it re-took a stale baseline. */
  shrinking(quantileMs: number, meanMs: number, meanInflight: number, atFloor: boolean): boolean {
    const tuning = this.tuning;
    this.holding = false;
    if (this.descentInflight !== this.descentInflight) this.descentInflight = meanInflight;
    // The elasticity is measured from the descent's peak, not its start: an upstream that changes during the
    // descent (a capacity drop) read from the old upstream's latency looks like "latency stayed while we shrank".
    if (!(quantileMs <= this.peakLatencyMs)) {
      this.peakLatencyMs = quantileMs;
      this.peakInflight = meanInflight;
    }
    // At the floor (one call in flight, nothing queued is ours) a rise under raiseRatio may still be other clients'
    // standing queue or start-up overshoot (adr/0047). Above it, any rise that outlasts raiseWindows and our in-flight's
    // fall to raiseInflightShare counts: a slower upstream under 2x otherwise held the limit at a few calls (adr/0114, adr/0120).
    this.highWindows = quantileMs >= tuning.raiseRatio * this.valueMs ? this.highWindows + 1 : 0;
    this.risenWindows = quantileMs > this.valueMs ? this.risenWindows + 1 : 0;
    if (atFloor) return this.highWindows >= tuning.raiseWindows ? this.raise(quantileMs, meanMs) : false;
    if (this.risenWindows < tuning.raiseWindows) return false;
    if (!(meanInflight <= this.descentInflight * tuning.raiseInflightShare)) return false;
    // Elasticity of latency to our in-flight since the descent's peak: 1 when the queue is ours, 0 when not. A queue of
    // ours that the descent took below the capacity reads low too, but the latency then is the no-load one, and so is the
    // raise. At or above the peak's in-flight it is not defined: wait.
    if (!(meanInflight < this.peakInflight)) return false;
    const elasticity = Math.log(quantileMs / this.peakLatencyMs) / Math.log(meanInflight / this.peakInflight);
    return elasticity < tuning.raiseElasticity ? this.raise(quantileMs, meanMs) : false;
  }

  /** A window inside the band: a descent's edge reads inside on noise once, so a second in a row ends it (adr/0117). */
  held(): void {
    if (this.holding) this.endDescent();
    else this.holding = true;
  }

  /** Ends the descent: a window that neither shrank the limit nor held inside the band, or a second hold in a row. */
  endDescent(): void {
    this.descentInflight = Number.NaN;
    this.peakLatencyMs = Number.NaN;
    this.peakInflight = Number.NaN;
    this.highWindows = 0;
    this.risenWindows = 0;
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
