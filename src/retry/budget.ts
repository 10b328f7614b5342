import { resolveClock, type Clock, type ResolvedClock } from '../core/clock';
import { knownOptions, numberOption, optionsObject } from '../core/options';

export interface RetryBudgetOptions {
  /**
   * Retries earned by each call that succeeded on its first attempt (verdict `ok` or `answered`).
   * Default 0.2: Finagle's RetryBudget ("about 20% of the total requests ... retried"), and the AWS
   * SDK's standard retry mode, where a first-try success refunds 1 token and a retry costs 5.
   */
  ratio?: number | undefined;
  /**
   * Retries earned per second whatever the traffic, so a quiet client can still retry. Default 10:
   * Finagle's RetryBudget `minRetriesPerSec`. 0 turns the floor off.
   */
  minRetriesPerSecond?: number | undefined;
  /**
   * The most retries the budget holds at once: the burst it can grant after a quiet spell. A new
   * budget starts full. Default 100: the AWS SDK's standard mode (500 initial tokens at 5 per
   * retry), and Finagle's reserve (10 retries/s for its 10 s time-to-live).
   */
  maxBalance?: number | undefined;
  /** The clock the floor accrues on. Must be the clock of every retry policy that shares the budget. */
  clock?: Clock | undefined;
}

export interface RetryBudgetSnapshot {
  readonly kind: 'retryBudget';
  readonly ratio: number;
  readonly minRetriesPerSecond: number;
  readonly maxBalance: number;
  /** Retries the budget would grant now (fractional: earnings accrue in fractions of a retry). */
  readonly balance: number;
  /** First-attempt successes deposited since construction. */
  readonly deposits: number;
  /** Retries granted since construction (refunds already subtracted). */
  readonly granted: number;
  /** Retries refused because the balance was under one retry. */
  readonly refused: number;
}

/** Defaults and their provenance (adr/0071-retry-budget.md). */
export const RETRY_BUDGET_DEFAULTS = Object.freeze({
  /** Finagle RetryBudget percentCanRetry 0.2; AWS SDK standard mode: +1 token per first-try success, 5 per retry. */
  ratio: 0.2,
  /** Finagle RetryBudget minRetriesPerSec 10. */
  minRetriesPerSecond: 10,
  /** AWS SDK standard mode: 500 initial tokens / 5 per retry; Finagle: 10/s reserve x 10 s ttl. */
  maxBalance: 100,
});

/**
 * Ours: what a sum of fractional deposits may fall short of a whole retry by rounding alone. Each
 * addition errs by at most half an ulp of the balance (~1e-16 under maxBalance 1e3), so 1e-9
 * covers millions of deposits; what it may grant early is a billionth of a retry.
 */
const ROUNDING_SLACK = 1e-9;

/**
 * How many retries a client may add, shared by every retry policy given it: a token bucket that
 * earns `ratio` of a retry for each call that succeeded first time, plus `minRetriesPerSecond`,
 * holds at most `maxBalance`, and pays one per retry. Retries therefore add at most
 * `ratio` x first-time successes + `minRetriesPerSecond` x seconds + `maxBalance` attempts, under
 * any interleaving: an outage cannot turn every call into several.
 *
 * No timer: the floor accrues lazily, from the elapsed time, when a retry asks (ADR-001). Share one
 * budget per upstream host (docs/retry.md shows it with a `KeyRegistry`).
 */
export class RetryBudget {
  readonly ratio: number;
  readonly minRetriesPerSecond: number;
  readonly maxBalance: number;
  /** @internal Every retry policy using this budget must read the same clock. */
  readonly clock: ResolvedClock;
  private tokens: number;
  private accruedAt: number;
  private deposited = 0;
  private grantedCount = 0;
  private refusedCount = 0;

  constructor(options?: RetryBudgetOptions);
  /** @internal `retry()` builds a budget from its `budget` option: errors name `retry option "budget.ratio"`. */
  constructor(options: RetryBudgetOptions | undefined, naming: { readonly owner: string; readonly path: string });
  constructor(options?: RetryBudgetOptions, { owner, path } = { owner: 'retryBudget', path: '' }) {
    const o = optionsObject<RetryBudgetOptions>(owner, options);
    knownOptions(owner, o, ['ratio', 'minRetriesPerSecond', 'maxBalance', 'clock'], path);
    const d = RETRY_BUDGET_DEFAULTS;
    this.ratio = numberOption(owner, `${path}ratio`, o.ratio, d.ratio, { min: 0 });
    const perSecond = o.minRetriesPerSecond;
    this.minRetriesPerSecond = numberOption(owner, `${path}minRetriesPerSecond`, perSecond, d.minRetriesPerSecond, {
      min: 0,
    });
    this.maxBalance = numberOption(owner, `${path}maxBalance`, o.maxBalance, d.maxBalance, { min: 1 });
    this.clock = resolveClock(o.clock, owner, `${path}clock`);
    this.tokens = this.maxBalance;
    this.accruedAt = this.minRetriesPerSecond > 0 ? this.clock.now() : 0;
  }

  /** Retries the budget would grant now. Reads the clock (the floor accrues). */
  get balance(): number {
    this.accrue(this.clock.now());
    return this.tokens;
  }

  /** A call succeeded on its first attempt: earn `ratio` of a retry. No clock read. */
  deposit(): void {
    this.deposited++;
    const tokens = this.tokens + this.ratio;
    this.tokens = tokens > this.maxBalance ? this.maxBalance : tokens;
  }

  /**
   * Asks for one retry: true (and the balance pays one) when at least one retry is in the budget.
   * `now` is the clock's reading, when the caller already took one.
   */
  tryWithdraw(now: number = this.clock.now()): boolean {
    this.accrue(now);
    // Deposits add `ratio` one at a time: five of 0.2 sum to 0.9999999999999999, which must pay a retry.
    if (this.tokens >= 1 - ROUNDING_SLACK) {
      this.tokens = this.tokens > 1 ? this.tokens - 1 : 0;
      this.grantedCount++;
      return true;
    }
    this.refusedCount++;
    return false;
  }

  /** Gives back a granted retry that was never made (its caller aborted during the backoff). */
  refund(): void {
    this.grantedCount--;
    const tokens = this.tokens + 1;
    this.tokens = tokens > this.maxBalance ? this.maxBalance : tokens;
  }

  snapshot(): RetryBudgetSnapshot {
    return {
      kind: 'retryBudget',
      ratio: this.ratio,
      minRetriesPerSecond: this.minRetriesPerSecond,
      maxBalance: this.maxBalance,
      balance: this.balance,
      deposits: this.deposited,
      granted: this.grantedCount,
      refused: this.refusedCount,
    };
  }

  private accrue(now: number): void {
    const perSecond = this.minRetriesPerSecond;
    if (perSecond === 0) return;
    const elapsedMs = now - this.accruedAt;
    if (!(elapsedMs > 0)) return;
    this.accruedAt = now;
    const tokens = this.tokens + (perSecond * elapsedMs) / 1000;
    this.tokens = tokens > this.maxBalance ? this.maxBalance : tokens;
  }
}

/** A retry budget to share between retry policies (per upstream host, say); see `RetryBudgetOptions`. */
export function retryBudget(options?: RetryBudgetOptions): RetryBudget {
  return new RetryBudget(options);
}
