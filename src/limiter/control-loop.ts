import { EventChannel } from '../core/events';
import type { Observation } from '../core/observation';
import { backoffFor } from './algorithms/algorithm';
import type { Decision, LimitAlgorithm, WindowSummary } from './algorithms/algorithm';
import { createAimd } from './algorithms/aimd';
import { createFixed } from './algorithms/fixed';
import { createGradient2 } from './algorithms/gradient2';
import { createVegas } from './algorithms/vegas';
import { Baseline } from './baseline';
import { ALPHA_POWER, ALPHA_SCALE, BETA_RATIO, bandOf, defaultAlpha, defaultBeta } from './control-config';
import type { BandFunction, ControlConfig } from './control-config';
import { type ControlTuning, DEFAULT_TUNING } from './control-tuning';
import type { LimitChange, LimitChangeReason, LimitController, LimitControllerSnapshot } from './controller';
import { TimeoutTail } from './timeout-tail';
import { LatencySignal, SamplingWindow, admittedWith } from './window';

/** Samples before the rounds' own spread replaces the tuning's spreadPrior: RFC 9406's N_RTT_SAMPLE (8). */
export const ROUND_SAMPLES = 8;

/** The most one window multiplies the limit by: vegas's no-queue step and a slow-start round at most double it. */
const MAX_WINDOW_GROWTH = 2;

/**
 * What ended a slow start: a rise or a reduce signal, an app-limited round (idle, no rise: its no-load pool may join a
 * short baseline window, adr/0109), or a latency jump or fall after it (adr/0047, adr/0130), each a re-measure.
 */
type SlowStartExit = 'queued' | 'app-limited' | 'jump' | 'fall';

/** A jump's or a fall's exit: a drain to re-measure an upstream that changed, not a slow start's end. */
const remeasures = (exit: SlowStartExit): boolean => exit === 'jump' || exit === 'fall';

type Band = { readonly alpha: BandFunction; readonly beta: BandFunction };

/** vegas's band: the user's, else the tuning's shape; the shipped shape shares the default functions (233 B a key). */
function bandFor(config: ControlConfig, tuning: ControlTuning): Band {
  const { alpha, beta } = config;
  const { alphaPower, betaRatio, alphaScale } = tuning;
  if (alphaPower === ALPHA_POWER && betaRatio === BETA_RATIO && alphaScale === ALPHA_SCALE) return { alpha, beta };
  const tuned = bandOf(alphaPower, betaRatio, alphaScale);
  return { alpha: alpha === defaultAlpha ? tuned.alpha : alpha, beta: beta === defaultBeta ? tuned.beta : beta };
}

const NO_HEADROOM: BandFunction = () => 0;

// What a return after a re-measure (a jump's, a fall's, vegas's later slow start's) leaves under the served concurrency
// (undefined: no return; jumpReturn off turns startReturn off too): vegas's beta, so it grows into its band from below
// (adr/0128); nothing for gradient2, whose 1.5x tolerance is its own headroom and whose sqrt(L) growth climbs back from
// a drain a fraction of a call a window (adr/0133). (aimd and fixed never jump.)
function returnHeadroom(config: ControlConfig, tuning: ControlTuning, band: Band): BandFunction | undefined {
  if (!tuning.jumpReturn) return undefined;
  return config.algorithm === 'vegas' ? band.beta : NO_HEADROOM;
}

function createAlgorithm(config: ControlConfig, tuning: ControlTuning, band: Band): LimitAlgorithm {
  switch (config.algorithm) {
    case 'vegas':
      return createVegas({ ...tuning, ...band });
    case 'gradient2':
      return createGradient2({ ...config, minBaselineMs: tuning.minBaselineMs });
    case 'aimd':
      return createAimd({ backoffRatio: config.backoffRatio });
    case 'fixed':
      return createFixed();
  }
}

/** Reasons that mean "the latency rule shrank the limit": the descent the baseline watches (adr/0047). */
function latencyShrink(reason: LimitChangeReason): boolean {
  return reason === 'queue-above-beta' || reason === 'latency-above-tolerance';
}

/**
 * The limiter's control loop: window -> latency signal -> baseline -> algorithm -> reduce signals
 * -> slow start -> guards -> guardrails. Settle-driven, no timers (spec §9.5, ADR-001): time comes
 * in with each call, and a window closes at the first settle after `updateIntervalMs` that finds
 * it ready. Allocates nothing, except one event per limit change when somebody listens.
 *
 * Phases (adr/0045): slow start from initialLimit until a round shows a queue or a reduce signal;
 * drain to the concurrency the upstream served; measure the baseline; then congestion avoidance.
 * A re-taken baseline starts a new slow start, and so does an idle gap that cut one short (or its drain's windows).
 */
