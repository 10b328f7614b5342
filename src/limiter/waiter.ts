import type { ResolvedClock, TimerHandle } from '../core/clock';
import { reportError } from '../core/events';
import type { Permit } from '../core/ports';
import type { Admission } from './admission';
import type { PooledPermit } from './permit';
import { QueueNode } from './wait-queue';

// Ours (ADR-0043): a waiter's one timer fires at its deadline or this often while it waits. In Workers a request
// awaiting with no timer of its own is cancelled as hung; the beat keeps it alive and proves it is.
const HEARTBEAT_MS = 1_000;
// Ours (ADR-0043): a waiter this silent is gone. Ten beats: far beyond timer jitter, and bounds a ghost's stay.
const STALE_AFTER_MS = 10 * HEARTBEAT_MS;

/**
 * One call waiting for a slot; its timer and abort listener live only while it waits. Its `list` says where it is:
 * admission's queue, its `handed` (given a slot, not yet claimed), or none (claimed, or left without a slot).
 */
export class Waiter extends QueueNode {
  /** Its slot, from the hand-off on; read only while it is in `handed`. */
  permit: PooledPermit | undefined = undefined;
  timer: TimerHandle = undefined;
  hasTimer = false;
  /** The armed timer is the deadline itself (not a heartbeat). */
  timerIsDeadline = false;
  /** Why the waiter left without a slot (or had its handed slot taken back): its claim throws it. */
  failure: unknown = undefined;
  /** Wakes the waiter to claim: a handed slot, or its `failure`. */
  resolve!: () => void;

  constructor(
    /** What its timer, abort listener and claim call back into. */
    private readonly admission: Admission,
    readonly signal: AbortSignal | undefined,
    readonly deadlineAt: number,
    readonly budgetMs: number,
    /** Clock time of the last heartbeat (the enqueue time to begin with). */
    public beatAt: number,
  ) {
    super();
  }

  readonly onTimer = (): void => this.admission.waiterTimer(this);

  readonly onAbort = (): void => this.admission.waiterAborted(this);

  /** Runs in the waiter's own continuation, so its request's context (ADR-0043). */
  readonly claim = (): Permit => this.admission.claim(this);
}

/** One timer per waiter: the next heartbeat, or the deadline when that comes first. */
export function arm(clock: ResolvedClock, waiter: Waiter, now: number): void {
  const remainingMs = waiter.deadlineAt - now;
  waiter.timerIsDeadline = remainingMs <= HEARTBEAT_MS;
  waiter.timer = clock.setTimer(waiter.onTimer, waiter.timerIsDeadline ? remainingMs : HEARTBEAT_MS);
  waiter.hasTimer = true;
}

/** The earliest `isGone` can hold, as things stand: its deadline, or STALE_AFTER_MS after its last beat. */
export function mayBeGoneAt(waiter: Waiter): number {
  const staleAt = waiter.beatAt + STALE_AFTER_MS;
  return waiter.deadlineAt < staleAt ? waiter.deadlineAt : staleAt;
}

/** Past its deadline, or its heartbeat silent for STALE_AFTER_MS (its request is gone). */
export function isGone(waiter: Waiter, now: number): boolean {
  return waiter.deadlineAt <= now || now - waiter.beatAt >= STALE_AFTER_MS;
}

/** Clears the timer and abort listener; a throw (clock, signal) is reported, and the leftover then does nothing. */
export function disarm(clock: ResolvedClock, waiter: Waiter): void {
  if (waiter.hasTimer) {
    waiter.hasTimer = false;
    try {
      clock.clearTimer(waiter.timer);
    } catch (error) {
      reportError(error, 'clock.clearTimer() threw; the queue carried on');
    }
  }
  waiter.timer = undefined;
  try {
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
  } catch (error) {
    reportError(error, "the caller's signal threw from removeEventListener; the queue carried on");
  }
}
