import { EventChannel } from '../core/events';
import type { Observation } from '../core/observation';
import {
  choiceOption,
  numberOption,
  optionsObject,
  orderedOptions,
  requireNumber,
  type NumberRule,
} from '../core/options';
import type { Decision, LimitAlgorithm, WindowSummary } from './algorithms/algorithm';
import { createAimd } from './algorithms/aimd';
import { createFixed } from './algorithms/fixed';
import { createGradient2 } from './algorithms/gradient2';
import { createVegas } from './algorithms/vegas';
import { Baseline, KneeEvidence, RISE_RATIO, type BaselineUpdate } from './baseline';
import type { AlgorithmName, LimitChange, LimitController, LimitControllerSnapshot } from './controller';
import { TimeoutTail } from './timeout-tail';
import { LatencySignal, SamplingWindow, type FailureHandling } from './window';

export type { FailureHandling } from './window';

/**
 * The control loop's options: how the limit is found. Every default carries its provenance
 * (spec §6; docs/algorithms.md has them in one table).
 */
export interface ControlOptions {
  /**
   * 'vegas' (default: Uber and Netflix both chose it for this problem, spec §4.1), 'gradient2'
   * (spec §4.2), 'aimd' (error-driven, opt-in only, spec §4.3) or 'fixed' (initialLimit, always).
   */
  algorithm?: AlgorithmName;
  /** Limit before any evidence. Default 20: Netflix VegasLimit/Gradient2Limit. */
  initialLimit?: number;
  /**
   * The floor. Default 4: ours (spec §6): keeps a trickle flowing so recovery is observable;
   * Netflix's 20 (inbound, large fleets) may already be over a third-party quota.
   */
  minLimit?: number;
  /** The ceiling. Default 200: Netflix Gradient2Limit. */
  maxLimit?: number;
  /**
   * The loop checks whether its window may close at most this often, on a settle (no timers).
   * Default 100 ms: Envoy's concurrency update interval.
   */
  updateIntervalMs?: number;
  /** Shortest window. Default 2 000 ms: Uber's Cinnamon ("minimum interval 2 seconds"). */
  minWindowMs?: number;
  /**
   * Longest window floor; a window this old closes with any sample. Default 30 000 ms: Uber
   * ("maximum 30"). A gap without calls of twice this long is idle (adr/0031).
   */
  maxWindowMs?: number;
  /**
   * Samples that close a window on count. Default 50: failsafe-go (Uber's 250 suits their volume).
   * Fewer close a window that has waited longer (adr/0032): 8 requests a minute still adapt.
   */
  minSamples?: number;
  /** Latency quantile of a window. Default 0.9: Envoy's and Uber's default p90. */
  quantile?: number;
  /** gradient2's limit smoothing, in (0, 1]. Default 0.2: Netflix Gradient2Limit. */
  smoothing?: number;
  /** gradient2's latency tolerance, >= 1. Default 1.5: Netflix Gradient2Limit. */
  rttTolerance?: number;
  /**
   * Multiplicative backoff on a window of `overload` verdicts (all algorithms) and of `timeout`s
   * (aimd). vegas and gradient2 back off by its square on timeouts, the strongest signal (spec §8).
   * Default 0.9: Netflix AIMDLimit.
   */
  backoffRatio?: number;
  /**
   * Windows over which the baseline reset correlates in-flight with goodput. Default 50: Uber
   * ("a running window, typically lasting 50 intervals"); failsafe-go uses 50 too.
   */
  correlationWindow?: number;
  /**
   * What a `failure` verdict teaches (adr/0030): 'hold' (default, ours): no latency sample, never
   * the baseline, and a window where failures are at least half of the answers does not grow;
   * 'ignore': nothing, like `rejected`; 'overload': a reduce signal, like a 429.
   */
  failure?: FailureHandling;
}

/** Validated, fully defaulted, frozen. */
export interface ControlConfig {
  readonly algorithm: AlgorithmName;
  readonly initialLimit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly updateIntervalMs: number;
  readonly minWindowMs: number;
  readonly maxWindowMs: number;
  readonly minSamples: number;
  readonly quantile: number;
  readonly smoothing: number;
  readonly rttTolerance: number;
  readonly backoffRatio: number;
  readonly correlationWindow: number;
  readonly failure: FailureHandling;
  /** Derived: a gap without calls this long is idle (2 x maxWindowMs, adr/0031). */
  readonly idleAfterMs: number;
}