export class LimitControlLoop implements LimitController {
  /** The admitted limit; a plain field, read on every admission. */
  limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly changes = new EventChannel<LimitChange>();
  readonly config: ControlConfig;
  private readonly tuning: ControlTuning;
  private estimate: number;
  private readonly algorithm: LimitAlgorithm;
  private readonly window: SamplingWindow;
  private readonly signal = new LatencySignal();
  private readonly baseline: Baseline;
  /** The timeout share a healthy upstream shows anyway (adr/0037); latency-driven algorithms only. */
  private readonly tail = new TimeoutTail();
  /** The same for refusals: a share that comes whatever our concurrency (one bad replica; adr/0095). */
  private readonly refusalTail = new TimeoutTail();
  private readonly summary: WindowSummary = {
    latencyMs: Number.NaN,
    baselineMs: Number.NaN,
    samples: 0,
    overloads: 0,
    timeouts: 0,
    failures: 0,
    reached: 0,
    peakInflight: 0,
    meanInflight: 0,
    durationMs: 0,
    meanNoise: 0,
    floorSpans: 1,
  };
  private readonly decision: Decision = { estimate: 0, reason: 'warming-up' };
  settledAt = 0;
  /** The observation a mark feeds through `observe` (reused: a mark allocates nothing). */
  private readonly markObservation = {
    verdict: 'ok' as const,
    latencyMs: 0,
    durationMs: 0,
    inflight: undefined as number | undefined,
  };
  /** True during a slow start (adr/0045). */
  private slowStart = false;
  /** A round rose; the next confirms it (RFC 9406's conservative slow start, one round). */
  private suspect = false;
  /** The admitted limit the last window without reduce signals used to the full (adr/0046). */
  private servedLimit = 0;
  /** The last two windows' statistics and limit estimates (the jump rule, adr/0047, adr/0103). */
  private lastWindowMs = Number.NaN;
  private lastWindowLimit = 0;
  private lastWindowInflight = Number.NaN;
  private priorWindowMs = Number.NaN;
  private priorWindowLimit = 0;
  /** Consecutive slow-start rounds in which the limit did not grow. */
  private idleRounds = 0;
  /** The limit the current slow-start round began with: growth stops at twice it. */
  private roundLimit = 0;
  /** The highest limit a round of this slow start began at, bound and did not rise at (a young reference's too). */
  private testedLimit = 0;
  /** The baseline window after this slow start is measuring again at the tested limit (adr/0142): once. */
  private probed = false;
  /** The slow start's reference (adr/0045): the pooled mean, and mean log, of its rounds that did not rise. */
  private referenceMs = Number.NaN;
  private referenceLog = Number.NaN;
  private referenceSamples = 0;
  // Cohorts: the calls a round admitted, counted through the next round (a round's own completions run low while
  // the limit grows). Their mean is the no-load latency of the drain and the settling (adr/0045); a cohort above the
  // pool past the noise stays out, and its refusal lets a pool under ROUND_SAMPLES stand (other clients' slow starts
  // raise the latency from our second round on; adr/0096).
  private roundStartedAt = 0;
  private lastRoundStartedAt = 0;
  private cohortSum = 0;
  private cohortCount = 0;
  private cohortClean = false;
  private liveSum = 0;
  private liveCount = 0;
  private noLoadSum = 0;
  private noLoadCount = 0;
  private noLoadRefused = false;
  /** The noise bound's log spread, pooled within rounds (a level moving between rounds would inflate it). */
  private spreadWeight = 0;
  private spreadSquares = 0;
  /**
   * After a slow start's exit or a jump: 'settling' while the drain lets the queue go, then 'open': calls admitted from
   * `sampleFrom` (the drain's time, which the settling also reads) measure the baseline. Without a drain (drainOnExit
   * off) it opens at once and every call counts.
   */
  private baselineWindow: 'none' | 'settling' | 'open' = 'none';
  private sampleFrom = -Infinity;
  /** The exit round's completion rate (per ms) and limit, for the baseline window after a drain. */
  private exitRate = 0;
  /** The exit round's hold after the mark (streams): Little's law counts a permit's whole hold. */
  private exitAfterMarkMs = 0;
  private exitLimit = 0;
  /** What ended the last slow start, and so began the drain being settled and the baseline window. */
  private exit: SlowStartExit = 'queued';
  /** The baseline was measured once: later baseline windows are re-measures (adr/0089). */
  private baselineMeasured = false;
  /** The samples the current baseline window needs (see `samplesFor`): set when the slow start or a jump drains. */
  private baselineWindowSamples = 0;
  /** vegas's alpha: sizes a re-measure (remeasureForLimit) and the fall's band test (fallBand, adr/0131); undefined for the others. */
  private readonly alpha: BandFunction | undefined;
  /** What a return after a re-measure leaves under the served concurrency (`returnHeadroom`). */
  private readonly returnHeadroom: BandFunction | undefined;
  /** The concurrency an overload window showed the upstream serves; growth holds there until `overloadUntil`. */
  private overloadCeiling = Number.NaN;
  private overloadUntil = -Infinity;
  /** The last overload cut: refusals of calls admitted before it teach nothing more. */
  private overloadFrom = -Infinity;
  private nextCheckAt = -Infinity;
  private lastLearnedAt = Number.NaN;
  private windowsClosed = 0;
  // The last decision, kept as fields so a window close allocates nothing.
  private hasChange = false;
  private changeFrom = 0;
  private changeDirection: LimitChange['direction'] = 'hold';
  private changeReason: LimitChangeReason = 'warming-up';
  private changeAt = 0;
  /** The fraction of the estimate the admitted limit still owes (see `apply`). */
  private carry = 0;

  constructor(config: ControlConfig, tuning: ControlTuning = DEFAULT_TUNING) {
    this.config = config;
    this.tuning = tuning;
    this.minLimit = config.minLimit;
    this.maxLimit = config.maxLimit;
    this.estimate = config.initialLimit;
    this.limit = config.initialLimit;
    const band = bandFor(config, tuning);
    this.algorithm = createAlgorithm(config, tuning, band);
    this.alpha = config.algorithm === 'vegas' ? band.alpha : undefined;
    this.returnHeadroom = returnHeadroom(config, tuning, band);
    this.window = new SamplingWindow({ ...config, ...tuning });
    this.baseline = new Baseline(tuning);
    this.startSlowStart();
  }

  observeMark(latencyMs: number, now: number, inflight: number, admitted?: number): boolean {
    const mark = this.markObservation;
    mark.latencyMs = latencyMs;
    mark.durationMs = latencyMs;
    mark.inflight = admitted;
    this.settledAt = now;
    return this.observeInFull(mark, inflight, false);
  }

  /**
   * The per-call path, at `settledAt`, small enough for V8 to inline into the settle (adr/0087).
   * Marked calls, idle gaps and the windows after a drain take the full path.
   */
  observe(observation: Observation, inflight: number, marked = false): boolean {
    const now = this.settledAt;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const heldMs = durationMs === undefined ? latencyMs : durationMs;
    if (marked || this.baselineWindow !== 'none' || now - heldMs - this.lastLearnedAt >= this.config.idleAfterMs)
      return this.observeInFull(observation, inflight, marked);
    const verdict = observation.verdict;
    const sample = verdict === 'ok' || verdict === 'answered';
    const starved = verdict === 'timeout' && latencyMs < this.baseline.valueMs;
    const refused = !sample && this.window.refuses(verdict);
    const stale = refused && now - heldMs < this.overloadFrom;
    this.window.settledAt = now;
    if (!starved && !stale && this.window.recordSettle(observation, inflight, false)) this.lastLearnedAt = now;
    const changed =
      (sample && this.slowStart && this.roundSample(observation, inflight)) ||
      (refused && !stale && this.stepDownOnRefusal(observation, inflight));
    if (now < this.nextCheckAt) return changed;
    return this.check() || changed;
  }

