import { insertSorted } from '../stats/exact-quantile';
import { RollingCorrelation } from '../stats/rolling-correlation';

/**
 * Latency has "risen" (a rise episode starts) when the smoothed latency exceeds, by this factor,
 * the latency / baseline ratio at which the algorithm starts to shrink its current limit
 * (`LimitAlgorithm.shrinkRatio`). Ours: the algorithm's own operating point is not a rise (Vegas
 * keeps alpha to beta requests queued, so at L = 57 its latency sits up to 1.23x the baseline;
 * gradient2's sits near 1.5 / (1 - 1 / sqrt(L))), and 10% above it is clear of the window-to-window
 * noise of a p90 (the closed-loop model's windows vary by 2-3%).
 */
export const RISE_RATIO = 1.1;
/**
 * Windows an episode needs before its correlation is trusted. failsafe-go's correlation windows
 * warm up over 10 measurements (warmupSamples = 10).
 */
export const MIN_EPISODE_WINDOWS = 10;
/**
 * Pearson r of in-flight against goodput at or above which "more in-flight still buys more
 * throughput". Ours: Uber resets "only when positive correlation exists" without a number; 0.5
 * is a strong positive relation, and with 10+ windows noise alone reaches it rarely (p < 0.07 at
 * 10 independent windows, p < 1e-4 at 50).
 */
export const RESET_CORRELATION = 0.5;
/**
 * The highest and lowest mean in-flight of an episode must differ by this factor. Ours: a
 * correlation over in-flight values that barely move (a limit holding within Vegas's band, say
 * 13 to 16) is a correlation of noise; the evidence Uber's rule needs is in-flight that moved.
 */
export const MIN_INFLIGHT_SPREAD = 1.5;

/**
 * And goodput must scale with in-flight: the slope of log(goodput) on log(in-flight) over the
 * episode at least this. Ours: below the knee, latency is flat and goodput = in-flight / latency
 * is proportional (slope 1); above it goodput is flat (slope 0). Correlation alone is fooled by
 * noise over few windows (gradient2 descending from 83 to 41 against a collapsed upstream showed
 * r = 0.5 with goodput moving 4% for a halving of in-flight); a slope of 0.5 needs goodput to
 * have fallen by a third of that halving at least.
 */
export const MIN_GOODPUT_ELASTICITY = 0.5;

/** What one window did to the baseline. */
export type BaselineUpdate = 'none' | 'set' | 'fall' | 'reset';

/**
 * The no-load reference latency (spec §5.3), in the same statistic the algorithm compares it with
 * (the smoothed window p90), so that at no load latency / baseline is 1, not p90 / min.
 *
 * - Set and fall: the minimum of the smoothed latency, taken only once the median filter holds
 *   three windows. One lucky sample moves a window's p90 by one rank at most, and one lucky window
 *   cannot pass the median of three, so neither can set the baseline (failure mode 1). Only clean
 *   windows count: no overload or timeout, failures under half, samples from `ok`/`answered`
 *   only, so fast failures never lower it (failure mode 2). The loop may also lower it to a
 *   measurement it knows was taken at the knee, or raise it to one (`setAtKnee`, adr/0034, 0036).
 * - Rise (Uber's covariance reset, adr/0033-baseline-covariance-reset.md): a running minimum can
 *   only fall, so a permanently slower upstream would clamp Vegas forever (failure mode 5). While
 *   the smoothed latency stays above RISE_RATIO x the algorithm's shrink ratio x baseline (an
 *   episode), each clean window adds (mean in-flight, goodput) to a rolling correlation of
 *   `correlationWindow` windows (spec §6: 50 intervals). When in-flight moved
 *   (MIN_INFLIGHT_SPREAD) and more of it still bought proportionally more goodput
 *   (r >= RESET_CORRELATION, elasticity >= MIN_GOODPUT_ELASTICITY, over at least
 *   MIN_EPISODE_WINDOWS), the rise is not our queueing and the baseline moves up. When it did
 *   not, the baseline stays: that is an overload we cause, and shedding must go on however long
 *   it lasts (failure mode 4).
 * - Drift guard (the creep Uber describes: a reset captured at a higher limit makes baseline and
 *   limit climb together): the reset takes the median latency of the episode's windows at or
 *   below its mean in-flight, never the current latency nor that of the highest in-flight;
 *   proportional goodput means those windows ran below the knee, where latency is the no-load
 *   latency. Each reset ends the episode, so the next one needs fresh evidence.
 *
 * Allocates nothing after construction.
 */