export const ALGORITHMS: readonly AlgorithmName[] = Object.freeze(['vegas', 'gradient2', 'aimd', 'fixed'] as const);
export const FAILURE_HANDLINGS: readonly FailureHandling[] = Object.freeze(['hold', 'ignore', 'overload'] as const);

/** The defaults, with provenance on each option above and in docs/algorithms.md. */
export const CONTROL_DEFAULTS = Object.freeze({
  algorithm: 'vegas' as AlgorithmName,
  initialLimit: 20,
  minLimit: 4,
  maxLimit: 200,
  updateIntervalMs: 100,
  minWindowMs: 2_000,
  maxWindowMs: 30_000,
  minSamples: 50,
  quantile: 0.9,
  smoothing: 0.2,
  rttTolerance: 1.5,
  backoffRatio: 0.9,
  correlationWindow: 50,
  failure: 'hold' as FailureHandling,
});

/**
 * The app-limited guard: growth stops at max(initialLimit, 2 x the window's peak in-flight).
 * The factor is Netflix's (VegasLimit and Gradient2Limit hold when inflight < limit / 2). The
 * initialLimit term is ours: a limit that latency pushed below its starting point may climb back
 * to it on healthy latency alone, so a quiet caller (8 requests a minute) recovers after an
 * incident; beyond it, growth needs demand.
 */
export const APP_LIMITED_FACTOR = 2;
/** A window where failures are at least this share of the answers does not grow (adr/0030). */
export const FAILURE_GROWTH_VETO = 0.5;
/**
 * The standard error of a p90 over n samples is about 1.7 x sigma / sqrt(n) relative to it for a
 * lognormal latency of small sigma (asymptotic variance of a sample quantile: q (1 - q) / (n f^2);
 * at q = 0.9, sqrt(0.09) / phi(1.28) = 1.71). Ours, used with the coefficient of variation.
 */
export const QUANTILE_SE_FACTOR = 1.7;
/** An idle gap is this many maxWindowMs (adr/0031). */
export const IDLE_WINDOWS = 2;

const integerAtLeastOne: NumberRule = { min: 1, integer: true };
const milliseconds: NumberRule = { min: 0 };
const CORRELATION_RULE: NumberRule = { min: 10, max: 4096, integer: true };

/** A number strictly between 0 and 1, with the shared message format. */
function openUnitOption(owner: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const checked = requireNumber(owner, name, value, { above: 0, max: 1 });
  if (checked === 1) {
    throw new RangeError(`resilix: ${owner} option "${name}" must be a number in (0, 1); received 1`);
  }
  return checked;
}

/**
 * Validates the control options once, at construction, into a frozen config. Unknown keys are
 * left alone (the limiter's admission options travel in the same object). A default that would
 * fall outside an explicit bound follows it (maxLimit 10 alone gives initialLimit 10), but two
 * explicit values that contradict each other throw, naming both.
 */
