import type { CallContext, CallFn, ExecuteOptions } from './call';
import { classifyOutcome, runClassifier, type Classification, type Classifier } from './classify';
import type { TimerHandle } from './clock';
import { reportError } from './events';
import type { Observation } from './observation';
import type { CallPlan, MutableObservation, Permit } from './ports';
import { describeSignal, describeValue, readAborted } from './caller-input';
import { TimeoutError } from '../errors/timeout-error';

/** A call refused by an inner policy teaches the outer ones nothing (ADR-007). */
const REJECTED: Observation = Object.freeze({ verdict: 'rejected', latencyMs: 0 });
const CANCELLED: Observation = Object.freeze({ verdict: 'cancelled', latencyMs: 0 });
const TIMED_OUT: Classification = Object.freeze({ verdict: 'timeout' });
const CANCELLED_CLASS: Classification = Object.freeze({ verdict: 'cancelled' });

const RUNNING = 0;
const TIMED_OUT_STATE = 1;
const CANCELLED_STATE = 2;
const SETTLED = 3;
type CallState = typeof RUNNING | typeof TIMED_OUT_STATE | typeof CANCELLED_STATE | typeof SETTLED;

/**
 * The longest delay a platform timer keeps: `setTimeout` clamps anything above 2^31 - 1 ms (about
 * 24.8 days) to ~1 ms. A longer deadline is armed in steps of at most this (adr/0013).
 */
export const MAX_TIMER_MS = 2_147_483_647;

/**
 * Runs one call through the plan's policies in canonical order (breaker -> limiter -> bulkhead ->
 * timeout), and delivers exactly one Observation to every policy that admitted it, innermost
 * first (DESIGN.md §4). It never throws: bad input and faults come back as a rejected promise,
 * as fetch does, and every step after admission gives back what it took when it fails
 * (adr/0012).
 */
export function runCall<T>(plan: CallPlan, fn: CallFn<T>, options: ExecuteOptions | undefined): Promise<T> {
  try {
    return startCall(plan, fn, options);
  } catch (error) {
    // Only reading the caller's options or signal throws this far, before anything was taken.
    return Promise.reject(error);
  }
}

function startCall<T>(plan: CallPlan, fn: CallFn<T>, options: ExecuteOptions | undefined): Promise<T> {
  if (typeof fn !== 'function') {
    return Promise.reject(new TypeError(`resilix: execute(fn) needs a function; received ${typeof fn}`));
  }
  let signal: AbortSignal | undefined;
  let timeoutMs = plan.timeout?.timeoutMs;
  if (options !== undefined && options !== null) {
    if (typeof options !== 'object') {
      return Promise.reject(
        new TypeError(`resilix: execute options must be an object; received ${describeValue(options)}`),
      );
    }
    const given = options.signal;
    if (given !== undefined && given !== null) {
      // A cheap shape check, as fetch makes (any realm's AbortSignal passes): an object whose
      // `aborted` is a boolean and that takes and removes listeners.
      const aborted = typeof given === 'object' ? (given as { aborted?: unknown }).aborted : undefined;
      if (
        typeof aborted !== 'boolean' ||
        typeof given.addEventListener !== 'function' ||
        typeof given.removeEventListener !== 'function'
      ) {
        return Promise.reject(
          new TypeError(
            `resilix: execute option "signal" must be an AbortSignal, undefined or null; received ${describeSignal(given)}`,
          ),
        );
      }
      if (aborted) return Promise.reject(given.reason);
      signal = given;
    }
    const requested = options.timeoutMs;
    if (requested !== undefined) {
      if (typeof requested !== 'number' || Number.isNaN(requested) || requested <= 0) {
        return Promise.reject(
          new RangeError(
            `resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received ${describeValue(requested)}`,
          ),
        );
      }
      timeoutMs = requested === Infinity ? undefined : requested;
    }
    const attempt = options.attempt;
    if (attempt !== undefined && !(Number.isInteger(attempt) && attempt >= 1)) {
      const message = `resilix: execute option "attempt" must be an integer in [1, Infinity); received ${describeValue(attempt)}`;
      return Promise.reject(typeof attempt === 'number' ? new RangeError(message) : new TypeError(message));
    }
    const classify = options.classify;
    if (classify !== undefined && typeof classify !== 'function') {
      return Promise.reject(
        new TypeError(`resilix: execute option "classify" must be a function; received ${describeValue(classify)}`),
      );
    }
  }
  const clock = plan.clock;
  // Only the breaker and the limiter learn from a call. Without them nothing needs the call's
  // latency, so no clock is read (a deadline is then just timeoutMs from a start of 0).
  const startedAt = plan.breaker !== undefined || plan.limiter !== undefined ? clock.now() : 0;
  const deadlineAt = timeoutMs === undefined ? Infinity : startedAt + timeoutMs;

  let ticket = -1;
  const breaker = plan.breaker;
  if (breaker !== undefined) {
    ticket = breaker.admit();
    if (ticket < 0) return Promise.reject(breaker.rejection());
  }
  // From here on the call holds a breaker ticket, and then a permit: nothing below may throw.
  const limiter = plan.limiter;
  if (limiter === undefined)
    return runAdmitted(plan, fn, options, signal, ticket, undefined, startedAt, 0, deadlineAt, timeoutMs);
  const permit = limiter.tryAcquire();
  if (permit !== undefined)
    return runAdmitted(plan, fn, options, signal, ticket, permit, startedAt, 0, deadlineAt, timeoutMs);
  return runQueued(plan, fn, options, signal, ticket, startedAt, deadlineAt, timeoutMs);
}

