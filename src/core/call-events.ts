import { EventChannel, type Listener, type Subscription } from './events';
import type { Observation } from './observation';

/** The policies that refuse calls. */
export type RefusingPolicy = 'breaker' | 'limiter' | 'bulkhead';

/**
 * Why a call was refused: the breaker's state (`open`; `half-open` with every probe slot taken;
 * `isolated`), the limiter's `shed` (its queue was past the rejection threshold), `queue-timeout`
 * (the call's whole budget went on waiting) or `abandoned` (a waiter whose heartbeat stopped: its
 * request went away, as a cancelled Workers request does; ADR-0043), or the bulkhead's `full`.
 */
export type RefusalReason = 'open' | 'half-open' | 'isolated' | 'shed' | 'queue-timeout' | 'abandoned' | 'full';

/** The errors the limiter's queue gave abandoned waiters (a `LimitExceededError` each), told apart from sheds. */
const abandonments = new WeakSet<object>();

/** @internal Marks the error an abandoned waiter leaves with, so that its refusal reads `abandoned`. */
export function markAbandoned<E extends object>(error: E): E {
  abandonments.add(error);
  return error;
}

/** @internal Whether `error` is one an abandoned waiter left with. */
export function isAbandonment(error: unknown): boolean {
  return typeof error === 'object' && error !== null && abandonments.has(error);
}

/** A call one of our own policies refused: it never ran, and the caller got `error`. */
export interface RefusalEvent {
  readonly policy: RefusingPolicy;
  readonly reason: RefusalReason;
  /**
   * When capacity may be back, in ms, where the policy can tell: an open breaker's time to
   * half-open, the limiter's drain-rate estimate on a shed. Undefined otherwise.
   */
  readonly retryAfterMs: number | undefined;
  /** What the caller receives: `BrokenCircuitError`, `LimitExceededError`, a queued `TimeoutError` or `BulkheadFullError`. */
  readonly error: Error;
  /** The call's attempt number: 1 for an original call, 2+ for retries. */
  readonly attempt: number;
  /** Time the call spent in the limiter's queue before it was refused, in ms (0 if it never queued). */
  readonly queuedMs: number;
}

/**
 * The per-call events of one pipeline or one policy: `settled` hears every call that ran (its
 * Observation, after the policies learned from it), `refused` every call a policy refused. Made
 * on the first subscription, so a policy nobody listens to carries one empty field.
 * @internal
 */
export class CallEvents {
  readonly settled = new EventChannel<Observation>();
  readonly refused = new EventChannel<RefusalEvent>();

  get listening(): boolean {
    return this.settled.size > 0 || this.refused.size > 0;
  }
}

/** What the call runner reads on a plan's ports: their events, made on first subscription. @internal */
export interface HasCallEvents {
  readonly events?: CallEvents | undefined;
}

/** @internal True when anyone listens to `events`. */
export function isListening(events: CallEvents | undefined): boolean {
  return events?.listening === true;
}

/**
 * @internal The subscription functions a policy or a pipeline exposes, over a `CallEvents` made on
 * first use (held by `owner.events`).
 */
export function subscribeSettled(
  owner: { events: CallEvents | undefined },
  listener: Listener<Observation>,
): Subscription {
  owner.events ??= new CallEvents();
  return owner.events.settled.subscribe(listener);
}

/** @internal */
export function subscribeRefused(
  owner: { events: CallEvents | undefined },
  listener: Listener<RefusalEvent>,
): Subscription {
  owner.events ??= new CallEvents();
  return owner.events.refused.subscribe(listener);
}
