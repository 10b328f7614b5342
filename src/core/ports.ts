import type { CallEvents, HasCallEvents } from './call-events';
import type { ResolvedClock } from './clock';
import type { Classifier } from './classify';
import type { Observation } from './observation';
import type { Verdict } from './verdict';

/**
 * One admission to the limiter. Settle it exactly once with what the call taught, then drop the
 * reference: a second settle is ignored only until the limiter hands the same object to another
 * call (the limiter's permits are pooled, ADR-0041). The pipeline settles permits for you;
 * `limiter.tryAcquire()` hands them out for callers who run their own call loop.
 */
export interface Permit {
  /**
   * @param observation What the call taught: at least `verdict` and `latencyMs`. Read during the
   *   settle only; the limiter keeps no reference to it, so one object may be reused.
   * @param now The limiter clock's reading at settlement, when you already took one to compute
   *   `latencyMs`: the limiter then reads no clock itself (a platform clock read costs 60-95 ns
   *   and, on Node 20, allocates a 16-byte number). Omit it and the limiter reads its clock.
   */
  settle(observation: Observation, now?: number): void;
  /**
   * Reports the call's latency before it ends: the first byte or token of a stream (what
   * `ctx.mark()` does through a pipeline). The limiter learns from it at once instead of at the
   * stream's end; settle later as usual, with the same `latencyMs`. The first mark counts; a mark
   * after settle is ignored until the permit is reused (see `Permit`). Optional, so a permit of your own need not implement it.
   */
  mark?(latencyMs: number, now?: number): void;
  /** Calls in flight at this permit's admission, itself included. */
  readonly inflight: number;
}

/**
 * The internal seams between the call runner and the policies. Admission is synchronous on the
 * fast path; only the limiter's queue is asynchronous.
 * @internal
 */
export interface BreakerPort extends HasCallEvents {
  /** A ticket (>= 0) for an admitted call, or -1 when the breaker refuses it. */
  admit(): number;
  rejection(): Error;
  /** The state right after a refusal says why (`open`, `half-open`, `isolated`); absent means `open`. */
  readonly state?: string;
  /** `now`: the call runner's clock reading at settlement, so the breaker need not read it again. */
  settle(ticket: number, observation: Observation, now?: number): void;
}

/** @internal */
export interface LimiterPort extends HasCallEvents {
  /** A permit when a slot is free and nobody is waiting; undefined otherwise. */
  tryAcquire(): Permit | undefined;
  /**
   * The slow path: wait in the queue, or be refused. Rejects with `LimitExceededError`, with a
   * queued `TimeoutError` at `deadlineAt`, or with the signal's reason when the caller aborts.
   */
  acquire(signal: AbortSignal | undefined, deadlineAt: number, timeoutMs: number | undefined): Promise<Permit>;
  /** A queued call's deadline passed after it was handed its slot, before it could start: counts a queue timeout. */
  queueTimedOut(): void;
  /** A queued call's caller aborted after it was handed its slot, before it could start: counts an abort. */
  queueAborted(): void;
}

/** @internal */
export interface BulkheadPort extends HasCallEvents {
  tryEnter(): boolean;
  leave(): void;
  rejection(): Error;
  readonly active: number;
}

/** @internal */
export interface TimeoutPort extends HasCallEvents {
  readonly timeoutMs: number;
  recordTimeout(): void;
}

/** What the call runner needs: the policies present, in canonical order, and a shared clock. @internal */
export interface CallPlan {
  readonly clock: ResolvedClock;
  readonly breaker: BreakerPort | undefined;
  readonly limiter: LimiterPort | undefined;
  readonly bulkhead: BulkheadPort | undefined;
  readonly timeout: TimeoutPort | undefined;
  readonly classify: Classifier | undefined;
  /**
   * A pipeline's own per-call events (its policies' are on their ports). Read at each call, so it
   * may be made after the plan (on the first subscription); undefined costs one check.
   */
  readonly events?: CallEvents | undefined;
  /**
   * The Observation this plan's settles fill in and hand to the policies, made at the plan's first
   * settle and reused: policies read it during settle and keep no reference. Per plan, not per
   * module (adr/0084). Written by the call runner only.
   */
  observation: MutableObservation | undefined;
  /** True while a settle fills or delivers `observation`; a settle nested inside it makes its own. */
  observationInUse: boolean;
}

/** The ports a plan runs through; absent ones are not in the call. */
export interface PlanPorts {
  readonly breaker?: BreakerPort | undefined;
  readonly limiter?: LimiterPort | undefined;
  readonly bulkhead?: BulkheadPort | undefined;
  readonly timeout?: TimeoutPort | undefined;
}

/**
 * A call plan: every field present, in one order, so every plan shares one shape (the call runner
 * reads them monomorphically) whichever policy or pipeline made it.
 */
export function callPlan(clock: ResolvedClock, ports: PlanPorts, classify: Classifier | undefined): CallPlan {
  return {
    clock,
    breaker: ports.breaker,
    limiter: ports.limiter,
    bulkhead: ports.bulkhead,
    timeout: ports.timeout,
    classify,
    events: undefined,
    observation: undefined,
    observationInUse: false,
  };
}

/** The call runner's reusable Observation: every field present, the optional ones maybe undefined. @internal */
export interface MutableObservation extends Observation {
  verdict: Verdict;
  latencyMs: number;
  durationMs: number;
  queuedMs: number;
  inflight: number;
  retryAfterMs: number | undefined;
  attempt: number;
}