async function runQueued<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  signal: AbortSignal | undefined,
  ticket: number,
  startedAt: number,
  deadlineAt: number,
  timeoutMs: number | undefined,
): Promise<T> {
  let permit: Permit;
  try {
    permit = await plan.limiter!.acquire(signal, deadlineAt, timeoutMs);
  } catch (error) {
    plan.breaker?.settle(ticket, signal !== undefined && readAborted(signal) ? CANCELLED : REJECTED);
    throw error;
  }
  let aborted: boolean | undefined;
  try {
    aborted = signal?.aborted;
  } catch (error) {
    permit.settle(REJECTED);
    plan.breaker?.settle(ticket, REJECTED);
    throw error;
  }
  if (aborted) {
    // The caller left between the wake-up and this continuation: the call must not start.
    permit.settle(CANCELLED);
    plan.breaker?.settle(ticket, CANCELLED);
    throw signal!.reason;
  }
  const now = plan.clock.now();
  return runAdmitted(plan, fn, options, signal, ticket, permit, now, now - startedAt, deadlineAt, timeoutMs);
}

function runAdmitted<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  signal: AbortSignal | undefined,
  ticket: number,
  permit: Permit | undefined,
  runStartedAt: number,
  queuedMs: number,
  deadlineAt: number,
  timeoutMs: number | undefined,
): Promise<T> {
  const bulkhead = plan.bulkhead;
  if (bulkhead !== undefined && !bulkhead.tryEnter()) {
    permit?.settle(REJECTED);
    plan.breaker?.settle(ticket, REJECTED);
    return Promise.reject(bulkhead.rejection());
  }
  if (runStartedAt >= deadlineAt) {
    // The whole budget went on queueing: the upstream never sees this call.
    bulkhead?.leave();
    permit?.settle(REJECTED);
    plan.breaker?.settle(ticket, REJECTED);
    return Promise.reject(new TimeoutError({ timeoutMs: timeoutMs!, queued: true }));
  }
  const call = new InFlightCall<T>(
    plan,
    options,
    signal,
    ticket,
    permit,
    runStartedAt,
    queuedMs,
    deadlineAt,
    timeoutMs,
  );
  return call.start(fn);
}

function newObservation(): MutableObservation {
  return { verdict: 'ok', latencyMs: 0, durationMs: 0, queuedMs: 0, inflight: 0, retryAfterMs: undefined, attempt: 1 };
}

/**
 * What only a call raced against a deadline or a caller signal needs. Kept apart so that the
 * common unraced call (no deadline, no signal) carries none of it: ~56 bytes less per call.
 */