export class Baseline {
  /** The no-load latency, ms; NaN until known. */
  valueMs = Number.NaN;
  /** Covariance resets since construction. */
  resets = 0;
  /** Clean windows in the current rise episode (0 when latency has not risen). */
  episodeWindows = 0;
  /** latency / baseline above which the current episode counts as risen. */
  private episodeRatio = RISE_RATIO;
  /**
   * The episode's (in-flight, goodput) pairs; the in-flight and goodput series are read from it.
   * Made at the first rise episode, then kept: a key whose latency never rose (most of the up to
   * 1 000 keys a KeyRegistry holds) never pays for it. One allocation per limiter lifetime.
   */
  private correlation: RollingCorrelation | undefined = undefined;
  /**
   * The episode's filtered latencies, aligned with the correlation's slots. 32-bit: latencies in
   * ms need no more than 7 significant digits.
   */
  private latencies: Float32Array | undefined = undefined;
  private readonly correlationWindow: number;

  constructor(correlationWindow: number) {
    this.correlationWindow = correlationWindow;
  }

  private get held(): number {
    return this.correlation === undefined ? 0 : this.correlation.size;
  }

  /**
   * Feeds one clean window: `filteredMs` is its median-filtered quantile, `smoothedMs` the
   * smoothed latency, `warm` whether the median filter holds a full set; `meanInflight` and
   * `goodputPerSecond` (ok and answered completions per second) are its load point. The baseline
   * is set and falls on the smoothed latency: the minimum of a noisy series drifts to its low
   * tail, and the EWMA's (a third of the filtered p90's window-to-window spread) drifts least.
   */
  update(
    filteredMs: number,
    smoothedMs: number,
    warm: boolean,
    meanInflight: number,
    goodputPerSecond: number,
    shrinkRatio: number,
  ): BaselineUpdate {
    if (!warm || !(filteredMs >= 0) || !(smoothedMs >= 0)) return 'none';
    if (this.valueMs !== this.valueMs) {
      this.valueMs = smoothedMs;
      return 'set';
    }
    if (smoothedMs < this.valueMs) {
      this.valueMs = smoothedMs;
      return 'fall';
    }
    // An episode starts when latency rises RISE_RATIO above what the algorithm tolerates at its
    // operating point, and lasts while it stays above that same level: as the algorithm shrinks
    // the limit it tolerates more (Vegas's beta / L grows), and a moving threshold would end the
    // episode before the evidence (the descent) is in.
    if (this.episodeWindows === 0) {
      this.episodeRatio = (shrinkRatio > 1 ? shrinkRatio : 1) * RISE_RATIO;
    }
    if (!(smoothedMs > this.valueMs * this.episodeRatio)) {
      this.endEpisode();
      return 'none';
    }
    this.episodeWindows++;
    if (this.correlation === undefined || this.latencies === undefined) {
      this.correlation = new RollingCorrelation(this.correlationWindow);
      this.latencies = new Float32Array(this.correlationWindow);
    }
    const slot = this.correlation.nextIndex;
    const before = this.correlation.count;
    this.correlation.add(meanInflight, goodputPerSecond);
    if (this.correlation.count !== before) this.latencies[slot] = filteredMs;
    if (this.episodeWindows < MIN_EPISODE_WINDOWS || this.held === 0) return 'none';

    let fewest = Infinity;
    let most = 0;
    for (let slot = 0; slot < this.held; slot++) {
      const inflight = this.correlation.xAt(slot);
      if (inflight < fewest) fewest = inflight;
      if (inflight > most) most = inflight;
    }
    if (most < fewest * MIN_INFLIGHT_SPREAD) return 'none';
    if (this.correlation.value() < RESET_CORRELATION) return 'none';
    if (this.elasticity() < MIN_GOODPUT_ELASTICITY) return 'none';
    const resetMs = this.lowInflightLatency();
    this.endEpisode();
    if (!(resetMs > this.valueMs)) return 'none';
    this.valueMs = resetMs;
    this.resets++;
    return 'reset';
  }

