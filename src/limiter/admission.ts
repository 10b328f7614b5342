import type { ResolvedClock } from '../core/clock';
import type { Observation } from '../core/observation';
import type { LimiterPort, Permit } from '../core/ports';
import { LimitExceededError } from '../errors/limit-exceeded-error';
import { TimeoutError } from '../errors/timeout-error';
import type { Listener, Subscription } from '../core/events';
import type { LimitChange, LimitController } from './controller';
import { PooledPermit, type PermitOwner } from './permit';
import { mustShed, type QueueingConfig } from './queue-zones';
import { DRAIN_WINDOW_MS, retryHintMs, smoothDrainRate } from './retry-hint';
import { arm, CLAIMED, disarm, HANDED, isGone, LEFT, QUEUED, Waiter, type WaiterHost } from './waiter';
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
  /** Calls whose caller aborted while they waited. */
  readonly abortedInQueue: number;
  /**
   * Waiters whose heartbeat stopped (their request is gone, as when Workers cancels a request)
   * and that were dropped from the queue or gave back a handed slot (ADR-0043).
   */
  readonly abandonedInQueue: number;
  /** Completions per second over the recent drain windows; undefined before the first window. */
  readonly drainPerSecond: number | undefined;
}

/**
 * The enforcing half of the limiter (DESIGN.md §5): the in-flight counter, the permit pool, the
 * factor-based queue and its waiters' moves between queued, handed, claimed and left. It knows
 * nothing about Vegas: the limit comes from a `LimitController`, which learns from every settle.
 * Its parts with reasons of their own to change live beside it: the pooled permit (./permit,
 * ADR-0041), a waiter, its heartbeat and its timer (./waiter, ADR-0043), the zone decision
 * (./queue-zones, spec §7) and the retry hint's arithmetic (./retry-hint, ADR-0042).
 */
export class Admission implements LimiterPort, PermitOwner, WaiterHost {
  /** @internal The clock every read of time goes through. */
  readonly clock: ResolvedClock;
  protected readonly controller: LimitController;
  protected readonly queueing: QueueingConfig | undefined;
  private readonly random: () => number;
  private readonly order: QueueOrder;
  /**
   * The waiting line and the waiters handed a slot that have not claimed it yet (normally empty
   * within a microtask). Both are made when the first call queues (ADR-0029): a limiter whose
   * calls never wait, as most keys of a KeyRegistry, holds neither (104 bytes a limiter).
   */
  private queue: WaitQueue<Waiter> | undefined = undefined;
  private handed: WaitQueue<Waiter> | undefined = undefined;
  /** The controller's limit, re-read after every observe and resize. */
  private limitNow: number;
  private inflightCount = 0;
  /** The permit pool, a stack linked through `nextFree` (ADR-0041). */
  private freePermits: PooledPermit | undefined = undefined;
  private admittedCount = 0;
  /** Handed slots taken back unused: admitted, never settled (for the drain count). */
  private takenBack = 0;
  private shedCount = 0;
  private queueTimeouts = 0;
  private queueAborts = 0;
  private queueAbandoned = 0;
  /** Start of the open drain window (-Infinity until the first settle opens it). */
  private drainWindowStart = -Infinity;
  /** Completions counted when the open window started. */
  private drainWindowBase = 0;
  /** Smoothed completions per ms; NaN until the first drain window closes (a double from the start). */
  private drainRatePerMs = NaN;

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

  /** Which waiter a freed slot goes to. */
  get queueOrder(): QueueOrder {
    return this.order;
  }

  /**
   * The low-level fast path: a permit when a slot is free and nobody is waiting (no queue
   * jumping), else undefined; it never queues. A counter compare and a pop from the permit pool:
   * no clock read, no allocation once warm. Settle the permit exactly once with what the call
   * taught (at least `{ verdict, latencyMs }`), then drop the reference: permits are pooled and
   * reused (adr/0041-pooled-permits.md).
   */
  tryAcquire(): Permit | undefined {
    if (this.inflightCount >= this.limitNow || (this.queue !== undefined && this.queue.size !== 0)) return undefined;
    return this.takePermit();
  }