export function resolveControlConfig(options: unknown, owner = 'limiter'): ControlConfig {
  const o = optionsObject<ControlOptions>(owner, options);
  const d = CONTROL_DEFAULTS;
  const algorithm = choiceOption<AlgorithmName>(owner, 'algorithm', o.algorithm, d.algorithm, ALGORITHMS);

  const maxLimit = numberOption(owner, 'maxLimit', o.maxLimit, d.maxLimit, integerAtLeastOne);
  const minLimit = numberOption(owner, 'minLimit', o.minLimit, Math.min(d.minLimit, maxLimit), integerAtLeastOne);
  orderedOptions(owner, 'minLimit', minLimit, 'maxLimit', maxLimit);
  const initialDefault = Math.min(Math.max(d.initialLimit, minLimit), maxLimit);
  const initialLimit = numberOption(owner, 'initialLimit', o.initialLimit, initialDefault, integerAtLeastOne);
  orderedOptions(owner, 'minLimit', minLimit, 'initialLimit', initialLimit);
  orderedOptions(owner, 'initialLimit', initialLimit, 'maxLimit', maxLimit);

  const updateIntervalMs = numberOption(
    owner,
    'updateIntervalMs',
    o.updateIntervalMs,
    d.updateIntervalMs,
    milliseconds,
  );
  const minWindowMs = numberOption(owner, 'minWindowMs', o.minWindowMs, d.minWindowMs, milliseconds);
  const maxWindowMs = numberOption(
    owner,
    'maxWindowMs',
    o.maxWindowMs,
    Math.max(d.maxWindowMs, minWindowMs),
    milliseconds,
  );
  orderedOptions(owner, 'minWindowMs', minWindowMs, 'maxWindowMs', maxWindowMs);
  const minSamples = numberOption(owner, 'minSamples', o.minSamples, d.minSamples, {
    min: 1,
    max: 1_000_000,
    integer: true,
  });
  const quantile = openUnitOption(owner, 'quantile', o.quantile, d.quantile);
  const smoothing = numberOption(owner, 'smoothing', o.smoothing, d.smoothing, { above: 0, max: 1 });
  const rttTolerance = numberOption(owner, 'rttTolerance', o.rttTolerance, d.rttTolerance, { min: 1 });
  const backoffRatio = openUnitOption(owner, 'backoffRatio', o.backoffRatio, d.backoffRatio);
  const correlationWindow = numberOption(
    owner,
    'correlationWindow',
    o.correlationWindow,
    d.correlationWindow,
    CORRELATION_RULE,
  );
  const failure = choiceOption<FailureHandling>(owner, 'failure', o.failure, d.failure, FAILURE_HANDLINGS);

  return Object.freeze({
    algorithm,
    initialLimit,
    minLimit,
    maxLimit,
    updateIntervalMs,
    minWindowMs,
    maxWindowMs,
    minSamples,
    quantile,
    smoothing,
    rttTolerance,
    backoffRatio,
    correlationWindow,
    failure,
    idleAfterMs: IDLE_WINDOWS * maxWindowMs,
  });
}

function createAlgorithm(config: ControlConfig): LimitAlgorithm {
  const overloadBackoff = config.backoffRatio;
  // Timeout is the strongest reduce signal (spec §8): the overload backoff applied twice. Ours.
  const timeoutBackoff = config.backoffRatio * config.backoffRatio;
  switch (config.algorithm) {
    case 'vegas':
      return createVegas({ overloadBackoff, timeoutBackoff });
    case 'gradient2':
      return createGradient2({
        rttTolerance: config.rttTolerance,
        smoothing: config.smoothing,
        overloadBackoff,
        timeoutBackoff,
      });
    case 'aimd':
      return createAimd({ backoffRatio: config.backoffRatio });
    case 'fixed':
      return createFixed();
  }
}

/** The control loop's snapshot, with the baseline's reset count for telemetry and tests. */
export interface ControlLoopSnapshot extends LimitControllerSnapshot {
  /** Covariance resets of the baseline since construction (adr/0033). */
  readonly baselineResets: number;
}

/**
 * The limiter's control loop: window -> latency signal -> baseline -> algorithm -> guardrails.
 * Settle-driven (spec §9.5, ADR-001): `observe` counts the call and, when `updateIntervalMs` has
 * passed since the last check, closes the window if it is ready. No timers, no clock reads: time
 * comes in with each call. `observe` allocates nothing; a window close allocates only an event
 * object, and only when somebody listens.
 */
