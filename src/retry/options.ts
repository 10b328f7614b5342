import type { Classifier } from '../core/classify';
import type { Clock } from '../core/clock';
import type { Verdict } from '../core/verdict';
import type { BackoffKind } from './backoff';
import type { RetryBudget, RetryBudgetOptions } from './budget';

/** What `shouldRetry` is asked about: one attempt that ended with a verdict from the upstream. */
export interface AttemptOutcome {
  /** `answered`, `overload`, `failure` or `timeout` (never `ok`, and never one of our refusals). */
  readonly verdict: Verdict;
  /** The attempt that ended: 1 for the original call. */
  readonly attempt: number;
  /** The attempt's error, when it rejected. */
  readonly error: unknown;
  /** The attempt's value, when it resolved (a 503 `Response`, say). */
  readonly value: unknown;
  /** The upstream's Retry-After, in ms, when the classifier found one. */
  readonly retryAfterMs: number | undefined;
}

/**
 * Decides custom cases: `true` retries, `false` does not, `undefined` keeps the default (retry
 * `failure`, `timeout` and `overload`; not `answered`). Asked only about outcomes the upstream
 * produced: a success is never retried, and our own refusals follow fixed rules (a breaker refusal
 * is never retried; a limiter refusal only with `retryLimitExceeded`).
 */
export type ShouldRetry = (outcome: AttemptOutcome) => boolean | undefined;

export interface RetryOptions {
  /**
   * Attempts in all, the original included; 1 turns retrying off. Default 3: the AWS SDKs'
   * standard retry mode. An integer >= 1.
   */
  maxAttempts?: number | undefined;
  /**
   * `'exponential'` (default): full jitter, a uniform wait in [0, min(maxDelayMs, baseDelayMs·2^(n-1)))
   * before retry n. `'decorrelated'`: a uniform wait in [baseDelayMs, 3 x the previous wait), capped.
   * Both from the AWS Architecture Blog, "Exponential Backoff And Jitter" (2015).
   */
  backoff?: BackoffKind | undefined;
  /** The backoff's scale, in ms. Default 100: the AWS SDKs' base retry delay. */
  baseDelayMs?: number | undefined;
  /**
   * The longest wait before a retry, in ms: the backoff's cap, and the longest Retry-After (or
   * `retryAfterMs`) honoured; a retry that would have to wait longer is not made. Default 20 000:
   * the AWS SDKs' maximum retry delay.
   */
  maxDelayMs?: number | undefined;
  /**
   * How many retries may be added: a `RetryBudget` to share (per upstream host, say), options for
   * this policy's own budget, or `false` for none. Default: a budget of its own with
   * `RETRY_BUDGET_DEFAULTS` (20% of first-time successes + 10 retries/s, 100 at most).
   */
  budget?: RetryBudget | RetryBudgetOptions | false | undefined;
  /**
   * Retry calls our own limiter shed (`LimitExceededError`, and a deadline that passed in its
   * queue), after at least the error's `retryAfterMs`. Default false: a shed is the limiter saying
   * the upstream is full, and a retry is one more call at exactly the wrong time (docs/retry.md).
   */
  retryLimitExceeded?: boolean | undefined;
  /** Decides custom cases; see `ShouldRetry`. */
  shouldRetry?: ShouldRetry | undefined;
  /**
   * Classifies each attempt when the policy runs alone. In a pipeline the call's and the pipeline's
   * classifier come first, so the retry decides on the verdict the other policies learned.
   */
  classify?: Classifier | undefined;
  /** The clock for deadlines and backoff waits (the waits are armed on its timer seam). */
  clock?: Clock | undefined;
  /** A uniform number in [0, 1) for the jitter. Default `Math.random`; inject a seeded one to replay. */
  random?: (() => number) | undefined;
}

/** Defaults and their provenance (adr/0070-retry-defaults.md). */
export const RETRY_DEFAULTS = Object.freeze({
  /** AWS SDKs, standard retry mode: 3 attempts in all. */
  maxAttempts: 3,
  /** AWS Architecture Blog, "Exponential Backoff And Jitter": full jitter did the least work. */
  backoff: 'exponential' as BackoffKind,
  /** AWS SDKs: base delay 100 ms (smithy DEFAULT_RETRY_DELAY_BASE). */
  baseDelayMs: 100,
  /** AWS SDKs: maximum retry delay 20 s (smithy MAXIMUM_RETRY_DELAY). */
  maxDelayMs: 20_000,
  /** Ours (docs/retry.md): the limiter's shed is a verdict on load, not on this call. */
  retryLimitExceeded: false,
});

/** Why a retry that the verdict asked for was not made. */
export type RetryGiveUpReason =
  /** `maxAttempts` attempts were made. */
  | 'maxAttempts'
  /** The retry budget had no retry left. */
  | 'budget'
  /** The wait plus one more attempt (as long as the last one took) would not end before the deadline. */
  | 'deadline'
  /** The upstream (or our limiter) asked for a wait longer than `maxDelayMs`. */
  | 'retryAfter';

export const RETRY_GIVE_UP_REASONS: readonly RetryGiveUpReason[] = Object.freeze([
  'maxAttempts',
  'budget',
  'deadline',
  'retryAfter',
] as const);
