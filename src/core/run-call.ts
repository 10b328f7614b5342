import type { CallContext, CallFn, ExecuteOptions } from './call';
import { isAbandonment, isListening, type RefusalEvent, type RefusalReason, type RefusingPolicy } from './call-events';
import { classifySafely, type Classification, type Classifier } from './classify';
import type { TimerHandle } from './clock';
import { reportError } from './events';
import type { Observation } from './observation';
import type { BulkheadPort, CallPlan, MutableObservation, Permit } from './ports';
import { executeOptionsError, readAborted } from './caller-input';
import { discard } from './discard';
import { isLimitExceededError } from '../errors/limit-exceeded-error';
import { isTimeoutError, TimeoutError } from '../errors/timeout-error';

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
 * What runs when an attempt's outcome is known, in place of a `.then` on the promise `runCall`
 * returns: the retry policy's hook (adr/0025). `runCall`'s promise settles with what it returns
 * (a value, or a promise to adopt); a throw rejects it. Called exactly once per call, at the moment
 * the caller would have heard the outcome.
 * @internal
 */
export interface AttemptHook {
  afterAttempt(fulfilled: boolean, subject: unknown): unknown;
}

/**
 * Runs one call through the plan's policies in canonical order (breaker -> limiter -> bulkhead ->
 * timeout), and delivers exactly one Observation to every policy that admitted it, innermost
 * first (DESIGN.md §4). It never throws: bad input and faults come back as a rejected promise,
 * as fetch does, and every step after admission gives back what it took when it fails
 * (adr/0012). With a `hook`, the outcome goes through it first (the promise settles as the hook
 * says), one promise hop sooner than a `.then` on the result would.
 */
export function runCall<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  hook?: AttemptHook,
): Promise<T> {
  try {
    return startCall(plan, fn, options, hook);
  } catch (error) {
    // Only reading the caller's options or signal throws this far, before anything was taken.
    return outcome(hook, false, error);
  }
}

/** A promise settled with an outcome known at once, through the hook when there is one. */
function outcome<T>(hook: AttemptHook | undefined, fulfilled: boolean, subject: unknown): Promise<T> {
  if (hook === undefined) return fulfilled ? Promise.resolve(subject as T) : Promise.reject(subject);
  let next: unknown;
  try {
    next = hook.afterAttempt(fulfilled, subject);
  } catch (error) {
    return Promise.reject(error);
  }
  return Promise.resolve(next as T);
}

function startCall<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  hook: AttemptHook | undefined,
): Promise<T> {
  if (typeof fn !== 'function') {
    return outcome(hook, false, new TypeError(`resilix: execute(fn) needs a function; received ${typeof fn}`));
  }
  let signal: AbortSignal | undefined;
  let timeoutMs = plan.timeout?.timeoutMs;
  if (options !== undefined && options !== null) {
    const invalid = executeOptionsError(options);
    if (invalid !== undefined) return outcome(hook, false, invalid);
    const given = options.signal;
    if (given !== undefined && given !== null) {
      if (given.aborted) return outcome(hook, false, given.reason);
      signal = given;
    }
    const requested = options.timeoutMs;
    if (requested !== undefined) timeoutMs = requested === Infinity ? undefined : requested;
  }
  const breaker = plan.breaker;
  const limiter = plan.limiter;
  // Only the breaker and the limiter learn from a call, and a listener hears its latency. Without
  // them nothing needs it, so no clock is read (startedAt NaN: a deadline is then just timeoutMs
  // from a start of 0, and the call is not reported to a listener that came after it started).
  const startedAt = breaker !== undefined || limiter !== undefined || listened(plan) ? plan.clock.now() : Number.NaN;
  const deadlineAt = timeoutMs === undefined ? Infinity : (startedAt === startedAt ? startedAt : 0) + timeoutMs;

  let ticket = -1;
  if (breaker !== undefined) {
    ticket = breaker.admit();
    if (ticket < 0) {
      const error = breaker.rejection();
      if (listened(plan)) refused(plan, 'breaker', breakerReason(breaker.state), error, options, 0);
      return outcome(hook, false, error);
    }
  }
  // From here on the call holds a breaker ticket, and then a permit: nothing below may throw.
  if (limiter === undefined)
    return runAdmitted(plan, fn, options, hook, signal, ticket, undefined, startedAt, 0, deadlineAt, timeoutMs);
  const permit = limiter.tryAcquire();
  if (permit !== undefined)
    return runAdmitted(plan, fn, options, hook, signal, ticket, permit, startedAt, 0, deadlineAt, timeoutMs);
  return runQueued(plan, fn, options, hook, signal, ticket, startedAt, deadlineAt, timeoutMs);
}