  /**
   * The reset value: the median filtered latency of the episode's windows at or below its mean
   * in-flight. Those are the windows furthest below the knee (the drift guard: never the latency
   * of the highest in-flight, nor the current one), and the latest of a descent, past the
   * transition windows whose p90 still mixed the old latency with the new.
   */
  private lowInflightLatency(): number {
    const held = this.held;
    const pairs = this.correlation!;
    const latencies = this.latencies!;
    let inflightSum = 0;
    for (let slot = 0; slot < held; slot++) inflightSum += pairs.xAt(slot);
    const split = inflightSum / held;
    const sorted = sharedScratch(held);
    let count = 0;
    for (let slot = 0; slot < held; slot++) {
      if (pairs.xAt(slot) > split) continue;
      insertSorted(sorted, count, latencies[slot] as number);
      count++;
    }
    return sorted[(count - 1) >>> 1] as number;
  }

  /** Least-squares slope of log(goodput) on log(in-flight) over the episode; 0 when undefined. */
  private elasticity(): number {
    const held = this.held;
    let sumX = 0;
    let sumY = 0;
    const pairs = this.correlation!;
    for (let slot = 0; slot < held; slot++) {
      sumX += Math.log(pairs.xAt(slot) + 1e-9);
      sumY += Math.log(pairs.yAt(slot) + 1e-9);
    }
    const meanX = sumX / held;
    const meanY = sumY / held;
    let covariance = 0;
    let variance = 0;
    for (let slot = 0; slot < held; slot++) {
      const dx = Math.log(pairs.xAt(slot) + 1e-9) - meanX;
      covariance += dx * (Math.log(pairs.yAt(slot) + 1e-9) - meanY);
      variance += dx * dx;
    }
    return variance > 0 ? covariance / variance : 0;
  }

  /**
   * Lowers the baseline to `latencyMs` if it is lower: for a measurement the loop knows was taken
   * at the knee (the end of a no-gain descent, adr/0034), where the smoothed latency still lags
   * the descent by two windows.
   */
  fallTo(latencyMs: number): boolean {
    if (!(latencyMs < this.valueMs)) return false;
    this.valueMs = latencyMs;
    return true;
  }

  /**
   * Sets the baseline to `latencyMs`, up or down, for a measurement the loop knows was taken at
   * the knee (the end of a no-gain descent, adr/0034, adr/0036): goodput fell as the limit
   * stepped down, so the upstream no longer queues and its latency there is its no-load latency.
   * A latency cliff (5 ms -> 100 ms) is such a case: the running minimum alone would keep the
   * 5 ms baseline and vegas would read every call in flight as queued. Ends any rise episode.
   */
  setAtKnee(latencyMs: number): boolean {
    if (!(latencyMs >= 0) || latencyMs === this.valueMs) return false;
    this.valueMs = latencyMs;
    this.endEpisode();
    return true;
  }

  /** Ends the current rise episode (its evidence is spent or stale). */
  endEpisode(): void {
    if (this.episodeWindows === 0 && this.held === 0) return;
    this.episodeWindows = 0;
    this.correlation?.reset();
  }
}

/**
 * One sort buffer for every Baseline: a reset is computed synchronously, start to end, so no two
 * computations ever share it at once, and a per-key copy would cost ~560 bytes for each of up to
 * 1 000 keys. It grows (rarely, once) to the largest correlation window in use.
 */
let scratchBuffer = new Float64Array(64);
function sharedScratch(length: number): Float64Array {
  if (scratchBuffer.length < length) scratchBuffer = new Float64Array(length);
  return scratchBuffer;
}

/** Windows of evidence the no-gain rule needs. Ours: acting on it only lowers the limit. */
export const MIN_NO_GAIN_WINDOWS = 5;
/** In-flight must have moved by this factor for a flat goodput to mean anything. Ours. */
export const NO_GAIN_SPREAD = 1.25;
/**
 * At or below this correlation of in-flight with goodput, more in-flight bought nothing. Ours:
 * below the knee goodput is proportional to in-flight (r near 1); above it goodput is flat and
 * r is noise around 0.
 */
export const NO_GAIN_CORRELATION = 0.2;

/**
 * A descent ends when a window's goodput falls below this share of the best goodput seen since
 * it began (the plateau, or more where goodput rises on the way down). Ours: each step
 * down is x backoffRatio (0.9), so the first step below the knee costs up to 10% of goodput and
 * the second 19%; window-to-window goodput noise at 50+ samples per second is a few percent.
 */
export const KNEE_GOODPUT_SHARE = 0.9;

