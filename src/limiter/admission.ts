import { markAbandoned } from '../core/call-events';
import type { ResolvedClock } from '../core/clock';
import type { Observation } from '../core/observation';
import type { LimiterPort, Permit } from '../core/ports';
import { LimitExceededError } from '../errors/limit-exceeded-error';
import { TimeoutError } from '../errors/timeout-error';
import type { Listener, Subscription } from '../core/events';
import type { LimitChange, LimitController } from './controller';
import { PooledPermit } from './permit';
import { mustShed, type QueueingConfig } from './queue-zones';
import { DRAIN_WINDOW_MS, paceAfterQuiet, retryHintMs, smoothDrainRate } from './retry-hint';
import { arm, disarm, isGone, mayBeGoneAt, Waiter } from './waiter';
import { WaitQueue, type QueueOrder } from './wait-queue';

export type { QueueingConfig } from './queue-zones';

export interface AdmissionConfig {
  readonly clock: ResolvedClock;
  readonly controller: LimitController;
  /** `undefined` turns queueing off: a call that cannot run at once is rejected. */
  readonly queueing: QueueingConfig | undefined;
  readonly queueOrder: QueueOrder;
  /** A uniform number in [0, 1): the coin for gradual rejection. Injectable for determinism. */
  readonly random: () => number;
}

/** Admission's own counters, merged into the limiter's snapshot. */
export interface AdmissionCounters {
  /** Permits handed out since construction (fast path and queue). */
  readonly admitted: number;
  /** Calls refused with `LimitExceededError` since construction. */
  readonly shed: number;
  /** Calls whose deadline passed while they waited (the upstream never saw them). */
  readonly timedOutInQueue: number;
  /** Calls whose caller aborted while they waited, or after they were handed a slot and before they started. */
  readonly abortedInQueue: number;
  /** Waiters dropped, or made to give a handed slot back, as their heartbeat stopped (request cancelled; ADR-0043). */
  readonly abandonedInQueue: number;
  /** Completions per second over recent drain windows (in a quiet spell, what it allows); undefined before one. */
  readonly drainPerSecond: number | undefined;
}

/**
 * The enforcing half of the limiter (DESIGN.md §5), its limit from a `LimitController`. Parts: ./permit (ADR-0041),
 * ./waiter (ADR-0043), ./queue-zones (spec §7), ./retry-hint (ADR-0042).
 */
export class Admission implements LimiterPort {
  /** @internal The clock every read of time goes through. */
  readonly clock: ResolvedClock;
  protected readonly controller: LimitController;
  protected readonly queueing: QueueingConfig | undefined;
  private readonly random: () => number;
  private readonly order: QueueOrder;
  // Waiting line, and waiters handed a slot not yet claimed (empty within a microtask). Made on the first queued
  // call: most registry keys never queue (104 bytes a limiter; ADR-0029, ADR-0086).
  private queue: WaitQueue<Waiter> | undefined = undefined;
  private handed: WaitQueue<Waiter> | undefined = undefined;
  /** The controller's limit, re-read after every observe and resize. */
  private limitNow: number;
  private inflightCount = 0;
  /** The permit pool, a stack linked through `nextFree` (ADR-0041). */
  private freePermits: PooledPermit | undefined = undefined;
  private admittedCount = 0;
  /** No queued waiter can be gone before this (deadlines and heartbeats only move later): when a sweep may find one. */
  private nextGoneAt = Infinity;
  private shedCount = 0;
  private queueTimeouts = 0;
  private queueAborts = 0;
  private queueAbandoned = 0;
  // Drain meter (ADR-0042): open window's start (-Infinity before the first settle), completions (settles) since,
  // smoothed completions per ms (NaN, a double from the start, until a window closes).
  private drainWindowStart = -Infinity;
  private drainWindowCount = 0;
  private drainRatePerMs = NaN;
  // The quiet spell (ADR-0042, second addendum): from the first shed after the latest settle, while no call settles. A
  // settle moves the drain window's (start, count) away from the pair kept here, for good (the start only moves on, the
  // count only grows within a window), which ends the spell: the hot path does nothing more.
  private quietSince = NaN;
  private quietWindowStart = NaN;
  private quietWindowCount = -1;

