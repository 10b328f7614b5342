import type { CallContext, CallFn, ExecuteOptions } from './call';
import { classifyOutcome, runClassifier, type Classification, type Classifier } from './classify';
import type { TimerHandle } from './clock';
import type { Observation } from './observation';
import type { Verdict } from './verdict';
import type { CallPlan, Permit } from './ports';
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
 * Runs one call through the plan's policies in canonical order (breaker -> limiter -> bulkhead ->
 * timeout), and delivers exactly one Observation to every policy that admitted it, innermost
 * first (DESIGN.md §4).
 */
export function runCall<T>(plan: CallPlan, fn: CallFn<T>, options: ExecuteOptions | undefined): Promise<T> {
  if (typeof fn !== 'function') {
    return Promise.reject(new TypeError(`resilix: execute(fn) needs a function; received ${typeof fn}`));
  }
  const signal = options?.signal;
  if (signal !== undefined && signal.aborted) return Promise.reject(signal.reason);
  let timeoutMs = plan.timeout?.timeoutMs;
  if (options?.timeoutMs !== undefined) {
    const requested = options.timeoutMs;
    if (typeof requested !== 'number' || Number.isNaN(requested) || requested <= 0) {
      return Promise.reject(
        new RangeError(
          `resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received ${String(requested)}`,
        ),
      );
    }
    timeoutMs = requested === Infinity ? undefined : requested;
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
  const limiter = plan.limiter;
  if (limiter === undefined)
    return runAdmitted(plan, fn, options, ticket, undefined, startedAt, 0, deadlineAt, timeoutMs);
  const permit = limiter.tryAcquire();
  if (permit !== undefined) return runAdmitted(plan, fn, options, ticket, permit, startedAt, 0, deadlineAt, timeoutMs);
  return runQueued(plan, fn, options, ticket, startedAt, deadlineAt, timeoutMs);
}

async function runQueued<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  ticket: number,
  startedAt: number,
  deadlineAt: number,
  timeoutMs: number | undefined,
): Promise<T> {
  let permit: Permit;
  try {
    permit = await plan.limiter!.acquire(options?.signal, deadlineAt, timeoutMs);
  } catch (error) {
    plan.breaker?.settle(ticket, options?.signal?.aborted === true ? CANCELLED : REJECTED);
    throw error;
  }
  const signal = options?.signal;
  if (signal !== undefined && signal.aborted) {
    // The caller left between the wake-up and this continuation: the call must not start.
    permit.settle(CANCELLED);
    plan.breaker?.settle(ticket, CANCELLED);
    throw signal.reason;
  }
  const now = plan.clock.now();
  return runAdmitted(plan, fn, options, ticket, permit, now, now - startedAt, deadlineAt, timeoutMs);
}

function runAdmitted<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
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
  const call = new InFlightCall<T>(plan, options, ticket, permit, runStartedAt, queuedMs, deadlineAt, timeoutMs);
  return call.start(fn);
}

interface MutableObservation extends Observation {
  verdict: Verdict;
  latencyMs: number;
  durationMs: number;
  queuedMs: number;
  inflight: number;
  retryAfterMs: number | undefined;
  attempt: number;
}

function newScratch(): MutableObservation {
  return { verdict: 'ok', latencyMs: 0, durationMs: 0, queuedMs: 0, inflight: 0, retryAfterMs: undefined, attempt: 1 };
}

const scratch = newScratch();
let scratchInUse = false;

/**
 * What only a call raced against a deadline or a caller signal needs. Kept apart so that the
 * common unraced call (no deadline, no signal) carries none of it: ~56 bytes less per call.
 */
class Race<T> {
  timer: TimerHandle = undefined;
  abortReason: unknown = undefined;
  resolveOuter: ((value: T) => void) | undefined = undefined;
  rejectOuter: ((reason: unknown) => void) | undefined = undefined;
  /** The listener on the caller's signal, kept to remove it; only when there is a signal. */
  abortListener: (() => void) | undefined = undefined;

  constructor(
    readonly deadlineAt: number,
    readonly timeoutMs: number | undefined,
  ) {}
}

/** One admitted call: its context, its deadline race, and its single settlement. */
class InFlightCall<T> implements CallContext {
  private state: CallState = RUNNING;
  private markedAt = NaN;
  private controller: AbortController | undefined = undefined;
  private readonly race: Race<T> | undefined;

  constructor(
    private readonly plan: CallPlan,
    /** The caller's options, kept whole: one field instead of signal, attempt and classifier. */
    private readonly options: ExecuteOptions | undefined,
    private readonly ticket: number,
    private readonly permit: Permit | undefined,
    private readonly startedAt: number,
    private readonly queuedMs: number,
    deadlineAt: number,
    timeoutMs: number | undefined,
  ) {
    this.race =
      deadlineAt !== Infinity || options?.signal !== undefined ? new Race<T>(deadlineAt, timeoutMs) : undefined;
  }

