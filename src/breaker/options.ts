import type { Classifier } from '../core/classify';
import type { Clock } from '../core/clock';
import { functionOption, knownOptions, numberOption, optionsObject, orderedOptions } from '../core/options';
import type { PersistedBreakerState } from './persistence';

export interface BreakerOptions {
  /** Opens when failures / calls in the window reach this, in (0, 1]. Default 0.5. */
  failureRateThreshold?: number | undefined;
  /** Opens when slow calls / calls in the window reach this, in (0, 1]. Default 0.5. */
  slowCallRateThreshold?: number | undefined;
  /**
   * A call whose `latencyMs` exceeds this is slow. Default 10 000. `Infinity` turns slow-call
   * detection off. Streams: call `ctx.mark()` at the first byte or token, or this measures the
   * whole stream.
   */
  slowCallDurationMs?: number | undefined;
  /** Calls the window must hold before a rate can open the breaker. Default 20. */
  minSamples?: number | undefined;
  /**
   * The low-traffic floor: once the window has been collecting for its full `windowMs`, a rate
   * may open the breaker with this many calls, if it is convincingly over its threshold (ADR-0021).
   * Default min(5, minSamples); equal to `minSamples` turns the floor off.
   */
  lowTrafficMinSamples?: number | undefined;
  /** Length of the rolling window; a call is forgotten once it is older than this. Default 60 000. */
  windowMs?: number | undefined;
  /** Buckets the window is cut into (aging happens a bucket at a time). Default 10. */
  buckets?: number | undefined;
  /** This many failures in a row open the breaker whatever the volume. Default 10; `Infinity` turns it off. */
  consecutiveFailures?: number | undefined;
  /** How long the breaker stays open before letting probes through. Default 30 000. */
  openMs?: number | undefined;
  /** Each re-open straight from half-open multiplies the open period by this. Default 1 (constant). */
  backoffMultiplier?: number | undefined;
  /** The ceiling for a backed-off open period. Default max(300 000, openMs). */
  maxOpenMs?: number | undefined;
  /** Probe calls let through in half-open; all must succeed to close it. Default 3. */
  halfOpenProbes?: number | undefined;
  /** The monotonic clock every state change reads. Default `performance.now`. */
  clock?: Clock | undefined;
  /**
   * Wall-clock milliseconds (epoch), read only by `toJSON()` and by a restore, to measure the time
   * between saving and restoring in another process (ADR-0023). Default `Date.now`.
   */
  wallClock?: (() => number) | undefined;
  /** Classifies calls run through this breaker's own `execute`. */
  classify?: Classifier | undefined;
  /** State saved by `toJSON()`, to continue from (serverless: one invocation to the next). */
  restore?: PersistedBreakerState | undefined;
}

/** The validated, fully-defaulted configuration; the hot path reads these fields and never re-checks. */
export interface BreakerConfig {
  readonly failureRateThreshold: number;
  readonly slowCallRateThreshold: number;
  readonly slowCallDurationMs: number;
  readonly minSamples: number;
  readonly lowTrafficMinSamples: number;
  readonly windowMs: number;
  readonly buckets: number;
  readonly consecutiveFailures: number;
  readonly openMs: number;
  readonly backoffMultiplier: number;
  readonly maxOpenMs: number;
  readonly halfOpenProbes: number;
}

/**
 * Defaults and their provenance (ADR-0009, ADR-0024; docs/breaker.md has the same table).
 */
export const BREAKER_DEFAULTS = Object.freeze({
  /** resilience4j failureRateThreshold 50 % (opossum and Hystrix errorThresholdPercentage 50 too). */
  failureRateThreshold: 0.5,
  /**
   * Ours. resilience4j's 100 % needs every call in the window slow, so one fast cached answer keeps
   * the breaker closed through a whole degradation. 0.5 reads "the window's median call was slower
   * than slowCallDurationMs", the same bar as the failure rate.
   */
  slowCallRateThreshold: 0.5,
  /**
   * Polly: the per-attempt timeout of Microsoft.Extensions.Http.Resilience's standard pipeline
   * (10 s). A call slower than a mainstream HTTP stack would have let it run is slow. resilience4j's
   * 60 s is never reached in the production scenario (p50 10.4 s), so its slow-call condition could
   * not fire where it is needed.
   */
  slowCallDurationMs: 10_000,
  /**
   * Hystrix circuitBreaker.requestVolumeThreshold 20 (opossum's ancestor; opossum itself defaults
   * to 0 and opens on a first failure). At 20 calls, an upstream failing 10 % of calls reaches 50 %
   * with probability 7e-6. resilience4j and Polly ask 100, out of reach for most client traffic.
   */
  minSamples: 20,
  /**
   * Ours (ADR-0021): the fewest calls a rate is read from once the window is age-saturated. Below
   * minSamples the rate must also clear a 95 % confidence bar, so 5 calls open the breaker only if
   * all 5 failed; at 8 calls a minute an upstream failing 60 % then opens it in a median 2.4 min
   * (28 min on the consecutive backstop alone) and one failing 20 % at most 0.05 times an hour.
   */
  lowTrafficMinSamples: 5,
  /**
   * Ours: a full window holds "a few calls per minute" (5/min reaches the low-traffic floor).
   * opossum uses 10 s, Polly 30 s, resilience4j's time window 100 s.
   */
  windowMs: 60_000,
  /** opossum rollingCountBuckets 10 (Hystrix metrics.rollingStats.numBuckets 10). */
  buckets: 10,
  /**
   * Ours. A backstop for traffic too low for any rate; at high volume it must not undercut the
   * rate threshold: with 10, an upstream failing 20 % of calls shows such a run once in 1.2e7
   * calls (gobreaker's 6 and Envoy's 5 would do so once in 2e4 and 4e3).
   */
  consecutiveFailures: 10,
  /** opossum resetTimeout 30 s; between Polly's 5 s break and resilience4j's 60 s wait. */
  openMs: 30_000,
  /** resilience4j, Polly, opossum and cockatiel all default to a constant open period. */
  backoffMultiplier: 1,
  /** Ours: a backed-off breaker still probes every 5 minutes (only with backoffMultiplier > 1). */
  maxOpenMs: 300_000,
  /**
   * Ours. Every probe must succeed, so the count trades false closes against false re-opens: with
   * 3, a recovered upstream failing 5 % of calls closes with probability 0.86, one still failing
   * half its calls with 0.125. resilience4j's 10 would reopen that recovered upstream 40 % of the
   * time under an all-must-succeed rule; opossum's and cockatiel's 1 closes on one lucky call.
   */
  halfOpenProbes: 3,
});

