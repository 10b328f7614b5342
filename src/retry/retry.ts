import type { CallFn, ExecuteOptions } from '../core/call';
import { classifySafely, type Classification, type Classifier } from '../core/classify';
import { executeOptionsError } from '../core/caller-input';
import { discard } from '../core/discard';
import { resolveClock, type Clock, type ResolvedClock, type TimerHandle } from '../core/clock';
import { EventChannel, type Listener } from '../core/events';
import {
  booleanOption,
  choiceOption,
  functionOption,
  knownOptions,
  numberOption,
  optionsObject,
  orderedOptions,
} from '../core/options';
import type { Policy, RetryPort } from '../core/policy';
import type { CallPlan } from '../core/ports';
import { callPlan } from '../core/ports';
import { MAX_TIMER_MS, runCall, type AttemptHook } from '../core/run-call';
import type { Verdict } from '../core/verdict';
import { isBrokenCircuitError } from '../errors/broken-circuit-error';
import { isBulkheadFullError } from '../errors/bulkhead-full-error';
import { isLimitExceededError } from '../errors/limit-exceeded-error';
import { isTimeoutError } from '../errors/timeout-error';
import { decorrelatedJitterMs, fullJitterMs, type BackoffKind } from './backoff';
import { RetryBudget, type RetryBudgetOptions, type RetryBudgetSnapshot } from './budget';
import {
  RETRY_DEFAULTS,
  type AttemptOutcome,
  type RetryGiveUpReason,
  type RetryOptions,
  type ShouldRetry,
} from './options';

/**
 * A retry decided on, announced before its backoff wait (so a listener can log the wait). It may still not start:
 * the caller may leave during the wait, or a late timer overrun the deadline (then `onGiveUp` says 'deadline');
 * `snapshot().retries` counts the retries started.
 */
export interface RetryEvent {
  /** The attempt about to start: 2 for the first retry. */
  readonly attempt: number;
  /** How the previous attempt ended. */
  readonly verdict: Verdict;
  /** The wait before this attempt, in ms (the backoff, or the Retry-After when longer). */
  readonly delayMs: number;
  /** The hint the previous attempt carried (Retry-After, or the limiter's `retryAfterMs`). */
  readonly retryAfterMs: number | undefined;
}

/**
 * A retry the verdict asked for and that was not made: the caller gets the last attempt's outcome
 * (its error, or its value when it resolved, as a 503 `Response` does), unchanged.
 */
export interface RetryGiveUpEvent {
  /** The last attempt made. */
  readonly attempt: number;
  /** How it ended. */
  readonly verdict: Verdict;
  readonly reason: RetryGiveUpReason;
}

export interface RetrySnapshot {
  readonly kind: 'retry';
  readonly maxAttempts: number;
  readonly backoff: BackoffKind;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly retryLimitExceeded: boolean;
  /** Calls started through this policy (each counts once, however many attempts it took). */
  readonly calls: number;
  /** Calls between their first attempt and their outcome right now (running, or waiting to retry). */
  readonly active: number;
  /** Retries started: attempts 2 and up. */
  readonly retries: number;
  /** Calls that ended `ok` or `answered` on a retry. */
  readonly recovered: number;
  /** Retries the verdict asked for and that were not made, by reason. */
  readonly gaveUp: Readonly<Record<RetryGiveUpReason, number>>;
  /** Retries refused by the budget (the same as `gaveUp.budget`). */
  readonly budgetRefusals: number;
  /** Calls whose caller aborted during a backoff wait (the wait's timer was cleared at once). */
  readonly abortedInBackoff: number;
  /** The budget's own state (shared budgets count every policy's retries), or undefined without one. */
  readonly budget: RetryBudgetSnapshot | undefined;
}

const BACKOFFS: readonly BackoffKind[] = ['exponential', 'decorrelated'];
const OPTION_NAMES: readonly (keyof RetryOptions)[] = [
  'maxAttempts',
  'backoff',
  'baseDelayMs',
  'maxDelayMs',
  'budget',
  'retryLimitExceeded',
  'shouldRetry',
  'classify',
  'clock',
  'random',
];