  get attempt(): number {
    return this.options?.attempt ?? 1;
  }

  private get callerSignal(): AbortSignal | undefined {
    return this.options?.signal;
  }

  private get classify(): Classifier | undefined {
    return this.options?.classify ?? this.plan.classify;
  }

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      const race = this.race;
      // Without a deadline the caller's own signal says everything ours would: hand it over.
      if (race !== undefined && race.deadlineAt === Infinity && this.callerSignal !== undefined)
        return this.callerSignal;
      this.controller = new AbortController();
      if (this.state === TIMED_OUT_STATE || this.state === CANCELLED_STATE) this.controller.abort(race!.abortReason);
    }
    return this.controller.signal;
  }

  mark(): void {
    // The first mark wins: it is the moment the upstream first answered.
    if (this.markedAt !== this.markedAt && this.state !== SETTLED) this.markedAt = this.plan.clock.now();
  }

  start(fn: CallFn<T>): Promise<T> {
    const race = this.race;
    if (race === undefined) return this.startUnraced(fn);
    // Closures are made here, for the raced path only: an unraced call allocates none of them.
    return new Promise<T>((resolve, reject) => {
      race.resolveOuter = resolve;
      race.rejectOuter = reject;
      if (race.deadlineAt !== Infinity) {
        race.timer = this.plan.clock.setTimer(() => this.onDeadline(), race.deadlineAt - this.startedAt);
      }
      const signal = this.callerSignal;
      if (signal !== undefined) {
        race.abortListener = () => this.onCallerAbort();
        signal.addEventListener('abort', race.abortListener);
      }
      let produced: T | PromiseLike<T>;
      try {
        produced = fn(this);
      } catch (error) {
        this.onRejected(error);
        return;
      }
      if (isThenable(produced)) {
        Promise.resolve(produced).then(
          (value) => this.onFulfilled(value),
          (reason: unknown) => this.onRejected(reason),
        );
      } else this.onFulfilled(produced);
    });
  }

  /** No deadline and no caller signal: nothing to race, so no timer, no listener, no extra promise. */
  private startUnraced(fn: CallFn<T>): Promise<T> {
    let produced: T | PromiseLike<T>;
    try {
      produced = fn(this);
    } catch (error) {
      this.settle(false, error);
      return Promise.reject(error);
    }
    if (!isThenable(produced)) {
      this.settle(true, produced);
      return Promise.resolve(produced);
    }
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

  private onDeadline(): void {
    if (this.state !== RUNNING) return;
    const race = this.race!;
    race.timer = undefined;
    this.state = TIMED_OUT_STATE;
    const error = new TimeoutError({ timeoutMs: race.timeoutMs! });
    race.abortReason = error;
    this.plan.timeout?.recordTimeout();
    if (race.abortListener !== undefined) this.callerSignal!.removeEventListener('abort', race.abortListener);
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

  private onCallerAbort(): void {
    if (this.state !== RUNNING) return;
    this.state = CANCELLED_STATE;
    const race = this.race!;
    race.abortReason = this.callerSignal!.reason;
    if (race.timer !== undefined) this.plan.clock.clearTimer(race.timer);
    race.timer = undefined;
    race.rejectOuter!(race.abortReason);
    this.controller?.abort(race.abortReason);
  }

  private settle(fulfilled: boolean, subject: unknown): void {
    if (this.state === SETTLED) return;
    const plan = this.plan;
    const race = this.race;
    const classify = this.classify; // a getter over the options: read it once
    if (race !== undefined && race.timer !== undefined) {
      plan.clock.clearTimer(race.timer);
      race.timer = undefined;
    }
    if (
      plan.breaker === undefined &&
      plan.limiter === undefined &&
      classify === undefined &&
      (plan.settled === undefined || plan.settled.size === 0)
    ) {
      // Nothing learns from this call and nobody asked to classify it: no clock reading, no
      // classification, no Observation.
      if (this.state === RUNNING && race !== undefined && race.abortListener !== undefined) {
        this.callerSignal!.removeEventListener('abort', race.abortListener);
      }
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
          : classify === undefined
            ? classifyOutcome(fulfilled, subject)
            : runClassifier(
                classify,
                fulfilled ? { status: 'fulfilled', value: subject } : { status: 'rejected', reason: subject },
              );
    if (this.state === RUNNING && race !== undefined && race.abortListener !== undefined) {
      this.callerSignal!.removeEventListener('abort', race.abortListener);
    }
    const timedOut = this.state === TIMED_OUT_STATE;
    this.state = SETTLED;
    const bulkhead = plan.bulkhead;
    // Policies read an Observation during settle and keep nothing, so one object serves every
    // call; a settle nested inside another (a listener that runs a call) gets its own.
    const observation = scratchInUse ? newScratch() : scratch;
    const reused = observation === scratch;
    scratchInUse = true;
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
      if (reused) scratchInUse = false;
    }
  }
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