export class LimitControlLoop implements LimitController {
  /** The admitted limit; a plain field, read on every admission. */
  limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly changes = new EventChannel<LimitChange>();
  readonly config: ControlConfig;
  private estimate: number;
  private readonly algorithm: LimitAlgorithm;
  /** vegas and gradient2 steer by latency; aimd and fixed do not, and the no-gain rule leaves them be. */
  private readonly latencyDriven: boolean;
  private readonly window: SamplingWindow;
  private readonly signal = new LatencySignal();
  private readonly baseline: Baseline;
  private readonly knee: KneeEvidence;
  /** The timeout share a healthy upstream shows anyway (adr/0037); latency-driven algorithms only. */
  private readonly tail = new TimeoutTail();
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
    tailRatio: 1,
    quantileNoise: 0,
  };
  private readonly decision: Decision = { estimate: 0, reason: '' };
  private nextCheckAt = -Infinity;
  private lastLearnedAt = Number.NaN;
  private windowsClosed = 0;
  // The last decision, kept as fields so a window close allocates nothing.
  private hasChange = false;
  private changeFrom = 0;
  private changeTo = 0;
  private changeDirection: LimitChange['direction'] = 'hold';
  private changeReason = '';
  private changeAt = 0;

  constructor(config: ControlConfig) {
    this.config = config;
    this.minLimit = config.minLimit;
    this.maxLimit = config.maxLimit;
    this.estimate = config.initialLimit;
    this.limit = config.initialLimit;
    this.algorithm = createAlgorithm(config);
    this.latencyDriven = config.algorithm === 'vegas' || config.algorithm === 'gradient2';
    this.window = new SamplingWindow(config);
    this.baseline = new Baseline(config.correlationWindow);
    this.knee = new KneeEvidence(config.correlationWindow);
  }

  observe(observation: Observation, now: number, inflight: number): boolean {
    let changed = false;
    const learned = this.lastLearnedAt;
    if (now - learned >= this.config.idleAfterMs) changed = this.relaxAfterIdle(now, now - learned);
    // A timeout whose upstream run time is under the no-load latency spent its budget waiting in
    // our queue and reached the upstream with a sliver of it: no evidence of upstream saturation
    // (ours). Counted, a queue that outgrew the deadline would cut the limit that drains it.
    const starved = observation.verdict === 'timeout' && observation.latencyMs < this.baseline.valueMs;
    if (!starved && this.window.record(observation.verdict, observation.latencyMs, inflight, now))
      this.lastLearnedAt = now;
    if (now < this.nextCheckAt) return changed;
    this.nextCheckAt = now + this.config.updateIntervalMs;
    if (!this.window.ready(now, this.windowFloorMs())) return changed;
    return this.closeWindow(now) || changed;
  }

  setLimit(limit: number, now: number): boolean {
    if (typeof limit !== 'number' || Number.isNaN(limit)) {
      throw new TypeError(`resilix: setLimit needs a number; received ${String(limit)}`);
    }
    return this.apply(this.clamp(limit), 'manual', now);
  }

  snapshot(): ControlLoopSnapshot {
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
      windows: this.windowsClosed,
      lastChange: this.hasChange ? this.lastChange() : undefined,
      baselineResets: this.baseline.resets,
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
    const window = this.window;
    const summary = this.summary;
    window.summarise(now, summary);
    summary.tailRatio = 1;
    summary.quantileNoise = 0;
    if (summary.samples > 0) {
      const quantileMs = window.latencyQuantile();
      this.signal.add(quantileMs);
      const meanMs = window.latencyMean();
      if (meanMs > 0 && quantileMs > meanMs) summary.tailRatio = quantileMs / meanMs;
      summary.quantileNoise = (QUANTILE_SE_FACTOR * window.latencyCv()) / Math.sqrt(summary.samples);
    }
    summary.latencyMs = this.signal.smoothedMs;
    // The expected tail (adr/0037): vegas and gradient2 count as reduce signals only the timeouts
    // beyond the share a healthy upstream shows anyway (learnt from earlier windows, below).
    const timeouts = summary.timeouts;
    if (this.latencyDriven) summary.timeouts = this.tail.excess(timeouts, summary.reached);

    const failureDominated = summary.failures > 0 && summary.failures >= FAILURE_GROWTH_VETO * summary.reached;
    const clean = summary.samples > 0 && summary.overloads === 0 && summary.timeouts === 0 && !failureDominated;
    const binding = summary.peakInflight >= this.limit;
    const seconds = summary.durationMs > 0 ? summary.durationMs / 1000 : 1;
    const goodput = summary.samples / seconds;
    let baselineUpdate: BaselineUpdate = 'none';
    if (clean) {
      baselineUpdate = this.baseline.update(
        this.signal.filteredMs,
        this.signal.smoothedMs,
        this.signal.warm,
        summary.meanInflight,
        goodput,
        this.algorithm.shrinkRatio(this.estimate),
      );
    }
    // The knee evidence (adr/0034) takes windows with reduce signals too: an upstream that
    // answers 429 while latency sits at the baseline is one whose baseline has its queue in it.
    let aboveKnee = false;
    if (this.latencyDriven && summary.samples > 0 && !failureDominated) {
      const baselineMs = this.baseline.valueMs;
      const overloadedAtBaseline = summary.overloads > 0 && this.signal.smoothedMs <= baselineMs * RISE_RATIO;
      aboveKnee = this.knee.observe(summary.meanInflight, goodput, binding && clean, overloadedAtBaseline);
      // At the knee the filtered latency is the no-load latency; the smoothed one still lags.
      // At the knee (goodput fell as the limit stepped down) the filtered latency is the no-load
      // latency, up or down: a latency cliff raises it (adr/0036); the smoothed one still lags.
      if (this.knee.foundKnee) this.baseline.setAtKnee(this.signal.filteredMs);
    }
    summary.baselineMs = this.baseline.valueMs;
    // Only a window whose latency has not risen (the baseline's own test: above RISE_RATIO x the
    // algorithm's shrink ratio) teaches the tail; timeouts that come with a queue are the queue's.
    const estimate = this.estimate;
    if (
      this.latencyDriven &&
      summary.samples > 0 &&
      this.signal.smoothedMs <= summary.baselineMs * RISE_RATIO * this.algorithm.shrinkRatio(estimate)
    ) {
      this.tail.learn(timeouts, summary.reached);
    }

    const decision = this.decision;
    this.algorithm.step(estimate, summary, decision);
    let next = decision.estimate;
    let reason = decision.reason;
    if (next > estimate) {
      if (failureDominated) {
        next = estimate;
        reason = 'failures';
      } else {
        const demandCeiling = APP_LIMITED_FACTOR * summary.peakInflight;
        const ceiling = demandCeiling > this.config.initialLimit ? demandCeiling : this.config.initialLimit;
        if (next > ceiling) {
          next = ceiling > estimate ? ceiling : estimate;
          reason = 'app-limited';
        } else if (baselineUpdate === 'reset') {
          reason = 'baseline-reset';
        }
      }
    }
    if (aboveKnee) {
      // The no-gain rule (adr/0034): the limit binds, in-flight moved, goodput did not follow.
      const stepped = estimate * this.config.backoffRatio;
      if (stepped <= this.minLimit) this.knee.stand();
      if (next > stepped) {
        next = stepped;
        reason = 'no-throughput-gain';
      }
    }
    if (!(next === next) || next === Infinity || next === -Infinity) {
      next = estimate;
      reason = 'invalid-step';
    }
    if (next >= this.maxLimit && estimate >= this.maxLimit && next >= estimate) reason = 'at-max';
    else if (next <= this.minLimit && estimate <= this.minLimit && next <= estimate) reason = 'at-min';
    window.restart(now);
    this.windowsClosed++;
    return this.apply(this.clamp(next), reason, now);
  }

  /**
   * The idle rule (adr/0031): after a gap of at least idleAfterMs without a call that taught
   * anything, the half-filled window and the latency smoothing are stale and are dropped, the
   * rise episode ends, and a limit below initialLimit climbs back towards it, halving the distance
   * per idleAfterMs of gap. The baseline is kept: it is the best no-load reference there is.
   */
  private relaxAfterIdle(now: number, gapMs: number): boolean {
    // The gap is accounted for once, even if the settle that ended it teaches nothing.
    this.lastLearnedAt = now;
    this.window.restart(Number.NaN);
    this.signal.reset();
    this.baseline.endEpisode();
    this.nextCheckAt = -Infinity;
    const initial = this.config.initialLimit;
    if (!(this.estimate < initial)) return false;
    const remaining = 2 ** (-gapMs / this.config.idleAfterMs);
    return this.apply(this.clamp(initial - (initial - this.estimate) * remaining), 'idle-reset', now);
  }

  private clamp(estimate: number): number {
    if (estimate < this.minLimit) return this.minLimit;
    if (estimate > this.maxLimit) return this.maxLimit;
    return estimate;
  }

  private apply(next: number, reason: string, now: number): boolean {
    const from = this.limit;
    const to = Math.floor(next);
    this.changeDirection = next > this.estimate ? 'grow' : next < this.estimate ? 'shrink' : 'hold';
    this.estimate = next;
    this.limit = to;
    this.hasChange = true;
    this.changeFrom = from;
    this.changeTo = to;
    this.changeReason = reason;
    this.changeAt = now;
    if (to === from) return false;
    if (this.changes.size > 0) this.changes.emit(this.lastChange());
    return true;
  }

  private lastChange(): LimitChange {
    return {
      from: this.changeFrom,
      to: this.changeTo,
      direction: this.changeDirection,
      reason: this.changeReason,
      at: this.changeAt,
    };
  }
}

/** The control loop behind `limiter()`; `config` comes from `resolveControlConfig`. */
export function createLimitController(config: ControlConfig): LimitController {
  return new LimitControlLoop(config);
}