/** Not a retry: the outcome goes to the caller as it is. */
const FINAL = 0;
/** The verdict asks for a retry. */
const RETRY = 1;
type Decision = typeof FINAL | typeof RETRY;

/**
 * Retries a call whose attempt failed, outermost in a pipeline: every attempt passes the breaker,
 * the limiter, the bulkhead and the timeout again, so each is admitted, limited and timed on its
 * own. Decisions come from the attempt's verdict (docs/retry.md):
 *
 * - `failure` and `timeout` are retried; `overload` too, but never before its Retry-After (or the
 *   limiter's `retryAfterMs`); `ok`, `answered` and a caller's abort never are.
 * - A refusal by our own breaker is never retried, nor a full bulkhead; our own limiter's shed only
 *   with `retryLimitExceeded`, and then after at least its `retryAfterMs`.
 * - Waits are exponential with full jitter (or decorrelated), capped at `maxDelayMs`, armed on the
 *   clock's timer seam (one timer per wait, cleared at once when the caller aborts: ADR-001).
 * - A retry that could not finish before the call's `timeoutMs` is not started; nor one the retry
 *   budget cannot pay for (20% of first-time successes plus 10 a second, by default).
 *
 * When a retry is not made the caller gets the last attempt's outcome unchanged (its error, or its
 * value); `onGiveUp` and the snapshot say why.
 */
export class RetryPolicy implements Policy<RetrySnapshot> {
  readonly kind = 'retry' as const;
  readonly maxAttempts: number;
  readonly backoff: BackoffKind;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
  readonly retryLimitExceeded: boolean;
  /** The budget this policy draws on (possibly shared), or undefined with `budget: false`. */
  readonly budget: RetryBudget | undefined;
  /** @internal */
  readonly clock: ResolvedClock;
  /** @internal */
  readonly port: RetryPort = this;
  private readonly shouldRetry: ShouldRetry | undefined;
  /** @internal */
  readonly classifier: Classifier | undefined;
  private readonly random: () => number;
  /** The plan of `execute` (retries of fn alone), made on its first call: in a pipeline it is never needed. */
  private ownPlan: CallPlan | undefined = undefined;
  private readonly retried = new EventChannel<RetryEvent>();
  private readonly gaveUpChannel = new EventChannel<RetryGiveUpEvent>();
  private freeHandlers: FirstOutcome | undefined = undefined;
  private callCount = 0;
  private activeCount = 0;
  private retryCount = 0;
  private recoveredCount = 0;
  private abortedCount = 0;
  private readonly gaveUp: Record<RetryGiveUpReason, number> = {
    maxAttempts: 0,
    budget: 0,
    deadline: 0,
    retryAfter: 0,
  };

  constructor(options?: RetryOptions) {
    const o = optionsObject<RetryOptions>('retry', options);
    knownOptions('retry', o, OPTION_NAMES);
    const d = RETRY_DEFAULTS;
    this.maxAttempts = numberOption('retry', 'maxAttempts', o.maxAttempts, d.maxAttempts, { min: 1, integer: true });
    this.backoff = choiceOption<BackoffKind>('retry', 'backoff', o.backoff, d.backoff, BACKOFFS);
    this.baseDelayMs = numberOption('retry', 'baseDelayMs', o.baseDelayMs, d.baseDelayMs, { min: 0 });
    this.maxDelayMs = numberOption('retry', 'maxDelayMs', o.maxDelayMs, Math.max(d.maxDelayMs, this.baseDelayMs), {
      min: 0,
    });
    orderedOptions('retry', 'baseDelayMs', this.baseDelayMs, 'maxDelayMs', this.maxDelayMs);
    this.retryLimitExceeded = booleanOption('retry', 'retryLimitExceeded', o.retryLimitExceeded, d.retryLimitExceeded);
    this.shouldRetry = functionOption<ShouldRetry>('retry', 'shouldRetry', o.shouldRetry);
    this.classifier = functionOption<Classifier>('retry', 'classify', o.classify);
    this.random = functionOption<() => number>('retry', 'random', o.random) ?? Math.random;
    this.clock = resolveClock(o.clock, 'retry');
    this.budget = resolveBudget(o.budget, o.clock, this.clock);
  }

  /** Calls between their first attempt and their outcome (the registry reads it: a busy key stays). */
  get active(): number {
    return this.activeCount;
  }