  // A sample of a slow start or a settling: its log (not a stale one's), its round's cohort, and
  // slow-start growth per binding sample, at most twice the round's limit (adr/0045).
  private roundSample(observation: Observation, inflight: number): boolean {
    const now = this.settledAt;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const startedAt = now - (durationMs === undefined ? latencyMs : durationMs);
    const slowStart = this.slowStart;
    if (slowStart && !(startedAt < this.sampleFrom)) this.window.recordLog(observation);
    if (startedAt >= this.roundStartedAt) {
      this.liveSum += latencyMs;
      this.liveCount++;
    } else if (startedAt >= this.lastRoundStartedAt) {
      this.cohortSum += latencyMs;
      this.cohortCount++;
    }
    if (!slowStart || this.suspect || inflight < this.limit) return false;
    const cap = 2 * this.roundLimit;
    const grown = this.estimate + this.tuning.startupGain;
    return this.estimate < cap ? this.apply(this.clamp(grown < cap ? grown : cap), 'slow-start', now) : false;
  }

  private observeInFull(observation: Observation, inflight: number, marked: boolean): boolean {
    const now = this.settledAt;
    const verdict = observation.verdict;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const startedAt = now - (durationMs === undefined ? latencyMs : durationMs);
    // Idle runs from the last lesson to this call's start: a call that ran through the gap kept it busy.
    if (startedAt - this.lastLearnedAt >= this.config.idleAfterMs) this.restartAfterIdle(now);
    const sample = verdict === 'ok' || verdict === 'answered';
    // A marked call gave its sample at the mark; its settle teaches the hold after it (Little's law).
    if (marked && sample) {
      this.window.recordHold(now - startedAt - latencyMs);
      this.lastLearnedAt = now;
      return false;
    }
    // A timeout that ran upstream for less than the no-load latency starved in our queue: no
    // evidence against the upstream (ours; counted, it would cut the limit that drains our queue).
    const starved = verdict === 'timeout' && latencyMs < this.baseline.valueMs;
    // Stale: a sample admitted before the drain (it queued behind the overshoot), or a refusal of
    // a call admitted before the last overload cut (it answers the old limit; counted, it cuts again).
    const refused = !sample && this.window.refuses(verdict);
    const stale = sample ? startedAt < this.sampleFrom : refused && startedAt < this.overloadFrom;
    const atMark = observation === this.markObservation;
    this.window.settledAt = now;
    if (!starved && !stale && this.window.recordSettle(observation, inflight, atMark)) this.lastLearnedAt = now;
    const changed =
      (sample && (this.slowStart || this.baselineWindow === 'settling') && this.roundSample(observation, inflight)) ||
      (refused && !stale && this.stepDownOnRefusal(observation, inflight));
    if (now < this.nextCheckAt) return changed;
    return this.check() || changed;
  }

  // A refusal admitted as the k-th call in flight, more than any answer of this window or the last, was past what the
  // upstream takes: the limit goes to k - 1 at once (adr/0127). A window would wait a round trip, and meanwhile each
  // slot past a hard cap spins a refusal per waiting caller. The window still closes and cuts as before; a slow start's
  // exit is its window's, and aimd backs off its own way.
  private stepDownOnRefusal(observation: Observation, inflight: number): boolean {
    if (this.slowStart || !this.algorithm.latencyDriven || !this.tuning.refusalStepDown) return false;
    const admitted = admittedWith(observation, inflight);
    if (!this.window.pastAnswered(admitted)) return false;
    const to = this.clamp(admitted - 1);
    if (!(to < this.limit)) return false;
    this.window.stepped = true;
    return this.apply(to, 'overload', this.settledAt);
  }

  /** The update check, at most once per updateIntervalMs: closes the window if it is ready (out of line: adr/0087). */
  private check(): boolean {
    const now = this.settledAt;
    this.nextCheckAt = now + this.config.updateIntervalMs;
    const window = this.window;
    const floorMs = this.windowFloorMs();
    // A slow-start round and the settling after a drain last one round trip (a jump's settling round: see
    // settlingRoundDone); the baseline window waits for its samples (adr/0089, adr/0122); any other, its floor and
    // minSamples (undefined).
    const ready = this.slowStart
      ? window.roundTrip || window.ready(now, floorMs)
      : this.baselineWindow === 'settling'
        ? (window.roundTrip && this.settlingRoundDone()) || window.ready(now, floorMs)
        : window.ready(now, floorMs, this.baselineWindow === 'none' ? undefined : this.baselineWindowSamples);
    return ready ? this.closeWindow(now) : false;
  }

  // A jump's settling round also waits for the ROUND_SAMPLES answers its back test needs (one call at 20 ms answers 5
  // a check), unless it holds a raw timeout or refusal (acted on at once) or the settling's minWindowMs is up (adr/0119).
  private settlingRoundDone(): boolean {
    const window = this.window;
    return (
      !remeasures(this.exit) ||
      window.samples >= ROUND_SAMPLES ||
      window.overloads + window.timeouts > 0 ||
      this.settledAt - this.sampleFrom >= this.config.minWindowMs
    );
  }

  setLimit(limit: number, now: number): boolean {
    if (typeof limit !== 'number' || Number.isNaN(limit)) {
      throw new TypeError(`resilix: setLimit needs a number; received ${String(limit)}`);
    }
    return this.apply(this.clamp(limit), 'manual', now);
  }

  snapshot(): LimitControllerSnapshot {
    const baselineMs = this.baseline.valueMs;
    const latencyMs = this.signal.smoothedMs;
    return {
      algorithm: this.algorithm.name,
      limit: this.limit,
      estimate: this.estimate,
      minLimit: this.minLimit,
      maxLimit: this.maxLimit,
      baselineMs: baselineMs === baselineMs ? baselineMs : undefined,
      latencyMs: latencyMs === latencyMs ? latencyMs : undefined,
      slowStart: this.slowStart,
      windows: this.windowsClosed,
      baselineRaises: this.baseline.raises,
      lastChange: this.hasChange ? this.lastChange() : undefined,
    };
  }

  /** clamp(2 x smoothed latency, minWindowMs, maxWindowMs): a window spans two round trips. */
  private windowFloorMs(): number {
    const { minWindowMs, maxWindowMs } = this.config;
    const twoTrips = 2 * this.signal.smoothedMs;
    if (!(twoTrips > minWindowMs)) return minWindowMs;
    return twoTrips < maxWindowMs ? twoTrips : maxWindowMs;
  }