class Race<T> {
  timer: TimerHandle = undefined;
  /** Timer steps of MAX_TIMER_MS already run out, for a deadline longer than one timer (a small integer). */
  longSteps = 0;
  abortReason: unknown = undefined;
  resolveOuter: ((value: T) => void) | undefined = undefined;
  rejectOuter: ((reason: unknown) => void) | undefined = undefined;
  /** The listener on the caller's signal, kept to remove it; only when there is a signal. */
  abortListener: (() => void) | undefined = undefined;

  constructor(
    readonly deadlineAt: number,
    readonly timeoutMs: number | undefined,
    /** The caller's signal (null already read as none). */
    readonly callerSignal: AbortSignal | undefined,
  ) {}
}

const FAILED: Classification = Object.freeze({ verdict: 'failure' });

/**
 * One admitted call: its context, its deadline race, and its single settlement. Nothing in it
 * throws: every call into code that is not ours (the clock's timer functions, the caller's signal,
 * fn, the classifier) is guarded, and a failure before fn ran gives back every slot (adr/0012).
 */
class InFlightCall<T> implements CallContext {
  private state: CallState = RUNNING;
  private markedAt = NaN;
  private controller: AbortController | undefined = undefined;
  private readonly race: Race<T> | undefined;

  constructor(
    private readonly plan: CallPlan,
    /** The caller's options, kept whole: one field instead of attempt and classifier. */
    private readonly options: ExecuteOptions | undefined,
    signal: AbortSignal | undefined,
    private readonly ticket: number,
    private readonly permit: Permit | undefined,
    private readonly startedAt: number,
    private readonly queuedMs: number,
    deadlineAt: number,
    timeoutMs: number | undefined,
  ) {
    this.race =
      deadlineAt !== Infinity || signal !== undefined ? new Race<T>(deadlineAt, timeoutMs, signal) : undefined;
  }

  get attempt(): number {
    return this.options?.attempt ?? 1;
  }