  /**
   * Runs `fn` with retries. `options.timeoutMs` is the budget of the whole call, every attempt and
   * wait included; `options.signal` cancels it, a pending wait included.
   */
  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    this.ownPlan ??= callPlan(this.clock, {}, this.classifier);
    return this.run(this.ownPlan, fn, options);
  }

  /**
   * @internal Runs a call's attempts through `plan` (a pipeline's inner policies, or none). The
   * caller's `timeoutMs` is the whole call's budget; each attempt gets the timeout policy's
   * `timeoutMs` or what is left of the budget, whichever is shorter.
   */
  run<T>(plan: CallPlan, fn: CallFn<T>, options: ExecuteOptions | undefined): Promise<T> {
    if (typeof fn !== 'function') {
      return Promise.reject(new TypeError(`resilix: execute(fn) needs a function; received ${typeof fn}`));
    }
    // The options are checked before the first attempt, as the call runner checks them: a bad
    // option is the caller's error, refused once, never an attempt's failure to retry. Every read
    // of the caller's objects is in the try: a getter that throws rejects the call, never throws.
    let first = options;
    // Read only when the call has a budget of its own (else NaN): one without reads no clock here.
    let startedAt = NaN;
    try {
      const invalid = executeOptionsError(options);
      if (invalid !== undefined) return Promise.reject(invalid);
      const signal = options?.signal ?? undefined;
      if (signal?.aborted) return Promise.reject(signal.reason);
      const requested = options?.timeoutMs;
      if (requested !== undefined) {
        if (requested !== Infinity) startedAt = this.clock.now();
        // The caller's timeoutMs is the whole call's; the first attempt gets the shorter of it and the
        // timeout policy's (an Infinity would otherwise switch the policy's deadline off).
        const attemptMs = plan.timeout?.timeoutMs;
        if (requested === Infinity || (attemptMs !== undefined && attemptMs < requested)) {
          first = attemptOptions(options!, options!.attempt ?? 1, attemptMs);
        }
      }
    } catch (error) {
      return Promise.reject(error);
    }
    this.callCount++;
    this.activeCount++;
    // The first attempt's outcome is read by a pooled handler (as the limiter pools permits,
    // ADR-0041), which the call runner calls in place of a `then` on its promise (adr/0025): a call
    // that succeeds first time allocates no closure, no state and no promise of its own. A call
    // that needs a retry moves on to the async loop.
    let handler = this.freeHandlers;
    if (handler === undefined) handler = new FirstOutcome(this);
    else this.freeHandlers = handler.nextFree;
    handler.plan = plan;
    handler.fn = fn as CallFn<unknown>;
    handler.options = options;
    handler.startedAt = startedAt;
    return runCall(plan, fn, first, handler);
  }

  /** @internal A handler whose attempt settled goes back to the pool. */
  pool(handler: FirstOutcome): void {
    handler.nextFree = this.freeHandlers;
    this.freeHandlers = handler;
  }

  /** @internal The first attempt ended: done if it succeeded, else on to the retry loop. */
  afterFirst<T>(
    plan: CallPlan,
    fn: CallFn<T>,
    options: ExecuteOptions | undefined,
    startedAt: number,
    fulfilled: boolean,
    subject: unknown,
  ): T | Promise<T> {
    const classify = options?.classify ?? plan.classify ?? this.classifier;
    if (fulfilled && classify === undefined && classifySafely(undefined, true, subject).verdict === 'ok') {
      this.budget?.deposit();
      this.activeCount--;
      return subject as T;
    }
    return this.retrying(plan, fn, options, startedAt, classify, fulfilled, subject);
  }

  /**
   * Hears every retry about to be made (after its wait is decided, before it starts). Returns the
   * event channel's subscription: `dispose()` it to stop listening.
   */
  onRetry(listener: Listener<RetryEvent>) {
    return this.retried.subscribe(listener);
  }

  /** Hears every retry the verdict asked for and that was not made, with the reason; `dispose()` to stop. */
  onGiveUp(listener: Listener<RetryGiveUpEvent>) {
    return this.gaveUpChannel.subscribe(listener);
  }

  snapshot(): RetrySnapshot {
    return {
      kind: 'retry',
      maxAttempts: this.maxAttempts,
      backoff: this.backoff,
      baseDelayMs: this.baseDelayMs,
      maxDelayMs: this.maxDelayMs,
      retryLimitExceeded: this.retryLimitExceeded,
      calls: this.callCount,
      active: this.activeCount,
      retries: this.retryCount,
      recovered: this.recoveredCount,
      gaveUp: { ...this.gaveUp },
      budgetRefusals: this.gaveUp.budget,
      abortedInBackoff: this.abortedCount,
      budget: this.budget?.snapshot(),
    };
  }

  /** The retry loop: decides on the attempt that just ended, waits, runs the next one, repeats. */
  private async retrying<T>(
    plan: CallPlan,
    fn: CallFn<T>,
    options: ExecuteOptions | undefined,
    startedAt: number,
    classify: Classifier | undefined,
    fulfilled: boolean,
    subject: unknown,
  ): Promise<T> {
    const attemptMs = plan.timeout?.timeoutMs;
    const deadlineAt = startedAt !== startedAt ? Infinity : startedAt + options!.timeoutMs!;
    const signal = options?.signal ?? undefined;
    const firstAttempt = options?.attempt ?? 1;
    let attempt = firstAttempt;
    let attemptStartedAt = startedAt;
    let previousDelayMs = this.baseDelayMs;
    try {
      if (!fulfilled && signal !== undefined && signal.aborted) throw subject; // cancelled: never retried
      for (;;) {
        // ---- the verdict, and whether it asks for a retry ----
        let verdict: Verdict;
        let hintMs: number | undefined;
        let decision: Decision;
        if (fulfilled && classify === undefined) {
          const c = classifySafely(undefined, true, subject);
          verdict = c.verdict;
          if (verdict === 'ok') {
            if (attempt === firstAttempt) this.budget?.deposit();
            else this.recoveredCount++;
            return subject as T;
          }
          hintMs = c.retryAfterMs;
          decision = this.upstreamDecision(verdict, attempt, undefined, subject, hintMs);
        } else {
          const refusal = fulfilled ? undefined : refusalOf(subject);
          if (refusal !== undefined) {
            verdict = 'rejected';
            hintMs = refusal === SHED ? (subject as { retryAfterMs?: number }).retryAfterMs : undefined;
            decision = (refusal === SHED || refusal === QUEUE_TIMEOUT) && this.retryLimitExceeded ? RETRY : FINAL;
          } else {
            const c: Classification =
              !fulfilled && isTimeoutError(subject) ? TIMED_OUT : classifySafely(classify, fulfilled, subject);
            verdict = c.verdict;
            hintMs = c.retryAfterMs;
            decision =
              verdict === 'ok'
                ? FINAL
                : this.upstreamDecision(
                    verdict,
                    attempt,
                    fulfilled ? undefined : subject,
                    fulfilled ? subject : undefined,
                    hintMs,
                  );
          }
        }
        if (decision === FINAL) {
          if (verdict === 'ok' || verdict === 'answered') {
            if (attempt === firstAttempt) this.budget?.deposit();
            else this.recoveredCount++;
          }
          if (fulfilled) return subject as T;
          throw subject;
        }

        // ---- may it be made: attempts, wait, deadline, budget ----
        let reason: RetryGiveUpReason | undefined;
        let delayMs = 0;
        const now = this.clock.now();
        const retry = attempt - firstAttempt + 1; // 1 for the first retry
        if (retry >= this.maxAttempts) reason = 'maxAttempts';
        else {
          const backoffMs =
            this.backoff === 'exponential'
              ? fullJitterMs(retry, this.baseDelayMs, this.maxDelayMs, this.random())
              : decorrelatedJitterMs(previousDelayMs, this.baseDelayMs, this.maxDelayMs, this.random());
          previousDelayMs = backoffMs;
          delayMs = hintMs !== undefined && hintMs > backoffMs ? hintMs : backoffMs;
          if (delayMs > this.maxDelayMs) reason = 'retryAfter';
          // The next attempt must be able to run as long as the last one took, after the wait.
          else if (deadlineAt !== Infinity && now + delayMs + (now - attemptStartedAt) >= deadlineAt)
            reason = 'deadline';
          else if (this.budget !== undefined && !this.budget.tryWithdraw(now)) reason = 'budget';
        }
        if (reason !== undefined) {
          this.gaveUp[reason]++;
          if (this.gaveUpChannel.size > 0) this.gaveUpChannel.emit({ attempt, verdict, reason });
          if (fulfilled) return subject as T;
          throw subject;
        }

        // ---- wait, then the next attempt ----
        attempt++;
        if (this.retried.size > 0) this.retried.emit({ attempt, verdict, delayMs, retryAfterMs: hintMs });
        if (delayMs > 0) {
          try {
            await backoffWait(this.clock, delayMs, signal);
          } catch (abortReason) {
            this.abortedCount++;
            this.budget?.refund();
            if (fulfilled) discard(subject);
            throw abortReason;
          }
        }
        if (signal?.aborted) {
          this.abortedCount++;
          this.budget?.refund();
          if (fulfilled) discard(subject);
          throw signal.reason;
        }
        let budgetMs: number | undefined = attemptMs;
        if (deadlineAt !== Infinity) {
          attemptStartedAt = this.clock.now();
          const remaining = deadlineAt - attemptStartedAt;
          if (remaining <= 0) {
            // The wait overran (a late timer): no attempt after the deadline.
            this.budget?.refund();
            this.gaveUp.deadline++;
            if (this.gaveUpChannel.size > 0)
              this.gaveUpChannel.emit({ attempt: attempt - 1, verdict, reason: 'deadline' });
            if (fulfilled) return subject as T;
            throw subject;
          }
          budgetMs = budgetMs === undefined || remaining < budgetMs ? remaining : budgetMs;
        }
        this.retryCount++;
        // The value retried is dropped: a Response's unread body would hold its connection (undici keeps the socket
        // until the body ends or the server's keep-alive closes it: one socket per retry during an outage).
        if (fulfilled) discard(subject);
        try {
          subject = await runCall(plan, fn, attemptOptions(options, attempt, budgetMs));
          fulfilled = true;
        } catch (error) {
          if (signal?.aborted) throw error; // cancelled: never retried
          subject = error;
          fulfilled = false;
        }
      }
    } finally {
      this.activeCount--;
    }
  }

  /** The default for a verdict the upstream produced (not `ok`), then `shouldRetry`'s word. */
  private upstreamDecision(
    verdict: Verdict,
    attempt: number,
    error: unknown,
    value: unknown,
    retryAfterMs: number | undefined,
  ): Decision {
    let decision: Decision = verdict === 'failure' || verdict === 'timeout' || verdict === 'overload' ? RETRY : FINAL;
    const shouldRetry = this.shouldRetry;
    if (shouldRetry !== undefined) {
      const outcome: AttemptOutcome = { verdict, attempt, error, value, retryAfterMs };
      let answer: unknown;
      try {
        answer = shouldRetry(outcome);
      } catch {
        // A predicate that throws must not lose the call: the default decides.
        answer = undefined;
      }
      if (answer === true) decision = RETRY;
      else if (answer === false) decision = FINAL;
    }
    return decision;
  }
}

