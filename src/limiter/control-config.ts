import { choiceOption, functionOption, numberOption, optionsObject, orderedOptions } from '../core/options';
import type { NumberRule } from '../core/options';
import type { AlgorithmName } from './controller';

/** A Vegas band bound: requests queued at the upstream, as a function of the current limit. */
export type BandFunction = (limit: number) => number;
/** How a `failure` verdict teaches the limiter (adr/0030-failure-verdict.md). */
export type FailureHandling = 'hold' | 'ignore' | 'overload';

/** The control loop's options: how the limit is found. Every default's provenance: docs/tuning.md. */
export interface ControlOptions {
  /**
   * 'vegas' (default: Uber and Netflix both chose it for this problem, spec §4.1), 'gradient2'
   * (spec §4.2), 'aimd' (error-driven, opt-in only, spec §4.3) or 'fixed' (initialLimit, always).
   */
  algorithm?: AlgorithmName | undefined;
  /**
   * The limit before any evidence, where the slow start begins. Default 1, ours (adr/0045): at one
   * call in flight nothing of ours queues, so the first latency is a no-load one; the slow start
   * (RFC 5681) doubles per round trip from there, reaching 100 in ~7 round trips.
   */
  initialLimit?: number | undefined;
  /**
   * The floor. Default min(1, initialLimit), ours (adr/0045; spec §6 guessed 4): a floor above a
   * small upstream's knee (2-3 for a 2-core database) holds a queue there forever, while one call
   * in flight keeps recovery observable.
   */
  minLimit?: number | undefined;
  /** The ceiling. Default 200: Netflix Gradient2Limit. */
  maxLimit?: number | undefined;
  /** How often, at most, a settle checks whether the window may close (no timers). Default 100 ms: Envoy's. */
  updateIntervalMs?: number | undefined;
  /** Shortest window. Default 2 000 ms: Uber's Cinnamon ("minimum interval 2 seconds"). */
  minWindowMs?: number | undefined;
  /**
   * Longest window floor: a window this old closes with any sample. Default 30 000 ms: Uber
   * ("maximum 30"). Twice this without calls is idle (adr/0031).
   */
  maxWindowMs?: number | undefined;
  /**
   * Samples that close a window (fewer once it has waited longer, adr/0032). Default 50: failsafe-go.
   * A baseline window that low traffic closes under it, after an app-limited slow start, also
   * counts that slow start's queue-free samples (adr/0109).
   */
  minSamples?: number | undefined;
  /** Latency quantile of a window. Default 0.9: Envoy's and Uber's p90. */
  quantile?: number | undefined;
  /** gradient2's limit smoothing, in (0, 1]. Default 0.2: Netflix Gradient2Limit. */
  smoothing?: number | undefined;
  /** gradient2's latency tolerance, >= 1. Default 1.5: Netflix Gradient2Limit. */
  rttTolerance?: number | undefined;
  /**
   * aimd's multiplicative backoff on `overload` or `timeout`. Default 0.9: Netflix AIMDLimit.
   * vegas and gradient2 cut overloads to the served concurrency (adr/0046), and timeouts (the
   * strongest signal, spec §8) by its square.
   */
  backoffRatio?: number | undefined;
  /** vegas's alpha(L) (Netflix VegasLimit): with fewer requests queued, the limit grows. Default `defaultAlpha`. */
  alpha?: BandFunction | undefined;
  /** vegas's beta(L): with more requests queued, the limit shrinks. Default `defaultBeta`. */
  beta?: BandFunction | undefined;
  /**
   * What a `failure` verdict teaches (adr/0030). 'hold' (default, ours): no latency sample (so never
   * the baseline), and a window at least half failures does not grow; 'ignore': nothing, like
   * `rejected`; 'overload': a reduce signal, like a 429.
   */
  failure?: FailureHandling | undefined;
}

/** Validated, fully defaulted, frozen; `idleAfterMs` derived: a gap this long is idle (2 x maxWindowMs, adr/0031). */
export type ControlConfig = { readonly [K in keyof ControlOptions]-?: Exclude<ControlOptions[K], undefined> } & {
  readonly idleAfterMs: number;
};

const ALGORITHMS: readonly AlgorithmName[] = Object.freeze(['vegas', 'gradient2', 'aimd', 'fixed'] as const);
const FAILURE_HANDLINGS: readonly FailureHandling[] = Object.freeze(['hold', 'ignore', 'overload'] as const);

/** The default band's shape (adr/0036, adr/0049): see `defaultAlpha`. */
export const ALPHA_POWER = 0.6;
export const BETA_RATIO = 2;
/** Holds C = 10 (the tightest case) within 20%: beta(12) < 2 needs <= 0.90; 5% noise margin (adr/0049). */
export const ALPHA_SCALE = 0.85;

/** The band a shape gives: alpha(L) = min(3 log10 max(L, 10), scale x (L / 10)^power), beta = ratio x alpha. */
export function bandOf(power: number, ratio: number, scale = 1): { alpha: BandFunction; beta: BandFunction } {
  const alpha = (limit: number): number => {
    const spec = 3 * Math.log10(limit > 10 ? limit : 10);
    const small = scale * (limit / 10) ** power;
    return small < spec ? small : spec;
  };
  return { alpha, beta: (limit: number) => ratio * alpha(limit) };
}