  private closeWindow(now: number): boolean {
    const { window, summary, baseline, tuning, estimate, decision } = this;
    const latencyDriven = this.algorithm.latencyDriven;
    const steersOnMean = this.config.algorithm === 'vegas';
    // The floor this window was held to: vegas's no-queue growth is per floor spanned (adr/0090).
    // Computed again here, not passed in: adr/0087 keeps doubles off calls V8 may leave out of line.
    const floorMs = this.windowFloorMs();
    window.summarise(now, summary);
    // The window's completion rate (per ms): the overload cut and the drains apply Little's law to it.
    const rate = summary.durationMs > 0 ? summary.samples / summary.durationMs : 0;
    const spans = summary.durationMs / floorMs;
    summary.floorSpans = tuning.noQueueGrowthPerFloor && spans > 1 ? spans : 1;
    // `statMs`: the window mean for vegas (Little's law counts queues in means, adr/0048), the quantile for gradient2;
    // both NaN without samples, which the signal ignores.
    const meanMs = window.latencyMean();
    const statMs = steersOnMean ? meanMs : window.latencyQuantile();
    this.signal.add(statMs);
    // noiseZ relative standard errors of the mean; only vegas, which steers on the mean, reads it.
    summary.meanNoise = summary.samples > 0 ? tuning.noiseZ * (window.latencyCv() / Math.sqrt(summary.samples)) : 0;
    // Only timeouts beyond a healthy upstream's tail are reduce signals (adr/0037).
    const timeouts = summary.timeouts;
    if (latencyDriven && tuning.timeoutTail) summary.timeouts = this.tail.excess(timeouts, summary.reached, tuning);
    const overloads = summary.overloads;
    if (latencyDriven && tuning.refusalTail)
      summary.overloads = this.refusalTail.excess(overloads, summary.reached, tuning);

    const failureDominated = summary.failures > 0 && summary.failures >= tuning.failureGrowthVeto * summary.reached;
    // Sampled, no refusal, not failure-dominated: a latency jump may count (timeouts allowed; adr/0047).
    const unrefused = summary.samples > 0 && summary.overloads === 0 && !failureDominated;
    const clean = unrefused && summary.timeouts === 0;
    const slowStart = this.slowStart;
    let measured = false;
    let fell = false;
    // The limit to go back to after a drain (NaN: none): the upstream showed slower, so the drain went too deep, or a
    // re-measure (a jump's, a fall's, vegas's later slow start's) found it not raiseRatio slower (adr/0128, 0137).
    // Little's law: a completion rate (a share of the exit round's) x the measured latency and the hold after a mark;
    // after a fall, the limit its window held (adr/0136).
    let drainBack = Number.NaN;
    // The tested limit a baseline window measures again at (NaN: none; adr/0142).
    let probeTo = Number.NaN;
    summary.latencyMs = statMs;
    if (slowStart) {
      // A provisional baseline (telemetry, the starved-timeout rule) until a drained window measures one.
      if (clean && baseline.valueMs !== baseline.valueMs) baseline.offer(statMs, meanMs);
    } else if (this.baselineWindow === 'settling') {
      // Settling: one-round-trip rounds (a jump's wait for ROUND_SAMPLES answers, adr/0119) until latency is back at the
      // no-load level, at most minWindowMs, so the overshoot's queue drains before the baseline window (adr/0045).
      const n = summary.samples;
      const noLoadMs = this.noLoadMs();
      const back = n >= ROUND_SAMPLES && !this.above(meanMs, n, noLoadMs, this.noLoadCount);
      this.nextCohort(now, false);
      const ranOut = !back && now - this.sampleFrom >= this.config.minWindowMs;
      if (back || ranOut) this.baselineWindow = 'open';
      // Still raiseRatio x the no-load level, past the noise, minWindowMs after the drain: whatever
      // queue the drain left has had its time, so the upstream itself is slower (a latency cliff).
      // Re-aim the drain with that latency; the baseline window measures there (adr/0091).
      if (ranOut && remeasures(this.exit) && this.above(meanMs, n, tuning.raiseRatio * noLoadMs, this.noLoadCount)) {
        drainBack = tuning.drainGain * this.exitRate * (meanMs + this.exitAfterMarkMs);
      }
      summary.latencyMs = Number.NaN;
      measured = true;
    } else if (clean && this.baselineWindow === 'open') {
      if (this.measuresAgain(meanMs, summary.samples)) {
        // Whose queue the window measured, its aggregates cannot tell: callers' (closed-loop, thinking, or in a
        // lockstep cycle where all wait alike) or open-loop load on an upstream that turned slower. Lowering
        // concurrency does: at the tested limit, a concurrency no round saw queue at, our callers' queue goes and a
        // slower upstream stays slow. So measure again there, with calls admitted from now on (adr/0142, adr/0143). The
        // return it aims at is kept where a drain keeps its own.
        this.probed = true;
        this.exitLimit = Math.ceil(summary.meanInflight);
        this.sampleFrom = now;
        this.baselineWindowSamples = this.config.minSamples;
        probeTo = this.testedLimit;
        summary.latencyMs = Number.NaN;
        measured = true;
      } else {
        // The window after a drain measures the no-load latency (adr/0045). After an app-limited slow start (vegas) the
        // slow start's queue-free cohorts are no-load samples too, if a few percent low (a cohort closes before its
        // slowest calls): a window low traffic closed under minSamples errs more and pools them, unless the two differ
        // past the noise (the upstream changed in between; adr/0109).
        const n = summary.samples;
        const count = this.noLoadCount;
        const poolMs = this.noLoadSum / count;
        const pool =
          this.exit === 'app-limited' &&
          steersOnMean &&
          count > 0 &&
          n < this.config.minSamples &&
          !this.above(meanMs, n, poolMs, count) &&
          !this.above(poolMs, count, meanMs, n);
        const valueMs = pool ? (this.noLoadSum + meanMs * n) / (count + n) : statMs;
        const valueMeanMs = pool ? valueMs : meanMs;
        // A drained window sets the baseline; without the drain (drainOnExit off) it only offers one.
        measured = tuning.drainOnExit
          ? baseline.set(valueMs, valueMeanMs)
          : baseline.offer(valueMs, valueMeanMs) !== 'none';
        if (measured) {
          // After a fall, the concurrency its window held: a faster upstream serves at least that much without queueing
          // (servers and CPUs serve a concurrency, whatever each call's time), while the window's completion rate
          // straddled the slow part and reads low (adr/0136).
          const servedBack =
            this.exit === 'fall' ? this.exitLimit : this.exitRate * (baseline.meanMs + this.exitAfterMarkMs);
          // vegas's later slow starts (a stale raise's, or one an idle gap cut short) return too: their exit round
          // served what the upstream takes now, as a jump window did (an app-limited exit drained nothing: its rate, so
          // its return, is 0). Not the first one's: clients that start together exit, drain and measure at different
          // times, so each exit round's share is not what it gets once all run, and returning there left them unfair
          // (many-clients; adr/0137).
          const later = tuning.startReturn && this.baselineMeasured && this.config.algorithm === 'vegas';
          // Measured again at the tested limit: back to the concurrency the first window's callers held (not the limit,
          // which app-limited growth set at twice their peak), and vegas steers from there on the new baseline
          // (adr/0142).
          if (this.probed) drainBack = this.exitLimit;
          else if (baseline.meanMs >= tuning.raiseRatio * this.noLoadMs()) drainBack = servedBack;
          else if ((remeasures(this.exit) || later) && this.returnHeadroom !== undefined) {
            // Not raiseRatio slower: the exit window served what the upstream takes now, or more where the change fell
            // inside it. Back to that less vegas's beta, so it grows into its band from below (re-reading the no-load
            // latency on the way, adr/0101), not from the drain a window of beta at a time (adr/0128); gradient2 to all
            // of it (adr/0133).
            drainBack = servedBack - this.returnHeadroom(servedBack);
          }
          this.baselineMeasured = true;
          this.exitRate = 0;
        }
        this.baselineWindow = 'none';
        this.sampleFrom = -Infinity;
        this.signal.reset();
        this.signal.add(valueMs);
        summary.latencyMs = valueMs;
      }
    } else {
      // A fall under the baseline (fellBy) with demand at the limit, over at least minSamples: see the jump rule below
      // (adr/0130). Below the limit growth queues nothing, so the smoothed latency, and the baseline with it, fall to
      // the new level. A window that low traffic closed short may be a heavy tail's lucky draw. Under minBaselineMs a
      // ratio is whole-ms clock ticks, as for a jump (adr/0125).
      const { minBaselineMs } = tuning;
      fell =
        clean &&
        latencyDriven &&
        tuning.fallRestart &&
        summary.peakInflight >= this.limit &&
        summary.samples >= this.config.minSamples &&
        this.fellBy(statMs > minBaselineMs ? statMs : minBaselineMs, estimate, summary.samples);
      // The baseline falls to any lower smoothed latency (Vegas's BaseRTT, a running minimum of a
      // smoothed series; adr/0097); the first clean window sets one no slow start gave (startupGain 0, fixed).
      // Its mean falls with it, not to this window's: the window before a jump holds both latencies (adr/0101).
      if (clean && baseline.valueMs === baseline.valueMs) baseline.fall(this.signal.smoothedMs);
      else if (clean) baseline.offer(statMs, meanMs);
    }
    summary.baselineMs = baseline.valueMs;

    this.algorithm.step(estimate, summary, decision);
    let next = decision.estimate;
    let reason = decision.reason;

    // Reduce signals take precedence over latency (DESIGN.md §3): a window that has any never grows.
    const pressured = latencyDriven && (summary.overloads > 0 || summary.timeouts > 0);
    if (pressured) {
      if (next > estimate) next = estimate;
      reason = summary.overloads > 0 ? 'overload' : 'timeout';
      if (summary.overloads > 0) {
        // Cut to the concurrency served (adr/0046): completion rate x no-load latency (Little's
        // law), and hold there for a while: each probe past a hard cap is a burst of refusals.
        const noLoadMs = slowStart ? this.noLoadMs() : baseline.meanMs;
        const served =
          noLoadMs > 0 ? rate * (noLoadMs + window.afterMarkMeanMs()) : window.servedConcurrency(summary.durationMs);
        // An early-closed window's estimate is noisy: one under a limit served in full is that limit.
        const measured = served === served ? Math.round(served) : estimate;
        const target = this.servedLimit === measured + 1 ? this.servedLimit : measured;
        if (target < next) next = target;
        // Not from the floor: a cap under minLimit cannot be kept to, and a refusal there is no
        // probe past one (one bad replica refusing at random held the limit at 1 for a minute; adr/0098).
        if (tuning.overloadHoldMs > 0 && estimate > this.minLimit) {
          this.overloadCeiling = target > this.minLimit ? target : this.minLimit;
          this.overloadUntil = now + tuning.overloadHoldMs;
        }
        this.overloadFrom = now;
      }
      if (summary.timeouts > 0) {
        // Timeout is the strongest reduce signal (spec §8): the overload backoff, twice. Ours.
        const backoff = this.config.backoffRatio;
        const cut =
          estimate * backoffFor(summary.timeouts, summary.reached, backoff * backoff, tuning.pressureSaturation);
        if (cut < next) {
          next = cut;
          reason = 'timeout';
        }
      }
    }

    if (slowStart) {
      // Only a round whose demand reached the limit is tested (an app-limited slow start's
      // hundreds of rounds would end it by chance), unless it rose past raiseRatio.
      const binding = summary.peakInflight >= Math.floor(this.roundLimit);
      const logMean = window.latencyLogMean();
      const rose =
        clean &&
        latencyDriven &&
        this.roundQueued(logMean, summary.samples) &&
        (binding || meanMs >= tuning.raiseRatio * this.referenceMs);
      // A rise ends the slow start when the next round confirms it and the suspect round's cohort rose over the
      // pooled cohorts too: rounds' own completions read low while the limit grows (the slow calls come a round
      // late), so the vote compares cohorts with cohorts (adr/0110). A vetoed rise stays suspect; with the vote off,
      // or either side empty, the rise stands. A reduce signal ends the slow start at once.
      const noVote = !tuning.cohortConfirm || this.cohortCount === 0 || this.noLoadCount === 0;
      const queued = rose && ((this.suspect && (noVote || this.cohortAbovePool())) || tuning.confirmRounds === 0);
      if (rose && !queued) this.suspect = true;
      else if (!rose && clean) this.suspect = false;
      // After startupIdleRounds rounds without growth the slow start has nothing to find (adr/0045).
      this.idleRounds = estimate > this.roundLimit ? 0 : this.idleRounds + 1;
      const idle = tuning.startupIdleRounds > 0 && this.idleRounds >= tuning.startupIdleRounds;
      const over = latencyDriven ? pressured || queued || idle : decision.estimate < estimate;
      if (!over) {
        next = estimate;
        reason = 'slow-start';
        const tested = Math.floor(this.roundLimit);
        if (clean && !rose && binding && tested > this.testedLimit) this.testedLimit = tested;
        this.roundLimit = estimate;
        if (clean && summary.samples >= 2) {
          this.spreadWeight += summary.samples;
          this.spreadSquares += summary.samples * window.latencyLogVariance();
        }
        // Every round joins a young reference (two lucky calls must not stand for good).
        const young = this.referenceSamples < ROUND_SAMPLES;
        // (A round of 0 ms samples has no log mean: NaN would poison the reference for good.)
        const joins =
          logMean === logMean && (young || !(logMean > this.referenceLog + Math.log1p(tuning.startupThreshold)));
        if (clean && !rose && joins) {
          // Pooled, not a minimum (one lucky round would end the slow start); a round that rose
          // within the noise is left out (a slowly building queue would raise the reference).
          const before = this.referenceSamples;
          const pooled = before + summary.samples;
          this.referenceMs = before > 0 ? (this.referenceMs * before + meanMs * summary.samples) / pooled : meanMs;
          this.referenceLog = before > 0 ? (this.referenceLog * before + logMean * summary.samples) / pooled : logMean;
          this.referenceSamples = pooled;
        }
      } else {
        this.endSlowStart(now, queued || pressured ? 'queued' : 'app-limited');
        // A reduce signal ends the slow start with a drain too (adr/0092, adr/0093): its cut comes
        // from one short round, and whatever queue an overestimate leaves, the baseline window counts.
        if ((queued || pressured) && tuning.drainOnExit) {
          const bdp = this.drainTarget(rate, this.noLoadMs());
          const from = pressured ? next : estimate;
          next = bdp < from ? bdp : from;
          if (!pressured || bdp < from) reason = 'drain';
        } else if (latencyDriven && !pressured) {
          // (aimd's own backoff, its reduce signal, stands.)
          next = estimate;
        }
      }
      this.nextCohort(now, clean && !rose);
    } else if (measured) {
      // The settling and baseline windows only measure (reduce signals still cut).
      if (!pressured) {
        next = estimate;
        reason = 'warming-up';
        // Back to `drainBack` (a slower upstream: the drain went too deep; a jump's, a fall's or vegas's later slow
        // start's: adr/0128, 0133, 0136, 0137), at most the exit's limit. Otherwise (the first slow start's exit,
        // gradient2's slow starts, an app-limited exit, startReturn or jumpReturn off) the algorithm grows from the
        // drained limit (jumping back at once would load an upstream others still measure; gradient2 would sit over
        // 1.5 C: adr/0133).
        if (drainBack > estimate) {
          next = drainBack < this.exitLimit ? drainBack : this.exitLimit;
          reason = 'drain';
        } else if (probeTo < estimate) {
          next = probeTo;
          reason = 'drain';
        }
      }
    } else if (latencyDriven && unrefused && ((tuning.jumpRestart && this.jumped(statMs)) || fell)) {
      // A raiseRatio-fold jump at a limit that did not grow: the upstream changed, or demand rose past its capacity
      // (adr/0047). Or a fall under the baseline (fellBy): the upstream got faster (a latency cliff ended). The
      // baseline, a running minimum of the smoothed latency, would fall only as fast as latency does; the stale
      // baseline reads the queue as none, vegas grows, and past the capacity that growth queues: after a 5x cliff the
      // two met at 2-3.5 C for good (adr/0130). Either way, drain to drainGain x the completion rate x a no-load
      // estimate (the baseline's mean for a jump; for a fall the window's own mean, an upper bound) and measure anew.
      const drained = this.drainTarget(rate, fell ? meanMs : baseline.meanMs);
      if (drained < next) next = drained;
      reason = fell ? 'drain' : 'baseline-raised';
      this.endSlowStart(now, fell && tuning.fallReturn ? 'fall' : 'jump');
    } else if (!latencyShrink(reason)) {
      if (reason === 'queue-within-band') baseline.held();
      else baseline.endDescent();
    } else if (clean && baseline.shrinking(statMs, meanMs, summary.meanInflight, estimate <= this.minLimit)) {
      // Slower, not busier (adr/0047): hold, and find the capacity anew. (Only vegas and gradient2 shrink on latency.)
      next = estimate;
      reason = 'baseline-raised';
      this.startSlowStart();
    }
    // Timeouts and refusals that come with a queue are the queue's, not a tail's; refusals past every answer, a cap's.
    if (latencyDriven && summary.samples > 0 && !latencyShrink(decision.reason)) {
      if (tuning.timeoutTail) this.tail.learn(timeouts, summary.reached, tuning);
      if (tuning.refusalTail && !window.stepped) this.refusalTail.learn(overloads, summary.reached, tuning);
    }

    if (next > estimate) {
      if (failureDominated) {
        next = estimate;
        reason = 'failures';
      } else {
        const overloadCeiling = this.overloadCeiling;
        if (now < this.overloadUntil && next > overloadCeiling) {
          next = overloadCeiling > estimate ? overloadCeiling : estimate;
          reason = 'overload-hold';
        }
        // (Not for a drain's target: the exit round's demand reached the limit it drains from.)
        const demandCeiling = tuning.appLimitedFactor * summary.peakInflight;
        const ceiling = demandCeiling > this.config.initialLimit ? demandCeiling : this.config.initialLimit;
        if (next > ceiling && reason !== 'drain') {
          next = ceiling > estimate ? ceiling : estimate;
          reason = 'app-limited';
        }
      }
    }
    if (!Number.isFinite(next)) {
      next = estimate;
      reason = 'invalid-step';
    }
    if (next >= this.maxLimit && estimate >= this.maxLimit && next >= estimate) reason = 'at-max';
    else if (next <= this.minLimit && estimate <= this.minLimit && next <= estimate && reason !== 'baseline-raised') {
      reason = 'at-min';
    }
    if (summary.samples > 0) {
      this.priorWindowMs = this.lastWindowMs;
      this.priorWindowLimit = this.lastWindowLimit;
      this.lastWindowMs = statMs;
      this.lastWindowLimit = estimate;
      this.lastWindowInflight = summary.meanInflight;
    }
    // The limit a window without reduce signals used to the full (its demand reached it).
    if (!pressured && summary.samples > 0 && summary.peakInflight >= this.limit) this.servedLimit = this.limit;
    else if (summary.overloads > 0 && this.servedLimit >= this.limit && !window.stepped) {
      // (A step took the limit to what its refusal proved; the window's refusals came above it.)
      this.servedLimit = this.limit - 1;
    }
    window.restart(now);
    // A refusal is a round trip once the window lasted the no-load latency (adr/0126): the slow start's, else the
    // baseline's; 0 while neither is known. An idle restart keeps the value (the window restarts without closing).
    const noLoadMs = this.slowStart ? this.noLoadMs() : Number.NaN;
    const roundTripMs = noLoadMs > 0 ? noLoadMs : baseline.meanMs;
    window.minRoundTripMs = tuning.refusalRoundTrip && roundTripMs > 0 ? roundTripMs : 0;
    this.windowsClosed++;
    // After a slow start (its drain, settling and baseline window) the limit is whole calls: a
    // measurement needs a steady load, and the extra call error diffusion would admit is queue the
    // drain is there to empty. A jump's drain aims at the new served concurrency and keeps it (adr/0096).
    const measuring = tuning.measureWholeCalls && !remeasures(this.exit) && this.baselineWindow !== 'none';
    return this.apply(this.clamp(next), reason, now, tuning.dither && !measuring);
  }

