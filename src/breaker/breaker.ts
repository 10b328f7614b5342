import type { CallFn, ExecuteOptions } from '../core/call';
import type { Classifier } from '../core/classify';
import { subscribeRefused, subscribeSettled, type CallEvents, type RefusalEvent } from '../core/call-events';
import { resolveClock, type ResolvedClock } from '../core/clock';
import { EventChannel, subscription, type Listener, type Subscription } from '../core/events';
import type { Observation } from '../core/observation';
import { functionOption } from '../core/options';
import type { Policy } from '../core/policy';
import type { BreakerPort, CallPlan } from '../core/ports';
import { callPlan } from '../core/ports';
import { runCall } from '../core/run-call';
import { BrokenCircuitError } from '../errors/broken-circuit-error';
import {
  breakerOptionsObject,
  resolveBreakerConfig,
  wallClockOption,
  type BreakerConfig,
  type BreakerOptions,
} from './options';
import { confidentlyReaches } from './low-traffic';
import { parsePersistedState, type PersistedBreakerState } from './persistence';
import { RollingWindow } from './rolling-window';
import {
  EPOCH_MASK,
  FAILURE,
  IGNORED,
  epochOf,
  isProbeTicket,
  outcomeOf,
  ticketOf,
  type BreakerStateChange,
  type CircuitState,
  type Outcome,
  type StateChangeReason,
} from './state';

export interface BreakerSnapshot {
  readonly kind: 'breaker';
  readonly state: CircuitState;
  /** failures / samples in the window (0 when it is empty). */
  readonly failureRate: number;
  /** slow calls / samples in the window (0 when it is empty). */
  readonly slowCallRate: number;
  /** Calls counted in the window (failures and successes; ignored verdicts are not counted). */
  readonly samples: number;
  readonly failures: number;
  readonly slowCalls: number;
  /** Samples a rate needs right now: `minSamples`, or the low-traffic floor once the window is age-saturated. */
  readonly requiredSamples: number;
  readonly consecutiveFailures: number;
  /** Times the breaker has opened (not counting isolation). */
  readonly opens: number;
  /** Calls refused since construction. */
  readonly rejected: number;
  /** `open` only: ms until the next call is let through as a probe; undefined in other states. */
  readonly halfOpenInMs: number | undefined;
  /** `half-open` only: probes admitted and not yet settled. */
  readonly probesInFlight: number;
  /** Why the breaker last changed state; undefined before its first change. */
  readonly lastReason: StateChangeReason | undefined;
}

/**
 * A failure-rate and slow-call circuit breaker that learns only from Observations (DESIGN.md §3).
 *
 * Closed, it counts calls in a time-bucketed rolling window and opens when the failure rate or the
 * slow-call rate reaches its threshold (given enough samples: `minSamples`, or the low-traffic
 * floor once the window has collected for its full length), or on a run of consecutive failures.
 * Open, it refuses calls with a `BrokenCircuitError` until `openMs` has passed; the next call makes
 * it half-open and goes through as a probe, with at most `halfOpenProbes` probes in all. Every
 * probe succeeding closes it; any probe failing (or slow) re-opens it.
 *
 * No timers (ADR-001): state moves only when a call is admitted or settles, read from the clock.
 */
export class CircuitBreaker implements Policy<BreakerSnapshot>, BreakerPort {
  /** The validated, fully-defaulted options (one shared object for a breaker with the defaults). */
  readonly config: BreakerConfig;
  /** @internal */
  readonly clock: ResolvedClock;
  /** @internal Per-call events, made on the first `onSettle` or `onRefuse`. */
  events: CallEvents | undefined = undefined;

  /** The plan of `execute` (this breaker alone), made on its first call: in a pipeline it is never needed. */
  private ownPlan: CallPlan | undefined = undefined;
  private readonly classifier: Classifier | undefined;
  private readonly wallClock: () => number;
  private readonly window: RollingWindow;
  /** The state-change channels, made on the first subscription to any of them. */
  private stateEvents: StateEvents | undefined = undefined;