const DEFAULT_BAND = bandOf(ALPHA_POWER, BETA_RATIO, ALPHA_SCALE);

/**
 * vegas's default alpha (adr/0036, adr/0049): min(3 log10 max(L, 10), 0.85 x (L / 10)^0.6) requests, 0.85 at
 * L = 10 rather than Netflix VegasLimit's floor of 3 (+30% over a capacity of 10, per client). A
 * power below 1 keeps clients sharing an upstream fair; 3 log10 L governs from L ~ 404.
 */
export function defaultAlpha(limit: number): number {
  return DEFAULT_BAND.alpha(limit);
}

/** beta = BETA_RATIO x alpha: Netflix VegasLimit's 6 log10(L) against its alpha's 3 log10(L) (spec §4.1). */
export function defaultBeta(limit: number): number {
  return DEFAULT_BAND.beta(limit);
}

/** The defaults; provenance on each option above and in docs/tuning.md. */
export const CONTROL_DEFAULTS = Object.freeze({
  algorithm: 'vegas' as AlgorithmName,
  initialLimit: 1,
  minLimit: 1,
  maxLimit: 200,
  updateIntervalMs: 100,
  minWindowMs: 2_000,
  maxWindowMs: 30_000,
  minSamples: 50,
  quantile: 0.9,
  smoothing: 0.2,
  rttTolerance: 1.5,
  backoffRatio: 0.9,
  alpha: defaultAlpha,
  beta: defaultBeta,
  failure: 'hold' as FailureHandling,
});

/** An idle gap is this many maxWindowMs (adr/0031). */
export const IDLE_WINDOWS = 2;

const integerAtLeastOne: NumberRule = { min: 1, integer: true };
const msRule: NumberRule = { min: 0 };
const openUnit: NumberRule = { above: 0, below: 1 };
const sampleCount: NumberRule = { min: 1, max: 1_000_000, integer: true };

/**
 * Validates the options once, at construction; unknown keys (admission's) are left alone. A default
 * follows the explicit values around it; two explicit values that contradict each other throw, naming both.
 */
export function resolveControlConfig(options: unknown, owner = 'limiter'): ControlConfig {
  const o = optionsObject<ControlOptions>(owner, options);
  const d = CONTROL_DEFAULTS;
  const algorithm = choiceOption<AlgorithmName>(owner, 'algorithm', o.algorithm, d.algorithm, ALGORITHMS);

  const maxLimit = numberOption(owner, 'maxLimit', o.maxLimit, d.maxLimit, integerAtLeastOne);
  const explicitInitial =
    o.initialLimit === undefined
      ? undefined
      : numberOption(owner, 'initialLimit', o.initialLimit, 1, integerAtLeastOne);
  const minDefault = Math.min(d.minLimit, maxLimit, explicitInitial ?? Infinity);
  const minLimit = numberOption(owner, 'minLimit', o.minLimit, minDefault, integerAtLeastOne);
  orderedOptions(owner, 'minLimit', minLimit, 'maxLimit', maxLimit);
  const initialLimit = explicitInitial ?? Math.min(Math.max(d.initialLimit, minLimit), maxLimit);
  orderedOptions(owner, 'minLimit', minLimit, 'initialLimit', initialLimit);
  orderedOptions(owner, 'initialLimit', initialLimit, 'maxLimit', maxLimit);

  const updateIntervalMs = numberOption(owner, 'updateIntervalMs', o.updateIntervalMs, d.updateIntervalMs, msRule);
  const minWindowMs = numberOption(owner, 'minWindowMs', o.minWindowMs, d.minWindowMs, msRule);
  const maxWindowMs = numberOption(owner, 'maxWindowMs', o.maxWindowMs, Math.max(d.maxWindowMs, minWindowMs), msRule);
  orderedOptions(owner, 'minWindowMs', minWindowMs, 'maxWindowMs', maxWindowMs);

  return Object.freeze({
    algorithm,
    initialLimit,
    minLimit,
    maxLimit,
    updateIntervalMs,
    minWindowMs,
    maxWindowMs,
    minSamples: numberOption(owner, 'minSamples', o.minSamples, d.minSamples, sampleCount),
    quantile: numberOption(owner, 'quantile', o.quantile, d.quantile, openUnit),
    smoothing: numberOption(owner, 'smoothing', o.smoothing, d.smoothing, { above: 0, max: 1 }),
    rttTolerance: numberOption(owner, 'rttTolerance', o.rttTolerance, d.rttTolerance, { min: 1 }),
    backoffRatio: numberOption(owner, 'backoffRatio', o.backoffRatio, d.backoffRatio, openUnit),
    alpha: functionOption<BandFunction>(owner, 'alpha', o.alpha) ?? d.alpha,
    beta: functionOption<BandFunction>(owner, 'beta', o.beta) ?? d.beta,
    failure: choiceOption<FailureHandling>(owner, 'failure', o.failure, d.failure, FAILURE_HANDLINGS),
    idleAfterMs: IDLE_WINDOWS * maxWindowMs,
  });
}