/**
 * Reads one call's first attempt: a pooled hook with the call's state. Released before the outcome
 * is acted on, so a retry loop (or a nested call) never sees it reused under its feet.
 * @internal
 */
class FirstOutcome implements AttemptHook {
  plan: CallPlan | undefined = undefined;
  fn: CallFn<unknown> | undefined = undefined;
  options: ExecuteOptions | undefined = undefined;
  /** The call's start when it has a budget of its own, else NaN (a number field stays unboxed). */
  startedAt = NaN;
  nextFree: FirstOutcome | undefined = undefined;

  constructor(private readonly policy: RetryPolicy) {}

  afterAttempt(fulfilled: boolean, subject: unknown): unknown {
    const plan = this.plan!;
    const fn = this.fn!;
    const options = this.options;
    const startedAt = this.startedAt;
    this.plan = undefined;
    this.fn = undefined;
    this.options = undefined;
    this.policy.pool(this);
    return this.policy.afterFirst(plan, fn, options, startedAt, fulfilled, subject);
  }
}

/** Our own refusals, told apart by their brands. */
const BREAKER = 1;
const SHED = 2;
const BULKHEAD = 3;
const QUEUE_TIMEOUT = 4;
type Refusal = typeof BREAKER | typeof SHED | typeof BULKHEAD | typeof QUEUE_TIMEOUT;