  private current: CircuitState = 'closed';
  /** Bumped on every state change (and on reset): tickets from an earlier epoch are stale. */
  private epoch = 0;
  /** When the window began collecting (construction, close, reset): the low-traffic rule reads it. */
  private windowOpenedAt: number;
  private consecutive = 0;
  private halfOpenAt = 0;
  private backoffLevel = 0;
  private openCount = 0;
  private rejectedCount = 0;
  private probesAdmitted = 0;
  private probeSuccesses = 0;
  private lastProbeAt = 0;
  private isolationHolds = 0;
  /** A restored isolation: held until reset(), since its handles died with the old process. */
  private isolationPinned = false;
  private isolationGeneration = 0;
  private lastReason: StateChangeReason | undefined = undefined;
  private refusalRetryAfterMs: number | undefined = undefined;

  constructor(options?: BreakerOptions) {
    const o = breakerOptionsObject(options);
    this.config = resolveBreakerConfig(o);
    this.clock = resolveClock(o.clock, 'breaker');
    this.wallClock = wallClockOption(o.wallClock);
    this.classifier = functionOption<Classifier>('breaker', 'classify', o.classify);
    const now = this.clock.now();
    this.window = new RollingWindow(this.config.windowMs, this.config.buckets, now);
    this.windowOpenedAt = now;
    if (o.restore !== undefined) this.restoreFrom(parsePersistedState(o.restore), now);
  }

  /** A breaker that continues from a state saved by `toJSON()` (ADR-0023). */
  static restore(saved: PersistedBreakerState, options?: Omit<BreakerOptions, 'restore'>): CircuitBreaker {
    return new CircuitBreaker({ ...breakerOptionsObject(options), restore: saved });
  }

  get kind(): 'breaker' {
    return 'breaker';
  }

  /** @internal The seam the call runner drives: the breaker itself. */
  get port(): BreakerPort {
    return this;
  }