  constructor(config: AdmissionConfig) {
    this.clock = config.clock;
    this.controller = config.controller;
    this.queueing = config.queueing;
    this.random = config.random;
    this.order = config.queueOrder;
    this.limitNow = config.controller.limit;
  }

  /** The limit admission enforces now. */
  get limit(): number {
    return this.limitNow;
  }

  /** Calls holding a permit now (running, or handed a slot and about to run). */
  get inflight(): number {
    return this.inflightCount;
  }

  /** Calls waiting for a slot now. */
  get queued(): number {
    return this.queue === undefined ? 0 : this.queue.size;
  }

  /** Which waiter a freed slot goes to (a getter: read-only for plain JavaScript too). */
  get queueOrder(): QueueOrder {
    return this.order;
  }

  /**
   * The low-level fast path: a permit when a slot is free and nobody waits, else undefined; never queues, reads no
   * clock, allocates nothing once warm. Settle the permit exactly once (at least `{ verdict, latencyMs }`), then drop
   * the reference: permits are pooled and reused (adr/0041-pooled-permits.md).
   */
  tryAcquire(): Permit | undefined {
    if (this.inflightCount >= this.limitNow || (this.queue !== undefined && this.queue.size !== 0)) return undefined;
    return this.takePermit();
  }

  /** @internal Slow path: run, shed (adr/0044) or wait to `deadlineAt` or abort; a call that leaves teaches nothing. */
  acquire(signal: AbortSignal | undefined, deadlineAt: number, timeoutMs: number | undefined): Promise<Permit> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    let permit = this.tryAcquire();
    if (permit !== undefined) return Promise.resolve(permit);
    const now = this.clock.now();
    if (this.queue !== undefined && (this.handed!.size !== 0 || this.queue.size !== 0)) {
      // The slow path has the clock: reclaim what the dead left behind before judging the queue.
      this.afterSlotChange(now);
      permit = this.tryAcquire();
      if (permit !== undefined) return Promise.resolve(permit);
    }
    const budgetMs = timeoutMs ?? Math.max(0, deadlineAt - now);
    if (deadlineAt <= now) {
      this.queueTimeouts++;
      return Promise.reject(new TimeoutError({ timeoutMs: budgetMs, queued: true }));
    }
    // Where an arrival may be shed, the dead must hold no places: a live waiter nearer the served end hides dead ones
    // behind it from afterSlotChange's sweep of the oldest end. Swept only once one may be gone (nextGoneAt), so an
    // overload of live waiters does not walk the queue at every arrival.
    if (
      now >= this.nextGoneAt &&
      this.queued !== 0 &&
      this.inflightCount + this.queued >= this.queueing!.initialFactor * this.limitNow
    ) {
      this.nextGoneAt = this.dropGone(this.queue!, now);
    }
    if (mustShed(this.queueing, this.limitNow, this.inflightCount + this.queued, this.random)) {
      this.shedCount++;
      return Promise.reject(this.limitExceeded(now));
    }
    const waiter = new Waiter(this, signal, deadlineAt, budgetMs, now);
    const woken = new Promise<void>((resolve) => {
      waiter.resolve = resolve;
    });
    if (this.queue === undefined) {
      this.queue = new WaitQueue<Waiter>(this.order);
      this.handed = new WaitQueue<Waiter>('fifo');
    }
    this.queue.push(waiter);
    const goneFrom = mayBeGoneAt(waiter);
    if (goneFrom < this.nextGoneAt) this.nextGoneAt = goneFrom;
    try {
      arm(this.clock, waiter, now);
      signal?.addEventListener('abort', waiter.onAbort);
    } catch (error) {
      // Without its timer or abort listener it could outlive its deadline or caller: it leaves now (adr/0012).
      if (waiter.list !== undefined) this.drop(waiter, error);
    }
    // The claim is chained here, in the caller's own context: see ADR-0043.
    return woken.then(waiter.claim);
  }

  /**
   * Sets the limit by hand (whole calls, clamped to minLimit..maxLimit) for every caller at once; the control loop
   * carries on from it. A higher limit admits waiters at once (adr/0044); a lower one admits nobody new until in-flight
   * falls under it. Returns the limit now in force.
   */
  resize(limit: number): number {
    if (typeof limit !== 'number' || !(limit >= 1) || limit === Infinity) {
      const message = `resilix: limiter.resize(limit) needs a number in [1, Infinity); received ${
        typeof limit === 'number' ? String(limit) : typeof limit
      }`;
      throw typeof limit === 'number' ? new RangeError(message) : new TypeError(message);
    }
    const now = this.clock.now();
    try {
      // Whole calls: a fraction would leave 'fixed' alternating between its neighbours at every window.
      this.controller.setLimit(Math.floor(limit), now);
    } finally {
      this.afterSlotChange(now);
    }
    return this.limitNow;
  }

  /**
   * Calls `listener` on every change of the limit (window decisions and `resize`), once the new limit applies: inside
   * the listener `limit` is the new one and `tryAcquire()` obeys it. It runs in the same settle or `resize`, before
   * freed waiters are served.
   */
  onLimitChange(listener: Listener<LimitChange>): Subscription {
    return this.controller.changes.subscribe((change) => {
      this.limitNow = this.controller.limit;
      listener(change);
    });
  }

  /** @internal A permit's first settle: one clock read, no allocation, kept small for V8 (adr/0041, adr/0087). */
  release(permit: PooledPermit, observation: Observation, at: number | undefined): void {
    const inflight = this.inflightCount;
    this.inflightCount = inflight - 1;
    this.drainWindowCount++;
    // `+at`: merged with the untyped `at`, the clock's double was boxed on every settle (issue 16, docs/benchmarks.md).
    // A caller that never passes `at` leaves that side uncompiled.
    const now = at === undefined ? this.clock.now() : +at;
    const drainStart = this.drainWindowStart;
    if (now - drainStart >= DRAIN_WINDOW_MS) {
      // `now` goes via the field: as an argument to this non-inlined call it was boxed on every settle (adr/0087).
      this.drainWindowStart = now;
      this.closeDrainWindow(drainStart);
    }
    // Every settle reaches the controller (it ignores `rejected`/`cancelled`, ADR-0007, but may close a window).
    // No try/finally (it costs the inlining): if observe throws, the slot is free and the next event serves it.
    const controller = this.controller;
    controller.settledAt = now;
    controller.observe(observation, inflight, permit.marked);
    this.limitNow = controller.limit;
    const queue = this.queue;
    if (queue !== undefined && (queue.size !== 0 || this.handed!.size !== 0)) this.afterSlotChange(now);
    permit.marked = false;
    // Pooled only now, so a waiter served above never gets the object its caller holds: a second settle is a no-op.
    permit.nextFree = this.freePermits;
    this.freePermits = permit;
  }

  /** @internal A permit's first mark (a stream's first token): the controller learns the latency; the slot is held. */
  mark(latencyMs: number, at: number | undefined, admitted: number): void {
    const controller = this.controller;
    if (controller.observeMark === undefined) return;
    const now = at === undefined ? this.clock.now() : at;
    controller.observeMark(latencyMs, now, this.inflightCount, admitted);
    this.limitNow = controller.limit;
    if (this.queue !== undefined && this.queue.size !== 0) this.afterSlotChange(now);
  }

  /** @internal */
  claim(waiter: Waiter): Permit {
    if (waiter.list !== this.handed) throw waiter.failure;
    // A deadline can pass between the hand-off and this continuation (a busy event loop): the slot goes back and the
    // call is a queue timeout, counted as one, as if its timer had fired first.
    const now = this.clock.now();
    if (waiter.deadlineAt <= now) {
      this.drop(waiter, this.goneReason(waiter, now));
      this.afterSlotChange(now);
      throw waiter.failure;
    }
    this.handed!.remove(waiter);
    disarm(this.clock, waiter);
    return waiter.permit!;
  }

  /** @internal A claimed slot whose deadline passed before its call could start (run-call.ts): a queue timeout. */
  queueTimedOut(): void {
    this.queueTimeouts++;
  }

  /** @internal A claimed slot whose caller aborted before its call could start (run-call.ts): an abort in the queue. */
  queueAborted(): void {
    this.queueAborts++;
  }

  /** @internal The waiter's timer fired, in its own request's context: its deadline, or a heartbeat (re-arm). */
  waiterTimer(waiter: Waiter): void {
    waiter.hasTimer = false;
    if (waiter.list === undefined) return;
    if (!waiter.timerIsDeadline) {
      const now = this.clock.now();
      waiter.beatAt = now;
      try {
        arm(this.clock, waiter, now);
      } catch (error) {
        // No next beat means no deadline: the waiter leaves now, with the clock's error.
        if (waiter.list !== undefined) this.drop(waiter, error);
        this.afterSlotChange(now);
        return;
      }
      // A live beat reclaims gone waiters' slots and serves a slot left free (observe threw): no settle needed to heal.
      if (this.handed!.size !== 0 || this.inflightCount < this.limitNow) this.afterSlotChange(now);
      return;
    }
    this.queueTimeouts++;
    if (this.drop(waiter, new TimeoutError({ timeoutMs: waiter.budgetMs, queued: true }))) {
      this.afterSlotChange(this.clock.now());
    }
  }

  /** @internal The caller aborted while queued or handed. Runs inside the platform's event dispatch: must not throw. */
  waiterAborted(waiter: Waiter): void {
    let reason: unknown;
    try {
      reason = waiter.signal!.reason;
    } catch (error) {
      reason = error;
    }
    if (waiter.list === undefined) return;
    this.queueAborts++;
    if (this.drop(waiter, reason)) this.afterSlotChange(this.clock.now());
  }

  /** @internal Admission's counters, for the snapshot. */
  counters(): AdmissionCounters {
    return {
      // Monotonic, as a counter must be: a slot handed to a waiter that left before claiming it stays counted here
      // (and in timedOutInQueue, abortedInQueue or abandonedInQueue).
      admitted: this.admittedCount,
      shed: this.shedCount,
      timedOutInQueue: this.queueTimeouts,
      abortedInQueue: this.queueAborts,
      abandonedInQueue: this.queueAbandoned,
      drainPerSecond:
        this.drainRatePerMs !== this.drainRatePerMs
          ? undefined
          : 1000 *
            (this.inQuietSpell
              ? paceAfterQuiet(this.drainRatePerMs, this.clock.now() - this.quietSince, this.inflightCount)
              : this.drainRatePerMs),
    };
  }

  private takePermit(): PooledPermit {
    let permit = this.freePermits;
    if (permit === undefined) permit = new PooledPermit(this);
    else this.freePermits = permit.nextFree;
    permit.active = true;
    permit.inflight = ++this.inflightCount;
    this.admittedCount++;
    return permit;
  }

  /** A slot came back or the limit moved: take back stale hand-offs, drop the dead from the oldest end, admit. */
  private afterSlotChange(now: number): void {
    this.limitNow = this.controller.limit;
    const queue = this.queue;
    if (queue === undefined) return;
    // Take back unclaimed slots of gone waiters: in Workers their timers die with a cancelled request (adr/0043).
    if (this.handed!.size !== 0) this.dropGone(this.handed!, now);
    // LIFO serves the oldest last: sweep the dead so they hold no places (pushing arrivals into shedding) (adr/0043).
    for (let oldest = queue.peekOldest(); oldest !== undefined && isGone(oldest, now); oldest = queue.peekOldest()) {
      this.drop(oldest, this.goneReason(oldest, now));
    }
    while (this.inflightCount < this.limitNow) {
      const waiter = queue.take();
      if (waiter === undefined) return;
      // Out of budget (or gone): a slot would buy it nothing, so it leaves without one.
      if (isGone(waiter, now)) {
        this.drop(waiter, this.goneReason(waiter, now));
      } else {
        waiter.permit = this.takePermit();
        this.handed!.push(waiter);
        waiter.resolve();
      }
    }
  }

  /**
   * Drops every gone waiter in `list`, wherever it sits; returns when the next may be gone (-Infinity if the walk had to
   * stop early). O(list).
   */
  private dropGone(list: WaitQueue<Waiter>, now: number): number {
    let nextGoneAt = Infinity;
    for (let waiter = list.peekOldest(); waiter !== undefined; ) {
      const next = list.after(waiter);
      if (isGone(waiter, now)) {
        this.drop(waiter, this.goneReason(waiter, now));
        // A clock or signal that called back into the limiter may have moved `next` (dropped it, or handed it a slot):
        // the walk stops there, and the next arrival sweeps again.
        if (next !== undefined && next.list !== list) return -Infinity;
      } else {
        const goneFrom = mayBeGoneAt(waiter);
        if (goneFrom < nextGoneAt) nextGoneAt = goneFrom;
      }
      waiter = next;
    }
    return nextGoneAt;
  }

  /** Why a gone waiter leaves; counts it. */
  private goneReason(waiter: Waiter, now: number): Error {
    if (waiter.deadlineAt <= now) {
      this.queueTimeouts++;
      return new TimeoutError({ timeoutMs: waiter.budgetMs, queued: true });
    }
    this.queueAbandoned++;
    return markAbandoned(
      new LimitExceededError(
        `resilix: a queued call stopped answering its heartbeat (silent ${now - waiter.beatAt} ms; ` +
          'its request was likely cancelled) and left the queue without running',
      ),
    );
  }

  /**
   * Takes a waiter out of the queue (or one just taken from it) or out of `handed`, failing it with `reason`: its claim
   * throws it. A handed slot goes back unused, with no observation: true then (the caller serves it). Callers check that
   * it has not left already where a clock or signal that calls back may have dropped it.
   */
  private drop(waiter: Waiter, reason: unknown): boolean {
    const handed = waiter.list === this.handed;
    waiter.list?.remove(waiter);
    waiter.failure = reason;
    disarm(this.clock, waiter);
    // A queued waiter is woken to fail; a handed one was woken already.
    if (!handed) {
      waiter.resolve();
      return false;
    }
    const permit = waiter.permit!;
    permit.active = false;
    this.inflightCount--;
    // A slot given back unused ends a quiet spell as a settle does: the limiter is no longer full, and may go idle.
    this.quietWindowCount = -1;
    permit.nextFree = this.freePermits;
    this.freePermits = permit;
    return true;
  }

  /** Closes the window opened at `start` (`drainWindowStart` holds its end); the first settle only opens one. */
  private closeDrainWindow(start: number): void {
    if (start !== -Infinity) {
      const rate = this.drainWindowCount / (this.drainWindowStart - start);
      this.drainRatePerMs = smoothDrainRate(this.drainRatePerMs, rate);
    }
    this.drainWindowCount = 0;
  }

  /** The retry hint (ADR-0042): calls ahead (all waiting, running above L - 1) at the drain pace; undefined untimed. */
  private retryAfterMs(now: number): number | undefined {
    if (!this.inQuietSpell) {
      // The first shed since a settle: the limiter is full from here, and time counts against the pace until a settle.
      this.quietSince = now;
      this.quietWindowStart = this.drainWindowStart;
      this.quietWindowCount = this.drainWindowCount;
    }
    let ratePerMs = this.drainRatePerMs;
    if (ratePerMs !== ratePerMs) {
      // Before the first window closes, the open window's pace.
      const elapsed = now - this.drainWindowStart;
      if (!(elapsed > 0) || elapsed === Infinity || this.drainWindowCount <= 0) return undefined;
      ratePerMs = this.drainWindowCount / elapsed;
    }
    const ahead = Math.max(1, this.inflightCount + this.queued - this.limitNow + 1);
    return retryHintMs(ahead, paceAfterQuiet(ratePerMs, now - this.quietSince, this.inflightCount));
  }

  /** Whether no call has settled since the quiet spell's first shed. */
  private get inQuietSpell(): boolean {
    return this.drainWindowStart === this.quietWindowStart && this.drainWindowCount === this.quietWindowCount;
  }

  private limitExceeded(now: number): LimitExceededError {
    const retryAfterMs = this.retryAfterMs(now);
    const hint = retryAfterMs === undefined ? '' : `; retry in about ${retryAfterMs} ms`;
    return new LimitExceededError(
      `resilix: the limiter shed the call (${this.inflightCount} running and ${this.queued} waiting ` +
        `against a limit of ${this.limitNow})${hint}`,
      { retryAfterMs },
    );
  }
}