function refusalOf(error: unknown): Refusal | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  if (isBrokenCircuitError(error)) return BREAKER;
  if (isLimitExceededError(error)) return SHED;
  if (isBulkheadFullError(error)) return BULKHEAD;
  if (isTimeoutError(error) && error.queued) return QUEUE_TIMEOUT;
  return undefined;
}

const TIMED_OUT: Classification = Object.freeze({ verdict: 'timeout' });

function attemptOptions(
  options: ExecuteOptions | undefined,
  attempt: number,
  timeoutMs: number | undefined,
): ExecuteOptions {
  return { signal: options?.signal, timeoutMs, attempt, classify: options?.classify };
}

/**
 * One backoff wait on the clock's timer seam: resolves after `delayMs`, or rejects with the
 * signal's reason the moment it aborts, clearing the timer (no timer outlives the wait). A wait
 * past one timer's reach (a Retry-After of weeks under a `maxDelayMs` of weeks) is armed in steps
 * of MAX_TIMER_MS, as deadlines are (adr/0013): a longer timer would fire at once.
 */
function backoffWait(clock: ResolvedClock, delayMs: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal === undefined && delayMs <= MAX_TIMER_MS) {
      // The common wait: one timer, nothing to listen to, no closure of ours.
      keepAlive(clock.setTimer(resolve, delayMs));
      return;
    }
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    let timer: TimerHandle | undefined;
    let leftMs = delayMs;
    const onAbort = (): void => {
      clock.clearTimer(timer!);
      reject(signal!.reason);
    };
    const done = (): void => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    };
    const arm = (): void => {
      const stepMs = leftMs > MAX_TIMER_MS ? MAX_TIMER_MS : leftMs;
      leftMs -= stepMs;
      timer = clock.setTimer(leftMs > 0 ? arm : done, stepMs);
      keepAlive(timer);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm();
  });
}