  // A drain's target (BBR's Drain; Little's law): drainGain x completion rate x (no-load mean + hold after a mark).
  // Keeps the exit for the baseline window's restore.
  private drainTarget(rate: number, noLoadMs: number): number {
    const afterMarkMs = this.window.afterMarkMeanMs();
    this.exitRate = rate;
    this.exitAfterMarkMs = afterMarkMs;
    this.exitLimit = this.estimate;
    return rate * (noLoadMs + afterMarkMs) * this.tuning.drainGain;
  }

  // A raiseRatio-fold rise over the baseline and, at a limit that did not grow, over the last window or the one
  // before it (a change inside a window spreads its rise over two, adr/0103). If the limit grew in between, the
  // rise must also exceed what that growth can queue: a window at most doubles the limit.
  private jumped(statMs: number): boolean {
    const ratio = this.tuning.raiseRatio;
    // Under minBaselineMs a ratio is whole-ms clock ticks (adr/0036, adr/0125): 0 -> 1 ms is no jump.
    const baselineMs = this.baseline.valueMs;
    if (!(baselineMs >= 0)) return false; // no baseline, no jump (the floor below must not stand in for one)
    const floorMs = this.tuning.minBaselineMs;
    if (!(statMs >= ratio * (baselineMs > floorMs ? baselineMs : floorMs))) return false;
    const last = this.lastWindowLimit;
    if (this.lastWindowMs > 0 && statMs >= ratio * this.lastWindowMs && this.estimate <= last) return true;
    const prior = this.priorWindowLimit;
    const grown = last > prior ? MAX_WINDOW_GROWTH : 1;
    return this.priorWindowMs > 0 && this.estimate <= prior && statMs >= ratio * grown * this.priorWindowMs;
  }