const OWNER = 'breaker';

/** The tuning options: a breaker given none of them shares one config object with every other. */
const TUNING_OPTIONS = [
  'failureRateThreshold',
  'slowCallRateThreshold',
  'slowCallDurationMs',
  'minSamples',
  'lowTrafficMinSamples',
  'windowMs',
  'buckets',
  'consecutiveFailures',
  'openMs',
  'backoffMultiplier',
  'maxOpenMs',
  'halfOpenProbes',
] as const satisfies readonly (keyof BreakerOptions)[];

/**
 * The validated, fully-defaulted options. A breaker with the defaults gets the one frozen default
 * config (152 bytes a breaker less: a KeyRegistry holds up to 1 000 of them).
 */
export function resolveBreakerConfig(options: Partial<BreakerOptions>): BreakerConfig {
  for (const name of TUNING_OPTIONS) if (options[name] !== undefined) return resolveConfig(options);
  return DEFAULT_CONFIG;
}

function resolveConfig(options: Partial<BreakerOptions>): BreakerConfig {
  const d = BREAKER_DEFAULTS;
  const o = options;
  const failureRateThreshold = numberOption(
    OWNER,
    'failureRateThreshold',
    o.failureRateThreshold,
    d.failureRateThreshold,
    {
      above: 0,
      max: 1,
    },
  );
  const slowCallRateThreshold = numberOption(
    OWNER,
    'slowCallRateThreshold',
    o.slowCallRateThreshold,
    d.slowCallRateThreshold,
    {
      above: 0,
      max: 1,
    },
  );
  const slowCallDurationMs = numberOption(OWNER, 'slowCallDurationMs', o.slowCallDurationMs, d.slowCallDurationMs, {
    above: 0,
    infinite: true,
  });
  const minSamples = numberOption(OWNER, 'minSamples', o.minSamples, d.minSamples, { min: 1, integer: true });
  const lowTrafficMinSamples = numberOption(
    OWNER,
    'lowTrafficMinSamples',
    o.lowTrafficMinSamples,
    Math.min(d.lowTrafficMinSamples, minSamples),
    { min: 1, integer: true },
  );
  orderedOptions(OWNER, 'lowTrafficMinSamples', lowTrafficMinSamples, 'minSamples', minSamples);
  const windowMs = numberOption(OWNER, 'windowMs', o.windowMs, d.windowMs, { above: 0 });
  // At most 1 000 buckets: ours, a bound on per-breaker memory (a KeyRegistry holds up to 1 000 breakers).
  const buckets = numberOption(OWNER, 'buckets', o.buckets, d.buckets, { min: 1, max: 1000, integer: true });
  const consecutiveFailures = numberOption(OWNER, 'consecutiveFailures', o.consecutiveFailures, d.consecutiveFailures, {
    min: 1,
    integer: true,
    infinite: true,
  });
  const openMs = numberOption(OWNER, 'openMs', o.openMs, d.openMs, { min: 0 });
  const backoffMultiplier = numberOption(OWNER, 'backoffMultiplier', o.backoffMultiplier, d.backoffMultiplier, {
    min: 1,
  });
  const maxOpenMs = numberOption(OWNER, 'maxOpenMs', o.maxOpenMs, Math.max(d.maxOpenMs, openMs), { min: 0 });
  orderedOptions(OWNER, 'openMs', openMs, 'maxOpenMs', maxOpenMs);
  const halfOpenProbes = numberOption(OWNER, 'halfOpenProbes', o.halfOpenProbes, d.halfOpenProbes, {
    min: 1,
    integer: true,
  });
  return Object.freeze({
    failureRateThreshold,
    slowCallRateThreshold,
    slowCallDurationMs,
    minSamples,
    lowTrafficMinSamples,
    windowMs,
    buckets,
    consecutiveFailures,
    openMs,
    backoffMultiplier,
    maxOpenMs,
    halfOpenProbes,
  });
}

const DEFAULT_CONFIG: BreakerConfig = resolveConfig({});

const BREAKER_OPTION_NAMES: readonly (keyof BreakerOptions)[] = [
  ...TUNING_OPTIONS,
  'clock',
  'wallClock',
  'classify',
  'restore',
];

export function breakerOptionsObject(options: unknown): Partial<BreakerOptions> {
  const o = optionsObject<BreakerOptions>(OWNER, options);
  knownOptions(OWNER, o, BREAKER_OPTION_NAMES);
  return o;
}

export function wallClockOption(value: unknown): () => number {
  return functionOption<() => number>(OWNER, 'wallClock', value) ?? defaultWallClock;
}

/** Epoch ms; used only to measure the gap between toJSON() and a restore (ADR-0023). */
function defaultWallClock(): number {
  return Date.now();
}