function breakerReason(state: string | undefined): RefusalReason {
  return state === 'half-open' || state === 'isolated' ? state : 'open';
}

/**
 * True when anyone listens to this plan's per-call events: the pipeline's own, or any of its
 * policies'. Five field reads when nobody does (a policy's events are made on first subscription).
 */
function listened(plan: CallPlan): boolean {
  return (
    isListening(plan.events) ||
    isListening(plan.breaker?.events) ||
    isListening(plan.limiter?.events) ||
    isListening(plan.bulkhead?.events) ||
    isListening(plan.timeout?.events)
  );
}

/**
 * Tells the listeners that a policy refused a call: the pipeline's, and the refusing policy's.
 * Called only when `listened(plan)`; a listener's throw is reported and goes no further.
 */
function refused(
  plan: CallPlan,
  policy: RefusingPolicy,
  reason: RefusalReason,
  error: unknown,
  options: ExecuteOptions | undefined,
  queuedMs: number,
): void {
  const port = policy === 'breaker' ? plan.breaker : policy === 'limiter' ? plan.limiter : plan.bulkhead;
  const own = port?.events;
  const pipeline = plan.events;
  if (!isListening(own) && !isListening(pipeline)) return;
  const retryAfterMs = (error as { retryAfterMs?: unknown } | null)?.retryAfterMs;
  const event: RefusalEvent = {
    policy,
    reason,
    retryAfterMs: typeof retryAfterMs === 'number' ? retryAfterMs : undefined,
    error: error as Error,
    attempt: options?.attempt ?? 1,
    queuedMs,
  };
  if (own !== undefined && own.refused.size > 0) own.refused.emit(event);
  if (pipeline !== undefined && pipeline.refused.size > 0) pipeline.refused.emit(event);
}

/** Tells the listeners about a call that ran: the pipeline's, and those of every policy in it, innermost first. */
function settledEvent(plan: CallPlan, observation: Observation): void {
  const timeout = plan.timeout?.events;
  if (timeout !== undefined && timeout.settled.size > 0) timeout.settled.emit(observation);
  const bulkhead = plan.bulkhead?.events;
  if (bulkhead !== undefined && bulkhead.settled.size > 0) bulkhead.settled.emit(observation);
  const limiter = plan.limiter?.events;
  if (limiter !== undefined && limiter.settled.size > 0) limiter.settled.emit(observation);
  const breaker = plan.breaker?.events;
  if (breaker !== undefined && breaker.settled.size > 0) breaker.settled.emit(observation);
  const pipeline = plan.events;
  if (pipeline !== undefined && pipeline.settled.size > 0) pipeline.settled.emit(observation);
}

function runQueued<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  hook: AttemptHook | undefined,
  signal: AbortSignal | undefined,
  ticket: number,
  startedAt: number,
  deadlineAt: number,
  timeoutMs: number | undefined,
): Promise<T> {
  const queued = waitInQueue(plan, fn, options, signal, ticket, startedAt, deadlineAt, timeoutMs);
  if (hook === undefined) return queued;
  // The hop through `then` is paid by queued calls only; one run at once is hooked in runAdmitted.
  return queued.then(
    (value) => hook.afterAttempt(true, value) as T,
    (reason: unknown) => hook.afterAttempt(false, reason) as T,
  );
}