  /** The state as of the last admission or settlement (open -> half-open happens on the next call). */
  get state(): CircuitState {
    return this.current;
  }

  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    this.ownPlan ??= callPlan(this.clock, { breaker: this }, this.classifier);
    return runCall(this.ownPlan, fn, options);
  }

  // ---- events -------------------------------------------------------------------------------

  /**
   * Hears every call this breaker admitted that ran, when it settles, in a pipeline or alone: its
   * Observation, after the policies learned from it. The Observation is one object resilix reuses
   * for every call, valid only during the listener: copy what you keep. Costs one check per call
   * while nobody listens.
   */
  onSettle(listener: Listener<Observation>): Subscription {
    return subscribeSettled(this, listener);
  }

  /** Hears every call this breaker refuses, in a pipeline or alone (why, `retryAfterMs`, the error the caller gets). */
  onRefuse(listener: Listener<RefusalEvent>): Subscription {
    return subscribeRefused(this, listener);
  }

  /** Every state change, with its reason. */
  onStateChange(listener: Listener<BreakerStateChange>): Subscription {
    return this.channels().any.subscribe(listener);
  }

  /** Changes into `open` (tripped, or a probe failed). Isolation is reported by onStateChange. */
  onOpen(listener: Listener<BreakerStateChange>): Subscription {
    return this.channels().opened.subscribe(listener);
  }

  onHalfOpen(listener: Listener<BreakerStateChange>): Subscription {
    return this.channels().halfOpened.subscribe(listener);
  }

  /** Changes into `closed` (probes succeeded, or a manual reset). */
  onClose(listener: Listener<BreakerStateChange>): Subscription {
    return this.channels().closed.subscribe(listener);
  }

  private channels(): StateEvents {
    this.stateEvents ??= new StateEvents();
    return this.stateEvents;
  }

  // ---- the port the call runner drives ------------------------------------------------------

  /** @internal A ticket (>= 0) for an admitted call, or -1 when refused. */
  admit(): number {
    if (this.current === 'closed') return ticketOf(this.epoch, false);
    if (this.current === 'isolated') return this.refuse(undefined);
    return this.admitAt(this.clock.now());
  }

  /** @internal */
  rejection(): Error {
    const retryAfterMs = this.refusalRetryAfterMs;
    const { current, config } = this;
    const detail =
      current === 'half-open'
        ? `half-open and all ${config.halfOpenProbes} probe calls are taken`
        : current === 'isolated'
          ? 'isolated (held open by isolate() until reset())'
          : `open${this.lastReason === undefined ? '' : ` (${this.lastReason})`}` +
            (retryAfterMs === undefined ? '' : `; half-open in ${retryAfterMs} ms`);
    return new BrokenCircuitError(`resilix: the circuit breaker is ${detail}; the call was not made`, { retryAfterMs });
  }

  /** @internal */
  settle(ticket: number, observation: Observation, at?: number): void {
    if (ticket < 0 || epochOf(ticket) !== this.epoch) return; // from an earlier state: stale
    const outcome = outcomeOf(observation.verdict);
    if (isProbeTicket(ticket)) {
      this.settleProbe(outcome, observation.latencyMs, at);
      return;
    }
    if (outcome === IGNORED) return;
    // Same epoch and not a probe: the breaker is still in the closed state that admitted the call.
    const now = at === undefined ? this.clock.now() : at;
    const failure = outcome === FAILURE;
    this.window.record(now, failure, observation.latencyMs > this.config.slowCallDurationMs);
    this.consecutive = failure ? this.consecutive + 1 : 0;
    const reason = this.tripReason(now);
    if (reason !== undefined) this.open(reason, now);
  }

  // ---- manual control and persistence -------------------------------------------------------

  /**
   * Holds the breaker open (state `isolated`) until `reset()`, or until every handle returned by
   * `isolate()` has been disposed; then it closes with a fresh window.
   */
  isolate(): Subscription {
    const generation = this.isolationGeneration;
    this.isolationHolds++;
    if (this.current !== 'isolated') this.moveTo('isolated', 'manual', this.clock.now());
    let held = true;
    return subscription(() => {
      if (!held) return;
      held = false;
      if (generation !== this.isolationGeneration) return; // a reset() already released it
      this.isolationHolds--;
      if (this.isolationHolds === 0 && !this.isolationPinned && this.current === 'isolated') {
        this.close('manual', this.clock.now());
      }
    });
  }

  /**
   * Back to a fresh closed breaker: releases every isolation, forgets the window, the failure run
   * and the backoff, and ignores calls admitted before it.
   */
  reset(): void {
    const now = this.clock.now();
    this.isolationGeneration++;
    this.isolationHolds = 0;
    this.isolationPinned = false;
    if (this.current !== 'closed') {
      this.close('manual', now);
      return;
    }
    this.forget(now);
    this.epoch = (this.epoch + 1) & EPOCH_MASK;
  }

  /** The state as plain JSON, to restore with `breaker({ restore })` in another process (ADR-0023). */
  toJSON(): PersistedBreakerState {
    const now = this.clock.now();
    const buckets: Array<readonly [number, number, number, number]> = [];
    this.window.forEachBucket(now, (ageMs, calls, failures, slowCalls) => {
      buckets.push([ageMs, calls, failures, slowCalls]);
    });
    return {
      version: 1,
      state: this.current,
      savedAt: this.wallClock(),
      openForMs: this.current === 'open' ? Math.max(0, this.halfOpenAt - now) : 0,
      backoffLevel: this.backoffLevel,
      opens: this.openCount,
      consecutiveFailures: this.consecutive,
      windowAgeMs: Math.min(this.config.windowMs, now - this.windowOpenedAt),
      buckets,
    };
  }

  snapshot(): BreakerSnapshot {
    const now = this.clock.now();
    const w = this.window;
    w.advance(now);
    const samples = w.calls;
    return {
      kind: 'breaker',
      state: this.current,
      failureRate: samples === 0 ? 0 : w.failures / samples,
      slowCallRate: samples === 0 ? 0 : w.slowCalls / samples,
      samples,
      failures: w.failures,
      slowCalls: w.slowCalls,
      requiredSamples: this.requiredSamples(now),
      consecutiveFailures: this.consecutive,
      opens: this.openCount,
      rejected: this.rejectedCount,
      halfOpenInMs: this.current === 'open' ? Math.max(0, this.halfOpenAt - now) : undefined,
      probesInFlight: this.current === 'half-open' ? this.probesAdmitted - this.probeSuccesses : 0,
      lastReason: this.lastReason,
    };
  }

  // ---- the state machine --------------------------------------------------------------------

  /** Admission in open or half-open, at one clock reading. Listeners may move the state, so re-read it. */
  private admitAt(now: number): number {
    const state = this.current;
    if (state === 'closed') return ticketOf(this.epoch, false);
    if (state === 'isolated') return this.refuse(undefined);
    if (state === 'open') {
      if (now < this.halfOpenAt) return this.refuse(Math.ceil(this.halfOpenAt - now));
      this.probesAdmitted = 0;
      this.probeSuccesses = 0;
      this.moveTo('half-open', 'open-elapsed', now);
      return this.admitAt(now);
    }
    if (this.probesAdmitted < this.config.halfOpenProbes) {
      this.probesAdmitted++;
      this.lastProbeAt = now;
      return ticketOf(this.epoch, true);
    }
    // Every probe slot is taken. A probe unsettled for longer than slowCallDurationMs can only
    // re-open the breaker when it settles (as slow or failed): re-open now, so a probe hung on a
    // black-holed connection cannot hold the breaker half-open for ever (ADR-0022).
    if (now - this.lastProbeAt > this.config.slowCallDurationMs) {
      this.open('probe-slow', now);
      return this.admitAt(now);
    }
    return this.refuse(undefined);
  }

  private refuse(retryAfterMs: number | undefined): number {
    this.rejectedCount++;
    this.refusalRetryAfterMs = retryAfterMs;
    return -1;
  }

  private settleProbe(outcome: Outcome, latencyMs: number, at: number | undefined): void {
    if (outcome === IGNORED) {
      // Overload, rejected or cancelled: the probe says nothing about recovery; free its slot.
      this.probesAdmitted--;
      return;
    }
    const now = at === undefined ? this.clock.now() : at;
    if (outcome === FAILURE) this.open('probe-failed', now);
    else if (latencyMs > this.config.slowCallDurationMs) this.open('probe-slow', now);
    else if (++this.probeSuccesses >= this.config.halfOpenProbes) this.close('probes-succeeded', now);
  }

  /** The first trip condition that holds, checked after each counted call in closed. */
  private tripReason(now: number): StateChangeReason | undefined {
    const w = this.window;
    const calls = w.calls;
    const c = this.config;
    if (calls >= c.minSamples) {
      if (w.failures / calls >= c.failureRateThreshold) return 'failure-rate';
      if (w.slowCalls / calls >= c.slowCallRateThreshold) return 'slow-call-rate';
    } else if (calls >= this.requiredSamples(now)) {
      // The low-traffic floor: fewer calls than minSamples, so the rate must be convincingly over.
      if (confidentlyReaches(w.failures, calls, c.failureRateThreshold)) return 'failure-rate';
      if (confidentlyReaches(w.slowCalls, calls, c.slowCallRateThreshold)) return 'slow-call-rate';
    }
    if (this.consecutive >= c.consecutiveFailures) return 'consecutive-failures';
    return undefined;
  }

  /**
   * The age-saturation floor (ADR-0021): a window that has been collecting for its full length
   * holds all the traffic there is, so a rate may be read from as few as `lowTrafficMinSamples`
   * (then it must pass the confidence test in low-traffic.ts).
   */
  private requiredSamples(now: number): number {
    const c = this.config;
    return now - this.windowOpenedAt >= c.windowMs ? c.lowTrafficMinSamples : c.minSamples;
  }

  private open(reason: StateChangeReason, now: number): void {
    if (this.current === 'half-open') this.raiseBackoff();
    this.halfOpenAt = now + this.openDurationMs();
    this.openCount++;
    this.moveTo('open', reason, now);
  }

  private close(reason: StateChangeReason, now: number): void {
    this.forget(now);
    this.moveTo('closed', reason, now);
  }

  /** A fresh window, run and backoff: what closing and reset() share. */
  private forget(now: number): void {
    this.window.clear(now);
    this.windowOpenedAt = now;
    this.consecutive = 0;
    this.backoffLevel = 0;
    this.probesAdmitted = 0;
    this.probeSuccesses = 0;
  }

  private openDurationMs(): number {
    const { openMs, backoffMultiplier, maxOpenMs } = this.config;
    if (this.backoffLevel === 0 || openMs === 0) return openMs;
    const backedOff = openMs * backoffMultiplier ** this.backoffLevel;
    return backedOff < maxOpenMs ? backedOff : maxOpenMs;
  }

  /** One level more, while it still lengthens the open period (so the level stays small). */
  private raiseBackoff(): void {
    if (this.config.backoffMultiplier > 1 && this.openDurationMs() < this.config.maxOpenMs) this.backoffLevel++;
  }

  private moveTo(to: CircuitState, reason: StateChangeReason, now: number): void {
    const from = this.current;
    this.current = to;
    this.epoch = (this.epoch + 1) & EPOCH_MASK;
    this.lastReason = reason;
    const events = this.stateEvents;
    if (events === undefined) return;
    const specific = events.channelFor(to);
    // No listener, no event object: a breaker nobody watches allocates nothing here.
    if (events.any.size === 0 && (specific === undefined || specific.size === 0)) return;
    events.deliver({ from, to, reason, at: now });
  }

  private restoreFrom(saved: PersistedBreakerState, now: number): void {
    // Wall-clock time between the save and now; negative (clock skew between machines) or
    // unreadable counts as none, which errs towards staying open and remembering.
    const elapsed = this.wallClock() - saved.savedAt;
    const gapMs = elapsed > 0 ? elapsed : 0;
    const c = this.config;
    this.windowOpenedAt = now - Math.min(c.windowMs, saved.windowAgeMs + gapMs);
    for (const [ageMs, calls, failures, slowCalls] of saved.buckets) {
      this.window.add(now, ageMs + gapMs, calls, failures, slowCalls);
    }
    this.consecutive = saved.consecutiveFailures;
    this.openCount = saved.opens;
    this.backoffLevel = saved.backoffLevel;
    if (saved.state === 'open' || saved.state === 'half-open') {
      // Probes in flight died with the old process: a saved half-open resumes as open-and-due.
      const remaining = saved.state === 'open' ? Math.max(0, saved.openForMs - gapMs) : 0;
      this.current = 'open';
      this.halfOpenAt = now + Math.min(remaining, c.maxOpenMs);
    } else if (saved.state === 'isolated') {
      this.current = 'isolated';
      this.isolationPinned = true;
    }
  }
}