  /**
   * @internal The slow path. Runs at once if the fast path would; otherwise sheds (past the factors, or by
   * the gradual coin) or waits. The wait counts against `deadlineAt`: a waiter still queued then
   * leaves with a queued `TimeoutError`, and an abort makes it leave at once with the signal's
   * reason. Neither teaches the controller anything: the upstream never saw the call.
   */
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
    if (mustShed(this.queueing, this.limitNow, this.inflightCount + this.queued, this.random)) {
      this.shedCount++;
      return Promise.reject(this.limitExceeded(now));
    }
    const waiter = new Waiter(this, signal, deadlineAt, budgetMs, now);
    const woken = new Promise<void>((resolve, reject) => {
      waiter.resolve = resolve;
      waiter.reject = reject;
    });
    this.waitingLine().push(waiter);
    try {
      arm(this.clock, waiter, now);
      signal?.addEventListener('abort', waiter.onAbort);
    } catch (error) {
      // The clock cannot arm its timer or the signal refused a listener: a waiter without them
      // could outlive its deadline or its caller, so it leaves before it ever waited (adr/0012).
      this.abandon(waiter, error);
    }
    // The claim is chained here, in the caller's own context: see ADR-0043.
    return woken.then(waiter.claim);
  }

  /**
   * Changes the limit now (clamped by the controller's guardrails). A higher limit admits waiters
   * at once; a lower one admits nobody new until in-flight falls under it. Returns the new limit.
   */
  resize(limit: number): number {
    const now = this.clock.now();
    try {
      this.controller.setLimit(limit, now);
    } finally {
      this.afterSlotChange(now);
    }
    return this.limitNow;
  }

  /**
   * Subscribes to the controller's limit changes so that a listener runs only after the new
   * limit applies to admission: it reads the new `limit`, and a `tryAcquire()` inside it obeys
   * the new limit. Listeners run synchronously, inside the settle or `resize` that moved the
   * limit, before the waiters a raised limit frees are handed their slots.
   */
  protected subscribeToLimit(listener: Listener<LimitChange>): Subscription {
    return this.controller.changes.subscribe((change) => {
      this.limitNow = this.controller.limit;
      listener(change);
    });
  }

  /**
   * @internal Called by a permit's first settle. One clock read; no allocation. Kept small on
   * purpose: V8 inlines the controller's `observe` into it only while the whole path fits its
   * inlining budget, and a call it does not inline boxes the doubles it passes (ADR-0041). The
   * queue work lives out of line, behind one check.
   */
  release(permit: PooledPermit, observation: Observation, at: number | undefined): void {
    const inflight = this.inflightCount;
    this.inflightCount = inflight - 1;
    // `+at`, not `at`: a merge of the clock's double with the untyped parameter is a tagged value,
    // and V8 boxed every fractional reading into it (16 bytes per settle, issue 16). With `+at`
    // both sides are numbers; a caller that never passes `at` leaves that side uncompiled.
    const now = at === undefined ? this.clock.now() : +at;
    const drainStart = this.drainWindowStart;
    if (now - drainStart >= DRAIN_WINDOW_MS) {
      // `now` goes through the field, not as an argument: a double handed to a call V8 does not
      // inline is boxed, and the box was made on every settle, not only on the rare close.
      this.drainWindowStart = now;
      this.closeDrainWindow(drainStart);
    }
    // Every settle goes to the controller, which ignores `rejected` and `cancelled` (ADR-007) but
    // may still close a window on time. No try/finally here: it costs the inlining above. If
    // observe throws, the slot is already free and the next settle, arrival or heartbeat serves it.
    const controller = this.controller;
    controller.settledAt = now;
    controller.observe(observation, inflight, permit.marked);
    this.limitNow = controller.limit;
    const queue = this.queue;
    if (queue !== undefined && (queue.size !== 0 || this.handed!.size !== 0)) this.afterSlotChange(now);
    permit.marked = false;
    // Pooled only now: a waiter served by this settle never gets the object its caller still
    // holds, so settling twice in a row stays a no-op.
    permit.nextFree = this.freePermits;
    this.freePermits = permit;
  }

  /**
   * @internal Called by a permit's first mark (a stream's first token): the controller learns the
   * latency now; the slot stays held until the settle.
   */
  mark(_permit: PooledPermit, latencyMs: number, at: number | undefined): void {
    const controller = this.controller;
    if (controller.observeMark === undefined) return;
    const now = at === undefined ? this.clock.now() : at;
    controller.observeMark(latencyMs, now, this.inflightCount);
    this.limitNow = controller.limit;
    if (this.queue !== undefined && this.queue.size !== 0) this.afterSlotChange(now);
  }

  /** @internal */
  claim(waiter: Waiter): Permit {
    if (waiter.state !== HANDED) throw waiter.failure;
    this.handed!.remove(waiter);
    waiter.state = CLAIMED;
    disarm(this.clock, waiter);
    const permit = waiter.permit!;
    waiter.permit = undefined;
    return permit;
  }

  /**
   * @internal The waiter's own timer fired, in its own request's context: its deadline, or a
   * heartbeat (it is alive; arm the next one).
   */
  waiterTimer(waiter: Waiter): void {
    if (waiter.state !== QUEUED && waiter.state !== HANDED) return;
    if (!waiter.timerIsDeadline) {
      const now = this.clock.now();
      waiter.beatAt = now;
      try {
        arm(this.clock, waiter, now);
      } catch (error) {
        // No next beat means no deadline: the waiter leaves now, with the clock's error.
        this.abandon(waiter, error);
        this.afterSlotChange(now);
        return;
      }
      // A live waiter's beat also reclaims slots handed to waiters that are gone, and serves a
      // slot left free (a settle whose observe threw), so the queue heals with no settle to help.
      if (this.handed!.size !== 0 || this.inflightCount < this.limitNow) this.afterSlotChange(now);
      return;
    }
    const error = new TimeoutError({ timeoutMs: waiter.budgetMs, queued: true });
    this.queueTimeouts++;
    if (waiter.state === QUEUED) {
      this.queue!.remove(waiter);
      this.leave(waiter, error);
    } else {
      this.takeBack(waiter, error);
      this.afterSlotChange(this.clock.now());
    }
  }

  /**
   * @internal The caller aborted while waiting (or after being handed a slot, before claiming it).
   * It runs inside the platform's event dispatch, so it must not throw.
   */
  waiterAborted(waiter: Waiter): void {
    let reason: unknown;
    try {
      reason = waiter.signal!.reason;
    } catch (error) {
      reason = error;
    }
    if (waiter.state === QUEUED) {
      this.queue!.remove(waiter);
      this.queueAborts++;
      this.leave(waiter, reason);
    } else if (waiter.state === HANDED) {
      this.queueAborts++;
      this.takeBack(waiter, reason);
      this.afterSlotChange(this.clock.now());
    }
  }

  /** @internal Admission's counters, for the snapshot. */
  counters(): AdmissionCounters {
    return {
      admitted: this.admittedCount,
      shed: this.shedCount,
      timedOutInQueue: this.queueTimeouts,
      abortedInQueue: this.queueAborts,
      abandonedInQueue: this.queueAbandoned,
      drainPerSecond: this.drainRatePerMs === this.drainRatePerMs ? this.drainRatePerMs * 1000 : undefined,
    };
  }

  /** The waiting line, made with the handed list when the first call queues. */
  private waitingLine(): WaitQueue<Waiter> {
    if (this.queue === undefined) {
      this.queue = new WaitQueue<Waiter>(this.order);
      this.handed = new WaitQueue<Waiter>('fifo');
    }
    return this.queue;
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

  /**
   * A slot came back or the limit moved (or the slow path looked): take back stale hand-offs,
   * drop dead waiters from the oldest end, then admit waiters that fit.
   */
  private afterSlotChange(now: number): void {
    this.limitNow = this.controller.limit;
    const queue = this.queue;
    if (queue === undefined) return;
    if (this.handed!.size !== 0) this.takeBackExpiredHandoffs(now);
    if (queue.size === 0) return;
    // In LIFO order the oldest waiters are served last; sweep the dead ones so they do not hold
    // places (and push later arrivals into the rejection zone) until their lost timers would fire.
    for (let oldest = queue.peekOldest(); oldest !== undefined && isGone(oldest, now); oldest = queue.peekOldest()) {
      queue.remove(oldest);
      this.dropGone(oldest, now);
    }
    while (this.inflightCount < this.limitNow) {
      const waiter = queue.take();
      if (waiter === undefined) return;
      // Out of budget (or gone): a slot would buy it nothing, so it leaves without one.
      if (isGone(waiter, now)) this.dropGone(waiter, now);
      else this.handOff(waiter);
    }
  }

  /** Why a gone waiter leaves; counts it. */
  private goneReason(waiter: Waiter, now: number): Error {
    if (waiter.deadlineAt <= now) {
      this.queueTimeouts++;
      return new TimeoutError({ timeoutMs: waiter.budgetMs, queued: true });
    }
    this.queueAbandoned++;
    return new LimitExceededError(
      `resilix: a queued call stopped answering its heartbeat (silent ${now - waiter.beatAt} ms; ` +
        'its request was likely cancelled) and left the queue without running',
    );
  }

  /** Fails a waiter `isGone` picked out of the queue; it never held a slot. */
  private dropGone(waiter: Waiter, now: number): void {
    this.leave(waiter, this.goneReason(waiter, now));
  }

  private handOff(waiter: Waiter): void {
    waiter.permit = this.takePermit();
    waiter.state = HANDED;
    this.handed!.push(waiter);
    waiter.resolve();
  }

  /**
   * Handed slots whose waiters never claimed them and are gone (deadline passed, or heartbeat
   * stale). Normally the waiter's own timer handles its deadline; in Workers that timer dies with
   * a cancelled request, so settles and the slow path do it lazily.
   */
  private takeBackExpiredHandoffs(now: number): void {
    const handed = this.handed!;
    let waiter = handed.peekOldest();
    while (waiter !== undefined) {
      const next = handed.after(waiter);
      if (isGone(waiter, now)) this.takeBack(waiter, this.goneReason(waiter, now));
      waiter = next;
    }
  }

  /** Returns a handed, unclaimed slot; the waiter's claim will throw `failure`. No observation. */
  private takeBack(waiter: Waiter, failure: unknown): void {
    this.handed!.remove(waiter);
    waiter.state = LEFT;
    waiter.failure = failure;
    disarm(this.clock, waiter);
    const permit = waiter.permit!;
    waiter.permit = undefined;
    permit.active = false;
    this.inflightCount--;
    this.takenBack++;
    this.pool(permit);
  }

  private pool(permit: PooledPermit): void {
    permit.nextFree = this.freePermits;
    this.freePermits = permit;
  }

  private leave(waiter: Waiter, reason: unknown): void {
    waiter.state = LEFT;
    disarm(this.clock, waiter);
    waiter.reject(reason);
  }

  /** Takes a waiter out, wherever it is (queued, or handed a slot), failing it with `error`. */
  private abandon(waiter: Waiter, error: unknown): void {
    if (waiter.state === QUEUED) {
      this.queue!.remove(waiter);
      this.leave(waiter, error);
    } else if (waiter.state === HANDED) {
      this.takeBack(waiter, error);
    }
  }

  /** Calls that finished: admitted and settled (not in flight, not taken back unused). */
  private completed(): number {
    return this.admittedCount - this.inflightCount - this.takenBack;
  }

  /**
   * Closes the drain-rate window (at the first settle a second or more after it opened), or opens
   * the first one at the first settle: idle time before any traffic is not drain time. The hot
   * path pays one subtraction and one compare; completions are counted from the admission counter.
   */
  /** Closes the drain window that opened at `start`; `drainWindowStart` already holds its end. */
  private closeDrainWindow(start: number): void {
    const completed = this.completed();
    if (start !== -Infinity) {
      const rate = (completed - this.drainWindowBase) / (this.drainWindowStart - start);
      this.drainRatePerMs = smoothDrainRate(this.drainRatePerMs, rate);
    }
    this.drainWindowBase = completed;
  }

  /**
   * The retry hint (ADR-0042): how long until a new call would run at once, if the current
   * backlog drains at the measured pace. Calls ahead of it: everyone waiting, plus the running
   * calls above L - 1. Undefined while no completion has been timed.
   */
  private retryAfterMs(now: number): number | undefined {
    let ratePerMs = this.drainRatePerMs;
    if (ratePerMs !== ratePerMs) {
      // Before the first window closes, the open window's pace is the best evidence there is.
      const elapsed = now - this.drainWindowStart;
      const counted = this.completed() - this.drainWindowBase;
      if (!(elapsed > 0) || elapsed === Infinity || counted <= 0) return undefined;
      ratePerMs = counted / elapsed;
    }
    const ahead = Math.max(1, this.inflightCount + this.queued - this.limitNow + 1);
    return retryHintMs(ahead, ratePerMs);
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