/**
 * Evidence that the baseline was taken above the upstream's knee, for the no-gain rule
 * (adr/0034-no-gain-rule.md). A no-load latency can only be measured below the
 * knee: a limiter that starts above a small upstream's capacity (initialLimit 20 against 10
 * servers) takes its first baseline with its own queue in it and, pinned by a closed loop, never
 * sees the no-load latency; Vegas then holds at 2.5x capacity, content. Uber's covariance answers
 * that too, in the other direction: over the last `correlationWindow` windows in which the limit
 * bound (demand met it), if in-flight moved and goodput did not follow, the in-flight above the
 * lowest we tried bought nothing, and the control loop steps the limit down until goodput starts
 * to fall with it. Below the knee the window latency is the no-load latency and the baseline's
 * minimum finds it.
 *
 * The rule validates the baseline once, then stands down: when goodput is seen to follow
 * in-flight (the limiter has operated below the knee), or when a descent it started ends (the
 * knee was reached). Left on, it would fight the algorithm's own operating point (Vegas keeps
 * alpha to beta requests queued above the knee on purpose, gradient2 tolerates 1.5x latency).
 */
export class KneeEvidence {
  /** True once the baseline is known to come from below the knee. */
  confirmed = false;
  /** Set by the `add` whose window ended a descent at the knee (goodput fell); false otherwise. */
  foundKnee = false;
  /** Goodput on the plateau when the current descent began; NaN when not descending. */
  private plateauGoodput = Number.NaN;
  /**
   * The (in-flight, goodput) pairs of binding windows; read back from it, never copied. Made at
   * the first binding window and dropped once the rule stands down (`stand`): in steady state a
   * limiter holds none of it.
   */
  private correlation: RollingCorrelation | undefined = undefined;
  private readonly correlationWindow: number;

  constructor(correlationWindow: number) {
    this.correlationWindow = correlationWindow;
  }

  private get held(): number {
    return this.correlation === undefined ? 0 : this.correlation.size;
  }

  /** True while a descent started by the no-gain rule is under way. */
  get descending(): boolean {
    return this.plateauGoodput === this.plateauGoodput;
  }

  /**
   * Feeds one window with latency samples (not dominated by failures) and answers whether the
   * limit should step down. A descent starts either on evidence (over windows in which the limit
   * `binding`, in-flight moved by NO_GAIN_SPREAD and goodput did not follow, r <= NO_GAIN_CORRELATION)
   * or at once on a contradiction (`overloadedAtBaseline`: the upstream answered 429 while the
   * latency sat at the baseline, so the baseline has the upstream's queue in it). It goes on until
   * goodput falls below KNEE_GOODPUT_SHARE of the plateau it started on: the knee.
   */
  observe(meanInflight: number, goodputPerSecond: number, binding: boolean, overloadedAtBaseline: boolean): boolean {
    this.foundKnee = false;
    if (this.confirmed) return false;
    if (this.descending) {
      // Against the best goodput of the descent: past an upstream's knee goodput is often lower
      // than at it (thrashing), so it rises on the way down before it falls.
      if (goodputPerSecond > this.plateauGoodput) this.plateauGoodput = goodputPerSecond;
      else if (goodputPerSecond < this.plateauGoodput * KNEE_GOODPUT_SHARE) {
        this.stand();
        this.foundKnee = true;
        return false;
      }
      return true;
    }
    if (overloadedAtBaseline) {
      this.plateauGoodput = goodputPerSecond;
      return true;
    }
    if (!binding) return false;
    this.correlation ??= new RollingCorrelation(this.correlationWindow);
    const pairs = this.correlation;
    pairs.add(meanInflight, goodputPerSecond);
    if (this.held < MIN_NO_GAIN_WINDOWS) return false;

    let fewest = Infinity;
    let most = 0;
    let goodputSum = 0;
    for (let slot = 0; slot < this.held; slot++) {
      const inflight = pairs.xAt(slot);
      if (inflight < fewest) fewest = inflight;
      if (inflight > most) most = inflight;
      goodputSum += pairs.yAt(slot);
    }
    const correlation = this.correlation.value();
    if (most >= fewest * MIN_INFLIGHT_SPREAD && correlation >= RESET_CORRELATION) {
      // Goodput follows in-flight: the limiter has run below the knee.
      this.stand();
      return false;
    }
    if (most >= fewest * NO_GAIN_SPREAD && correlation <= NO_GAIN_CORRELATION) {
      this.plateauGoodput = goodputSum / this.held;
      return true;
    }
    return false;
  }

  /** Stops looking: the baseline is trusted from now on (also when the limit reached its floor). */
  stand(): void {
    this.confirmed = true;
    this.plateauGoodput = Number.NaN;
    this.correlation = undefined;
  }
}