/** A breaker's state-change channels, made together on the first subscription to any. */
class StateEvents {
  readonly any = new EventChannel<BreakerStateChange>();
  readonly opened = new EventChannel<BreakerStateChange>();
  readonly halfOpened = new EventChannel<BreakerStateChange>();
  readonly closed = new EventChannel<BreakerStateChange>();
  /** Changes a listener made while the others were still hearing one (a reset() from onOpen). */
  private pending: BreakerStateChange[] | undefined = undefined;
  private delivering = false;

  channelFor(to: CircuitState): EventChannel<BreakerStateChange> | undefined {
    return to === 'open'
      ? this.opened
      : to === 'half-open'
        ? this.halfOpened
        : to === 'closed'
          ? this.closed
          : undefined;
  }

  /** Every listener hears the changes in the order they happened, the later ones after the earlier one's delivery. */
  deliver(event: BreakerStateChange): void {
    if (this.delivering) {
      this.pending ??= [];
      this.pending.push(event);
      return;
    }
    this.delivering = true;
    try {
      for (let next: BreakerStateChange | undefined = event; next !== undefined; next = this.pending?.shift()) {
        this.any.emit(next);
        this.channelFor(next.to)?.emit(next);
      }
    } finally {
      this.delivering = false;
    }
  }
}

/** A circuit breaker with the defaults in ADR-0024 and docs/breaker.md; every option is optional. */
export function breaker(options?: BreakerOptions): CircuitBreaker {
  return new CircuitBreaker(options);
}