  /** Whether a round's mean log latency rose over the reference past the noise bound (adr/0045); false while it is young. */
  private roundQueued(logMean: number, samples: number): boolean {
    const referenceLog = this.referenceLog;
    if (!(referenceLog === referenceLog) || !(logMean === logMean) || samples < 1) return false;
    // Both tests of a rise (the suspect round and its confirmation) compare with this reference, so
    // its error is not averaged out by confirming: it must hold ROUND_SAMPLES first (adr/0106).
    if (this.referenceSamples < ROUND_SAMPLES && this.tuning.matureReference) return false;
    return logMean > referenceLog + Math.log1p(this.noiseBound(samples, this.referenceSamples));
  }

  // Whether an app-limited slow start's baseline window may have measured closed-loop callers' queue, and measures
  // again at the tested limit (adr/0139, adr/0143): callers between the tested limit and twice it outgrow the slow
  // start's last tested round. A cohort of the slow start rose over its pool (measured at up to about the tested limit,
  // and mature), and the window rose over the pool past the noise, by no more than its in-flight over the tested limit
  // (Little's law: so that in-flight is past it; a larger rise is the upstream's). vegas (the pool is of means). Only
  // with the drain: without it a window offers a baseline and sets none, so nothing would return. Once (the second
  // window's calls are admitted under the tested limit and cannot meet the rule again, unless setLimit raised it).
  private measuresAgain(meanMs: number, n: number): boolean {
    const { tuning, testedLimit: tested } = this;
    const count = this.noLoadCount;
    const poolMs = this.noLoadSum / count;
    return (
      tuning.probeTested &&
      tuning.drainOnExit &&
      !this.probed &&
      this.exit === 'app-limited' &&
      this.config.algorithm === 'vegas' &&
      count >= ROUND_SAMPLES &&
      this.noLoadRefused &&
      tested > 0 &&
      this.above(meanMs, n, poolMs, count) &&
      !this.above(meanMs, n, poolMs * (this.summary.meanInflight / tested), count)
    );
  }