async function waitInQueue<T>(
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
    const reason = isLimitExceededError(error)
      ? isAbandonment(error)
        ? 'abandoned'
        : 'shed'
      : isTimeoutError(error) && error.queued
        ? 'queue-timeout'
        : undefined;
    // Our refusal stands even when the caller aborted after it, in the same tick: the caller gets the refusal.
    const cancelled = reason === undefined && signal !== undefined && readAborted(signal);
    plan.breaker?.settle(ticket, cancelled ? CANCELLED : REJECTED);
    if (reason !== undefined && listened(plan)) {
      refused(plan, 'limiter', reason, error, options, plan.clock.now() - startedAt);
    }
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
    // The caller left between the wake-up and this continuation: the call must not start. It left the queue, in effect.
    plan.limiter!.queueAborted();
    permit.settle(CANCELLED);
    plan.breaker?.settle(ticket, CANCELLED);
    throw signal!.reason;
  }
  const now = plan.clock.now();
  return runAdmitted(plan, fn, options, undefined, signal, ticket, permit, now, now - startedAt, deadlineAt, timeoutMs);
}

function runAdmitted<T>(
  plan: CallPlan,
  fn: CallFn<T>,
  options: ExecuteOptions | undefined,
  hook: AttemptHook | undefined,
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
    const error = bulkhead.rejection();
    if (listened(plan)) refused(plan, 'bulkhead', 'full', error, options, queuedMs);
    return outcome(hook, false, error);
  }
  if (runStartedAt >= deadlineAt) {
    // The whole budget went on queueing: the upstream never sees this call. Its permit came from the limiter's queue
    // (the fast path's deadline is ahead of its start), which has not counted it: `onRefuse` and the count agree.
    if (permit !== undefined) plan.limiter?.queueTimedOut();
    bulkhead?.leave();
    permit?.settle(REJECTED);
    plan.breaker?.settle(ticket, REJECTED);
    const error = new TimeoutError({ timeoutMs: timeoutMs!, queued: true });
    if (listened(plan)) refused(plan, 'limiter', 'queue-timeout', error, options, queuedMs);
    return outcome(hook, false, error);
  }
  const call = new InFlightCall<T>(
    plan,
    options,
    hook,
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
  /** The deadline or the caller's abort ended the call: its signal is aborted, even one first read after it settled. */
  aborted = false;
  resolveOuter: ((value: T | PromiseLike<T>) => void) | undefined = undefined;
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

/**
 * The pair of handlers a call hands to `then` on its fn's promise, pooled: a call would otherwise
 * allocate two closures and their context (about 170 bytes). A reaction goes back to the pool
 * when its promise settles, before the call's own settle runs; a promise that never settles keeps
 * its reaction, and the pool makes another. `then` on a native promise calls one handler, once.
 * Module-level: one pool serves every plan, and holds only blank pairs (adr/0084 lists why that is
 * not shared state). Issue 16 measured the closures at ~20 ns and 112 bytes a call.
 */
class Reaction {
  call: InFlightCall<unknown> | undefined = undefined;
  next: Reaction | undefined = undefined;
  readonly onFulfilled = (value: unknown): unknown => this.release().fulfilled(value);
  readonly onRejected = (reason: unknown): unknown => this.release().rejected(reason);

  private release(): InFlightCall<unknown> {
    const call = this.call!;
    this.call = undefined;
    this.next = freeReactions;
    freeReactions = this;
    return call;
  }
}

let freeReactions: Reaction | undefined;

function takeReaction(call: InFlightCall<unknown>): Reaction {
  let reaction = freeReactions;
  if (reaction === undefined) reaction = new Reaction();
  else freeReactions = reaction.next;
  reaction.next = undefined;
  reaction.call = call;
  return reaction;
}

/**
 * @internal A lone bulkhead's call with no options, no classifier and no listener: nothing learns
 * from it, nobody hears it and nothing races it, so it needs no clock, no Observation and no
 * settle state, only its context and the slot to give back (a third of an InFlightCall). The
 * bulkhead decides, in its `execute`; anything else goes through `runCall`.
 */
export function runPlain<T>(bulkhead: BulkheadPort, fn: CallFn<T>): Promise<T> {
  if (typeof fn !== 'function') {
    return Promise.reject(new TypeError(`resilix: execute(fn) needs a function; received ${typeof fn}`));
  }
  if (!bulkhead.tryEnter()) return Promise.reject(bulkhead.rejection());
  const call = new PlainCall(bulkhead);
  let produced: T | PromiseLike<T>;
  let thenable: boolean;
  try {
    produced = fn(call);
    thenable = isThenable(produced); // reads a `then` that may be a throwing getter
  } catch (error) {
    bulkhead.leave();
    return Promise.reject(error);
  }
  if (thenable) {
    let reaction = freePlainReactions;
    if (reaction === undefined) reaction = new PlainReaction();
    else freePlainReactions = reaction.next;
    reaction.next = undefined;
    reaction.call = call;
    return Promise.resolve(produced).then(reaction.onFulfilled, reaction.onRejected) as Promise<T>;
  }
  bulkhead.leave();
  return Promise.resolve(produced);
}

/** Reaction's twin for PlainCall: a pool of its own keeps both handler sites monomorphic. */
class PlainReaction {
  call: PlainCall | undefined = undefined;
  next: PlainReaction | undefined = undefined;
  readonly onFulfilled = (value: unknown): unknown => this.release().fulfilled(value);
  readonly onRejected = (reason: unknown): unknown => this.release().rejected(reason);

  private release(): PlainCall {
    const call = this.call!;
    this.call = undefined;
    this.next = freePlainReactions;
    freePlainReactions = this;
    return call;
  }
}

let freePlainReactions: PlainReaction | undefined;

class PlainCall implements CallContext {
  private controller: AbortController | undefined = undefined;

  constructor(private readonly bulkhead: BulkheadPort) {}

  /** No options, so no attempt number: an original call. */
  get attempt(): number {
    return 1;
  }

  /** Nothing aborts it: no deadline, no caller signal. Made on first read, as InFlightCall's. */
  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    return this.controller.signal;
  }

  mark(): void {
    // Nothing learns from this call's latency.
  }

  /** @internal */
  fulfilled(value: unknown): unknown {
    this.bulkhead.leave();
    return value;
  }

  /** @internal */
  rejected(reason: unknown): unknown {
    this.bulkhead.leave();
    throw reason;
  }
}