/**
 * The platform clock unrefs its timers: a deadline timer must not keep a Node process alive on its
 * own, since the call it guards (a socket) does. A backoff wait is different: it is the only thing
 * the call waits on, and an unref'd one would let a script exit with its retry pending. So a wait
 * timer that can be ref'd is.
 */
function keepAlive(handle: TimerHandle): void {
  if (typeof handle === 'object' && handle !== null && typeof (handle as { ref?: unknown }).ref === 'function') {
    (handle as { ref(): void }).ref();
  }
}

function resolveBudget(
  value: RetryBudget | RetryBudgetOptions | false | undefined,
  clockOption: Clock | undefined,
  clock: ResolvedClock,
): RetryBudget | undefined {
  if (value === false) return undefined;
  if (value instanceof RetryBudget) {
    if (value.clock !== clock) {
      throw new TypeError(
        'resilix: retry option "budget" reads another clock than the retry policy; pass the same `clock` to retryBudget() and retry()',
      );
    }
    return value;
  }
  if (value === undefined) return new RetryBudget(clockOption === undefined ? {} : { clock: clockOption });
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `resilix: retry option "budget" must be a RetryBudget, budget options or false; received ${
        value === null ? 'null' : typeof value
      }`,
    );
  }
  if (
    (value as RetryBudgetOptions).clock !== undefined &&
    resolveClock((value as RetryBudgetOptions).clock, 'retry', 'budget.clock') !== clock
  ) {
    throw new TypeError(
      'resilix: retry option "budget.clock" differs from the retry policy\'s clock; give the clock to retry() only',
    );
  }
  // The budget accrues on the retry policy's clock (checked above to be the same as its own, if any).
  const given = value as RetryBudgetOptions;
  return new RetryBudget(clockOption === undefined ? given : { ...given, clock: clockOption }, {
    owner: 'retry',
    path: 'budget.',
  });
}

/** A retry policy; see `RetryOptions` for the knobs and their provenance. */
export function retry(options?: RetryOptions): RetryPolicy {
  return new RetryPolicy(options);
}