  /** Whether the cohort's mean is above the no-load pool's past the noise bound (false for an empty pool: NaN). */
  private cohortAbovePool(): boolean {
    const count = this.cohortCount;
    const pooled = this.noLoadCount;
    return this.above(this.cohortSum / count, count, this.noLoadSum / pooled, pooled);
  }

  // A baseline a share e high hides L e calls of queue, and vegas grows that far past its band: the fall re-measures
  // once they reach alpha(L), less startupNoiseZ relative standard errors of the window's mean (a drain is decided at
  // the slow start exit's confidence; samplesFor sizes a re-measure so the baseline's own error stays under
  // alpha(L) / L; adr/0131). gradient2, with no band, fallBand off, and a user band with no positive alpha (any
  // window at the baseline would be a fall): a fall to 1 / raiseRatio (adr/0130).
  private fellBy(statMs: number, limit: number, samples: number): boolean {
    const baselineMs = this.baseline.valueMs;
    const band = this.tuning.fallBand ? this.alpha : undefined;
    const alpha = band === undefined ? Number.NaN : band(limit);
    if (!(alpha > 0 && alpha < Infinity)) return this.tuning.raiseRatio * statMs <= baselineMs;
    const noise = (this.tuning.startupNoiseZ * this.window.latencyCv()) / Math.sqrt(samples);
    return limit * (1 - statMs / baselineMs - noise) >= alpha;
  }

  /** Whether a mean of `n` samples is above a reference mean of `refN` past the noise bound (arithmetic means, Little's). */
  private above(meanMs: number, n: number, referenceMs: number, refN: number): boolean {
    return meanMs > referenceMs * (1 + this.noiseBound(n, refN));
  }

  // The relative rise chance explains between means over `a` and `b` samples: startupNoiseZ standard errors of
  // their log difference (logs: a heavy tail is not a queue), at least startupThreshold.
  private noiseBound(a: number, b: number): number {
    const tuning = this.tuning;
    const noise = Math.expm1(tuning.startupNoiseZ * this.spread() * Math.sqrt(1 / a + 1 / b));
    return noise > tuning.startupThreshold ? noise : tuning.startupThreshold;
  }