/**
 * One admitted call: its context, its deadline race, and its single settlement. Nothing in it
 * throws: every call into code that is not ours (the clock's timer functions, the caller's signal,
 * fn, the classifier) is guarded, and a failure before fn ran gives back every slot (adr/0012).
 */
class InFlightCall<T> implements CallContext {
  private state: CallState = RUNNING;
  /**
   * When the call marked, or undefined. Not a number field: V8 gives every number field of a new
   * object a 16-byte box of its own, where an untagged slot stores the reading as it comes.
   */
  private markedAt: number | undefined = undefined;
  private controller: AbortController | undefined = undefined;
  private readonly race: Race<T> | undefined;
  /** Set in the constructor, after `undefined`, for the reason given at `markedAt`; NaN when no clock was read. */
  private readonly startedAt: number | undefined = undefined;
  /** The same: 0, or the time spent queued (a fractional number once any call queued). */
  private readonly queuedMs: number | undefined = undefined;

  constructor(
    private readonly plan: CallPlan,
    /** The caller's options, kept whole: one field instead of attempt and classifier. */
    private readonly options: ExecuteOptions | undefined,
    private readonly hook: AttemptHook | undefined,
    signal: AbortSignal | undefined,
    private readonly ticket: number,
    private readonly permit: Permit | undefined,
    startedAt: number,
    queuedMs: number,
    deadlineAt: number,
    timeoutMs: number | undefined,
  ) {
    this.startedAt = startedAt;
    this.queuedMs = queuedMs;
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
      // Not `state`: the settle that follows a deadline or an abort overwrites it.
      if (race?.aborted) this.controller.abort(race.abortReason);
    }
    return this.controller.signal;
  }

  /**
   * @internal The signal that can abort this call, or undefined when nothing can: no deadline and
   * no caller signal. `ctx.signal` would make an AbortController that never aborts (about 2.7 us
   * on Node 20); resilientFetch asks this instead and hands fetch no signal at all.
   */
  get abortSignal(): AbortSignal | undefined {
    if (this.controller === undefined) {
      const race = this.race;
      if (race === undefined) return undefined;
      if (race.deadlineAt === Infinity) return race.callerSignal;
    }
    return this.signal;
  }

  mark(): void {
    // The first mark wins: it is the moment the upstream first answered.
    if (this.markedAt === undefined && this.state !== SETTLED) {
      const now = this.plan.clock.now();
      this.markedAt = now;
      // The limiter learns the latency now: a stream's permit is held long after its first token,
      // and a sample that waited for the stream's end would reach the limiter 45 s late. (A call
      // with a permit read the clock at its start.)
      const permit = this.permit;
      if (permit?.mark !== undefined) permit.mark(now - (this.startedAt as number), now);
    }
  }

  start(fn: CallFn<T>): Promise<T> {
    const race = this.race;
    if (race === undefined) return this.startUnraced(fn);
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
          const reaction = takeReaction(this as InFlightCall<unknown>);
          Promise.resolve(produced).then(reaction.onFulfilled, reaction.onRejected);
          return;
        }
      } catch (error) {
        this.onRejected(race, error);
        return;
      }
      this.onFulfilled(race, produced);
    });
  }

  /** No deadline and no caller signal: nothing to race, so no timer, no listener, no extra promise. */
  private startUnraced(fn: CallFn<T>): Promise<T> {
    let produced: T | PromiseLike<T>;
    try {
      produced = fn(this);
      if (isThenable(produced)) {
        const reaction = takeReaction(this as InFlightCall<unknown>);
        return Promise.resolve(produced).then(reaction.onFulfilled, reaction.onRejected) as Promise<T>;
      }
    } catch (error) {
      this.settle(false, error);
      return outcome(this.hook, false, error);
    }
    this.settle(true, produced);
    return outcome(this.hook, true, produced);
  }

  /**
   * @internal fn's promise fulfilled (through its pooled Reaction). Unraced, what this returns
   * settles the call's promise; raced, the outer promise is settled here.
   */
  fulfilled(value: T): unknown {
    const race = this.race;
    if (race !== undefined) {
      this.onFulfilled(race, value);
      return undefined;
    }
    this.settle(true, value);
    const hook = this.hook;
    return hook === undefined ? value : hook.afterAttempt(true, value);
  }

  /** @internal fn's promise rejected (through its pooled Reaction). */
  rejected(reason: unknown): unknown {
    const race = this.race;
    if (race !== undefined) {
      this.onRejected(race, reason);
      return undefined;
    }
    this.settle(false, reason);
    const hook = this.hook;
    if (hook === undefined) throw reason;
    return hook.afterAttempt(false, reason);
  }

  /**
   * Arms the deadline timer for what remains of the budget after the steps already run out, at
   * most MAX_TIMER_MS at a time (adr/0013). No clock read: the steps add up to the budget.
   */
  private armDeadline(race: Race<T>, onTimer: () => void): void {
    const remainingMs = race.deadlineAt - this.origin() - race.longSteps * MAX_TIMER_MS;
    race.timer = this.plan.clock.setTimer(onTimer, remainingMs > MAX_TIMER_MS ? MAX_TIMER_MS : remainingMs);
  }

  /** The start the deadline was counted from: startedAt, or 0 when no clock was read. */
  private origin(): number {
    const startedAt = this.startedAt!;
    return startedAt === startedAt ? startedAt : 0;
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
    this.finishOuter(race, false, error);
  }

  /** The caller hears the outcome: through the hook when there is one (it may start a retry). */
  private finishOuter(race: Race<T>, fulfilled: boolean, subject: unknown): void {
    const hook = this.hook;
    if (hook === undefined) {
      if (fulfilled) race.resolveOuter!(subject as T);
      else race.rejectOuter!(subject);
      return;
    }
    let next: unknown;
    try {
      next = hook.afterAttempt(fulfilled, subject);
    } catch (error) {
      race.rejectOuter!(error);
      return;
    }
    race.resolveOuter!(next as T);
  }

  private onFulfilled(race: Race<T>, value: T): void {
    const wasRunning = this.state === RUNNING;
    this.settle(true, value);
    if (wasRunning) this.finishOuter(race, true, value);
    else discard(value); // its caller left or timed out: nobody will read it
  }

  private onRejected(race: Race<T>, reason: unknown): void {
    const wasRunning = this.state === RUNNING;
    this.settle(false, reason);
    if (wasRunning) this.finishOuter(race, false, reason);
  }

  /** The deadline timer fired: the deadline itself, or one step of a longer one. */
  private onTimer(): void {
    const race = this.race!;
    race.timer = undefined;
    if (this.state !== RUNNING) return;
    if (race.deadlineAt - this.origin() - race.longSteps * MAX_TIMER_MS > MAX_TIMER_MS) {
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
    race.aborted = true;
    this.plan.timeout?.recordTimeout();
    if (race.abortListener !== undefined) this.removeAbortListener(race);
    // The breaker holds no slot, so it learns now: a call that ignores its signal and never
    // settles must still count against a black-holed upstream. The limiter and bulkhead hold
    // their slots, and learn, when the work really settles.
    const breaker = this.plan.breaker;
    if (breaker !== undefined) {
      const startedAt = this.startedAt!;
      const elapsedMs = race.deadlineAt - startedAt;
      breaker.settle(this.ticket, {
        verdict: 'timeout',
        latencyMs: this.markedAt !== undefined ? this.markedAt - startedAt : elapsedMs,
        durationMs: elapsedMs,
        queuedMs: this.queuedMs!,
        inflight: this.permit?.inflight ?? this.plan.bulkhead?.active ?? 1,
        attempt: this.attempt,
      });
    }
    // fn's signal aborts first, then the caller hears (through the hook, which may start a retry
    // at once); the slots stay held until the work really settles.
    this.controller?.abort(error);
    this.finishOuter(race, false, error);
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
    race.aborted = true;
    if (race.timer !== undefined) this.clearDeadline(race);
    this.controller?.abort(reason);
    this.finishOuter(race, false, reason);
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
    const startedAt = this.startedAt!;
    if (plan.breaker === undefined && plan.limiter === undefined && classify === undefined) {
      // Nothing learns from this call and nobody asked to classify it: no clock reading, no
      // classification, no Observation, unless a listener hears it (and heard its start).
      if (startedAt !== startedAt || !listened(plan)) {
        this.state = SETTLED;
        plan.bulkhead?.leave();
        return;
      }
    }
    const now = plan.clock.now();
    const classification =
      this.state === TIMED_OUT_STATE
        ? TIMED_OUT
        : this.state === CANCELLED_STATE
          ? CANCELLED_CLASS
          : classifySafely(classify, fulfilled, subject);
    const timedOut = this.state === TIMED_OUT_STATE;
    this.state = SETTLED;
    const bulkhead = plan.bulkhead;
    // Policies and listeners read an Observation during settle and keep nothing, so one object per
    // plan serves every call of the plan (adr/0084); a settle nested inside another (a listener
    // that runs a call through the same plan) gets its own.
    const reused = !plan.observationInUse;
    let observation = plan.observation;
    if (observation === undefined || !reused) {
      observation = newObservation();
      if (reused) plan.observation = observation;
    }
    plan.observationInUse = true;
    try {
      const markedAt = this.markedAt;
      observation.verdict = classification.verdict;
      observation.latencyMs = (markedAt !== undefined ? markedAt : now) - startedAt;
      observation.durationMs = now - startedAt;
      observation.queuedMs = this.queuedMs!;
      observation.inflight = this.permit?.inflight ?? bulkhead?.active ?? 1;
      observation.retryAfterMs = classification.retryAfterMs;
      observation.attempt = this.attempt;
      bulkhead?.leave();
      this.permit?.settle(observation, now);
      if (!timedOut) plan.breaker?.settle(this.ticket, observation, now);
      if (startedAt === startedAt && listened(plan)) settledEvent(plan, observation);
    } finally {
      if (reused) plan.observationInUse = false;
    }
  }
}

/**
 * @internal The signal that can abort a call, or undefined when nothing can (no deadline and no
 * caller signal): `ctx.signal` then makes an AbortController that never aborts. A context resilix
 * did not make (a custom executor's) answers with its own `signal`.
 */
export function abortSignalOf(ctx: CallContext): AbortSignal | undefined {
  if (ctx instanceof InFlightCall) return ctx.abortSignal;
  return ctx instanceof PlainCall ? undefined : ctx.signal;
}

function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