  private get classify(): Classifier | undefined {
    return this.options?.classify ?? this.plan.classify;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const race = this.race;
      // Without a deadline the caller's own signal says everything ours would: hand it over.
      if (race !== undefined && race.deadlineAt === Infinity && race.callerSignal !== undefined)
        return race.callerSignal;
      this.controller = new AbortController();
      if (this.state === TIMED_OUT_STATE || this.state === CANCELLED_STATE) this.controller.abort(race!.abortReason);
    }
    return this.controller.signal;
  }

  mark(): void {
    // The first mark wins: it is the moment the upstream first answered.
    if (this.markedAt !== this.markedAt && this.state !== SETTLED) {
      const now = this.plan.clock.now();
      this.markedAt = now;
      // The limiter learns the latency now: a stream's permit is held long after its first token,
      // and a sample that waited for the stream's end would reach the limiter 45 s late.
      this.permit?.mark?.(now - this.startedAt, now);
    }
  }

  start(fn: CallFn<T>): Promise<T> {
    const race = this.race;
    if (race === undefined) return this.startUnraced(fn);
    // Closures are made here, for the raced path only: an unraced call allocates none of them.
    return new Promise<T>((resolve, reject) => {
      race.resolveOuter = resolve;
      race.rejectOuter = reject;
      try {
        if (race.deadlineAt !== Infinity) this.armDeadline(race, () => this.onTimer());
        const signal = race.callerSignal;
        if (signal !== undefined) {
          race.abortListener = () => this.onCallerAbort();
          signal.addEventListener('abort', race.abortListener);
        }
      } catch (error) {
        this.abandon(race, error);
        return;
      }
      let produced: T | PromiseLike<T>;
      try {
        produced = fn(this);
        if (isThenable(produced)) {
          Promise.resolve(produced).then(
            (value) => this.onFulfilled(value),
            (reason: unknown) => this.onRejected(reason),
          );
          return;
        }
      } catch (error) {
        this.onRejected(error);
        return;
      }
      this.onFulfilled(produced);
    });
  }

  /** No deadline and no caller signal: nothing to race, so no timer, no listener, no extra promise. */
  private startUnraced(fn: CallFn<T>): Promise<T> {
    let produced: T | PromiseLike<T>;
    try {
      produced = fn(this);
      if (isThenable(produced)) {
        return Promise.resolve(produced).then(
          (value) => {
            this.settle(true, value);
            return value;
          },
          (reason: unknown) => {
            this.settle(false, reason);
            throw reason;
          },
        );
      }
    } catch (error) {
      this.settle(false, error);
      return Promise.reject(error);
    }
    this.settle(true, produced);
    return Promise.resolve(produced);
  }

  /**
   * Arms the deadline timer for what remains of the budget after the steps already run out, at
   * most MAX_TIMER_MS at a time (adr/0013). No clock read: the steps add up to the budget.
   */
  private armDeadline(race: Race<T>, onTimer: () => void): void {
    const remainingMs = race.deadlineAt - this.startedAt - race.longSteps * MAX_TIMER_MS;
    race.timer = this.plan.clock.setTimer(onTimer, remainingMs > MAX_TIMER_MS ? MAX_TIMER_MS : remainingMs);
  }

  /**
   * The setup before fn failed (the clock could not arm the deadline, or the caller's signal
   * refused a listener): fn never ran, so every slot goes back and nobody learns anything.
   */
  private abandon(race: Race<T>, error: unknown): void {
    this.state = SETTLED;
    if (race.timer !== undefined) this.clearDeadline(race);
    if (race.abortListener !== undefined) this.removeAbortListener(race);
    const plan = this.plan;
    plan.bulkhead?.leave();
    this.permit?.settle(REJECTED);
    plan.breaker?.settle(this.ticket, REJECTED);
    race.rejectOuter!(error);
  }

  private onFulfilled(value: T): void {
    const wasRunning = this.state === RUNNING;
    this.settle(true, value);
    if (wasRunning) this.race!.resolveOuter!(value);
  }

  private onRejected(reason: unknown): void {
    const wasRunning = this.state === RUNNING;
    this.settle(false, reason);
    if (wasRunning) this.race!.rejectOuter!(reason);
  }

  /** The deadline timer fired: the deadline itself, or one step of a longer one. */
  private onTimer(): void {
    const race = this.race!;
    race.timer = undefined;
    if (this.state !== RUNNING) return;
    if (race.deadlineAt - this.startedAt - race.longSteps * MAX_TIMER_MS > MAX_TIMER_MS) {
      race.longSteps++;
      try {
        this.armDeadline(race, () => this.onTimer());
        return;
      } catch (error) {
        // The rest of the deadline cannot be armed: end the call now rather than never.
        reportError(error, 'clock.setTimer() threw while re-arming a long deadline; the call timed out early');
      }
    }
    this.onDeadline(race);
  }

  private onDeadline(race: Race<T>): void {
    this.state = TIMED_OUT_STATE;
    const error = new TimeoutError({ timeoutMs: race.timeoutMs! });
    race.abortReason = error;
    this.plan.timeout?.recordTimeout();
    if (race.abortListener !== undefined) this.removeAbortListener(race);
    // The breaker holds no slot, so it learns now: a call that ignores its signal and never
    // settles must still count against a black-holed upstream. The limiter and bulkhead hold
    // their slots, and learn, when the work really settles.
    const breaker = this.plan.breaker;
    if (breaker !== undefined) {
      const elapsedMs = race.deadlineAt - this.startedAt;
      breaker.settle(this.ticket, {
        verdict: 'timeout',
        latencyMs: this.markedAt === this.markedAt ? this.markedAt - this.startedAt : elapsedMs,
        durationMs: elapsedMs,
        queuedMs: this.queuedMs,
        inflight: this.permit?.inflight ?? this.plan.bulkhead?.active ?? 1,
        attempt: this.attempt,
      });
    }
    // The caller hears at the deadline; the slots stay held until the work really settles.
    race.rejectOuter!(error);
    this.controller?.abort(error);
  }

  /** The caller's abort listener. It runs inside the platform's event dispatch: it must not throw. */
  private onCallerAbort(): void {
    if (this.state !== RUNNING) return;
    this.state = CANCELLED_STATE;
    const race = this.race!;
    let reason: unknown;
    try {
      reason = race.callerSignal!.reason;
    } catch (error) {
      reason = error;
    }
    race.abortReason = reason;
    if (race.timer !== undefined) this.clearDeadline(race);
    race.rejectOuter!(reason);
    this.controller?.abort(reason);
  }

  private clearDeadline(race: Race<T>): void {
    const timer = race.timer;
    race.timer = undefined;
    try {
      this.plan.clock.clearTimer(timer);
    } catch (error) {
      // The timer may still fire; it finds the call settled and does nothing.
      reportError(error, 'clock.clearTimer() threw; the call carried on');
    }
  }

  private removeAbortListener(race: Race<T>): void {
    try {
      race.callerSignal!.removeEventListener('abort', race.abortListener!);
    } catch (error) {
      // The listener may stay; an abort then finds the call no longer running and does nothing.
      reportError(error, "the caller's signal threw from removeEventListener; the call carried on");
    }
  }

  private settle(fulfilled: boolean, subject: unknown): void {
    if (this.state === SETTLED) return;
    const plan = this.plan;
    const race = this.race;
    const classify = this.classify; // a getter over the options: read it once
    if (race !== undefined) {
      if (race.timer !== undefined) this.clearDeadline(race);
      if (this.state === RUNNING && race.abortListener !== undefined) this.removeAbortListener(race);
    }
    if (
      plan.breaker === undefined &&
      plan.limiter === undefined &&
      classify === undefined &&
      (plan.settled === undefined || plan.settled.size === 0)
    ) {
      // Nothing learns from this call and nobody asked to classify it: no clock reading, no
      // classification, no Observation.
      this.state = SETTLED;
      plan.bulkhead?.leave();
      return;
    }
    const now = plan.clock.now();
    const classification =
      this.state === TIMED_OUT_STATE
        ? TIMED_OUT
        : this.state === CANCELLED_STATE
          ? CANCELLED_CLASS
          : classifyCall(classify, fulfilled, subject);
    const timedOut = this.state === TIMED_OUT_STATE;
    this.state = SETTLED;
    const bulkhead = plan.bulkhead;
    // Policies read an Observation during settle and keep nothing, so one object per plan serves
    // every call of the plan (adr/0084); a settle nested inside another (a listener that runs a
    // call through the same plan) gets its own.
    const reused = !plan.observationInUse;
    let observation = plan.observation;
    if (observation === undefined || !reused) {
      observation = newObservation();
      if (reused) plan.observation = observation;
    }
    plan.observationInUse = true;
    try {
      observation.verdict = classification.verdict;
      observation.latencyMs = (this.markedAt === this.markedAt ? this.markedAt : now) - this.startedAt;
      observation.durationMs = now - this.startedAt;
      observation.queuedMs = this.queuedMs;
      observation.inflight = this.permit?.inflight ?? bulkhead?.active ?? 1;
      observation.retryAfterMs = classification.retryAfterMs;
      observation.attempt = this.attempt;
      bulkhead?.leave();
      this.permit?.settle(observation, now);
      if (!timedOut) plan.breaker?.settle(this.ticket, observation, now);
      const settled = plan.settled;
      if (settled !== undefined && settled.size > 0) settled.emit(observation);
    } finally {
      if (reused) plan.observationInUse = false;
    }
  }
}

/**
 * The verdict of a call that ended on its own. The default classifier reads the call's result
 * (its `status`, its headers): a getter there that throws is the classifier failing, and counts
 * as a `failure` like a user classifier that throws; the caller still gets the call's own result.
 */
function classifyCall(classify: Classifier | undefined, fulfilled: boolean, subject: unknown): Classification {
  try {
    return classify === undefined
      ? classifyOutcome(fulfilled, subject)
      : runClassifier(
          classify,
          fulfilled ? { status: 'fulfilled', value: subject } : { status: 'rejected', reason: subject },
        );
  } catch {
    return FAILED;
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