  /** The log spread of latency within rounds, or spreadPrior until ROUND_SAMPLES measured it. */
  private spread(): number {
    const weight = this.spreadWeight;
    return weight >= ROUND_SAMPLES ? Math.sqrt(this.spreadSquares / weight) : this.tuning.spreadPrior;
  }

  // The samples a baseline window needs: firstBaselineSamples until one measured it (adr/0089). A re-measure at a
  // concurrency L (adr/0122): a baseline a share e low reads L e calls of queue that are not there, and vegas stops
  // growing once they pass alpha(L). So e, at startupNoiseZ standard errors (the rounds' spread as the cv), stays under
  // alpha(L) / L; at most firstBaselineSamples, at least baselineSamples.
  private samplesFor(concurrency: number): number {
    const { baselineSamples, firstBaselineSamples, startupNoiseZ } = this.tuning;
    if (!this.baselineMeasured) return firstBaselineSamples;
    if (this.alpha === undefined || !this.tuning.remeasureForLimit) return baselineSamples;
    const n = ((startupNoiseZ * this.spread() * concurrency) / this.alpha(concurrency)) ** 2;
    const capped = n < firstBaselineSamples ? Math.ceil(n) : firstBaselineSamples;
    return capped > baselineSamples ? capped : baselineSamples;
  }

  // The slow start's no-load mean: its queue-free cohorts, or the rounds' own (low) mean while the pool holds
  // fewer than ROUND_SAMPLES and none was refused (a refusal needs a pool).
  private noLoadMs(): number {
    const count = this.noLoadCount;
    return count >= ROUND_SAMPLES || this.noLoadRefused ? this.noLoadSum / count : this.referenceMs;
  }

  /** A round closed at `now`: the previous round's cohort is complete enough to pool (if clean and not risen). */
  private nextCohort(now: number, clean: boolean): void {
    const count = this.cohortCount;
    if (this.cohortClean && count > 0) {
      // An empty pool's NaN mean compares false, so the first cohort joins.
      if (this.tuning.noLoadRiseTest && this.cohortAbovePool()) {
        this.noLoadRefused = true;
      } else {
        this.noLoadSum += this.cohortSum;
        this.noLoadCount += count;
      }
    }
    this.cohortSum = this.liveSum;
    this.cohortCount = this.liveCount;
    this.cohortClean = clean;
    this.liveSum = this.liveCount = 0;
    this.lastRoundStartedAt = this.roundStartedAt;
    this.roundStartedAt = now;
  }

  /** Starts a slow start from the current limit; the baseline window after its drain sets the baseline. */
  private startSlowStart(): void {
    if (this.config.algorithm === 'fixed' || !(this.tuning.startupGain > 0)) return;
    this.slowStart = true;
    // A rise the last slow start held growth for is not this one's (an idle gap can cut one short).
    this.suspect = false;
    this.roundLimit = this.estimate;
    this.referenceMs = this.referenceLog = Number.NaN;
    this.idleRounds = this.referenceSamples = this.noLoadSum = this.noLoadCount = this.cohortSum = this.cohortCount = 0;
    this.testedLimit = 0;
    // An earlier drain's rate is not this slow start's: an app-limited exit does not drain, and its baseline window
    // must not restore a limit from it (adr/0123).
    this.liveSum = this.liveCount = this.spreadWeight = this.spreadSquares = this.exitRate = 0;
    this.noLoadRefused = this.cohortClean = false;
  }

  /** Ends the slow start: the next clean window, with calls admitted from now on, measures the baseline. */
  private endSlowStart(now: number, exit: SlowStartExit): void {
    this.slowStart = this.suspect = this.probed = false;
    this.exit = exit;
    if (!this.algorithm.latencyDriven) return;
    this.baselineWindow = this.tuning.drainOnExit ? 'settling' : 'open';
    this.sampleFrom = this.tuning.drainOnExit ? now : -Infinity;
    // Sized for the concurrency the last window used (within the limits, at most the estimate): an app-limited
    // client's limit (appLimitedFactor x its peak in-flight) runs far above it.
    const used = this.lastWindowInflight;
    this.baselineWindowSamples = this.samplesFor(used < this.estimate ? this.clamp(used) : this.estimate);
  }

  // The idle rule (adr/0031): after idleAfterMs without a lesson, drop the stale window and smoothing. The limit and
  // the baseline stay: the gap taught nothing against either (RFC 7661 lets TCP keep its window through a quiet
  // spell), and the jump rule's last windows stay too, so an upstream 2.5x slower jumps on the first window. A
  // slow start from that limit overshot to 4-5 C for a round trip and drained under it, in step with every client
  // that came back with it (adr/0140). A slow start, or a drain's settling and baseline window, that the gap cut
  // short starts again: its measurement is minutes old.
  private restartAfterIdle(now: number): void {
    // The gap is accounted for once, even if the settle that ended it teaches nothing.
    this.lastLearnedAt = now;
    this.window.restart(Number.NaN);
    this.signal.reset();
    this.baseline.endDescent();
    this.nextCheckAt = -Infinity;
    if (this.slowStart || this.baselineWindow !== 'none') this.startSlowStart();
  }

  private clamp(estimate: number): number {
    if (estimate < this.minLimit) return this.minLimit;
    if (estimate > this.maxLimit) return this.maxLimit;
    return estimate;
  }

  // Sets the estimate and the admitted limit. At a window close (`dither`) the estimate is rounded by error
  // diffusion, so the admitted limit averages it (floored, 1.9 and 2.1 would admit 1 and 2).
  private apply(next: number, reason: LimitChangeReason, now: number, dither = false): boolean {
    const from = this.limit;
    // (`next` is within the guardrails, whole calls both: only the carry can take the floor outside them.)
    const target = dither ? next + this.carry : next;
    let to = this.clamp(Math.floor(target));
    // A shrinking window never raises the admitted limit (adr/0035).
    if (dither && next < this.estimate && to > from) to = from;
    this.carry = dither ? target - to : 0;
    if (this.carry > 1 || this.carry < -1) this.carry = 0;
    this.changeDirection = next > this.estimate ? 'grow' : next < this.estimate ? 'shrink' : 'hold';
    this.estimate = next;
    this.limit = to;
    this.hasChange = true;
    this.changeFrom = from;
    this.changeReason = reason;
    this.changeAt = now;
    if (to === from) return false;
    if (this.changes.size > 0) this.changes.emit(this.lastChange());
    return true;
  }

  private lastChange(): LimitChange {
    return {
      from: this.changeFrom,
      to: this.limit,
      direction: this.changeDirection,
      reason: this.changeReason,
      at: this.changeAt,
    };
  }
}
