import type { Clock } from '../../src/core/clock';

/**
 * Something that happens at a virtual instant. Handlers are long-lived objects (an upstream, a
 * load generator), and `arg` says which of their calls the event is about, so scheduling an
 * event allocates nothing.
 */
export interface EventHandler {
  fire(arg: number): void;
}

/** A deadline timer the library armed through the clock seam; cleared timers stay queued, inert. */
class VirtualTimer implements EventHandler {
  cleared = false;
  constructor(
    private readonly simulator: Simulator,
    private readonly callback: () => void,
  ) {}
  fire(): void {
    if (this.cleared) this.simulator.inertFired++;
    else this.callback();
  }
}

class Action implements EventHandler {
  constructor(private readonly run: () => void) {}
  fire(): void {
    this.run();
  }
}

/**
 * The discrete-event engine: a virtual clock and an event queue (a binary min-heap ordered by
 * time, then by scheduling order, so simultaneous events fire first-scheduled first: the one
 * tie-break rule that makes a run a pure function of its seed).
 *
 * It is the `Clock` every policy in a scenario receives: `now()` reads virtual time, `setTimer`
 * and `clearTimer` put the library's deadline timers on the same queue. Nothing here reads the
 * wall clock or arms a real timer (sim/engine.test.ts checks the source for it).
 *
 * The heap is four parallel arrays (time, sequence, argument, handler) grown by doubling: a
 * scheduled event is four stores, not an object.
 */
export class Simulator implements Clock {
  private nowMs = 0;
  private nextSequence = 0;
  private count = 0;
  private times = new Float64Array(1024);
  private sequences = new Float64Array(1024);
  private args = new Float64Array(1024);
  private handlers: (EventHandler | undefined)[] = new Array<EventHandler | undefined>(1024);
  /** Events fired since construction (the engine's own throughput figure). */
  eventsFired = 0;
  /** Host event-loop turns taken by `runAsync` to let promise reactions settle. */
  drains = 0;
  /** Cleared timers reached in the queue (they do nothing, and need no drain). */
  inertFired = 0;

  /**
   * Counts every call into the engine (clock reads, timers, events scheduled): `runAsync` reads it
   * to tell whether promise reactions are still doing anything at the current instant.
   */
  private activity = 0;

  now(): number {
    this.activity++;
    return this.nowMs;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    this.activity++;
    const timer = new VirtualTimer(this, callback);
    this.schedule(this.nowMs + (delayMs > 0 ? delayMs : 0), timer, 0);
    return timer;
  }

  clearTimer(handle: unknown): void {
    this.activity++;
    if (handle instanceof VirtualTimer) handle.cleared = true;
  }

  get pending(): number {
    return this.count;
  }

  /** Schedules `handler.fire(arg)` at virtual time `atMs` (never in the past). */
  schedule(atMs: number, handler: EventHandler, arg: number): void {
    if (!(atMs >= this.nowMs)) atMs = this.nowMs;
    this.activity++;
    if (this.count === this.times.length) this.grow();
    const times = this.times;
    const sequences = this.sequences;
    const args = this.args;
    const handlers = this.handlers;
    const sequence = this.nextSequence++;
    // Sift up: move parents down until the new event's slot is found.
    let i = this.count++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pt = times[parent]!;
      if (pt < atMs || (pt === atMs && sequences[parent]! < sequence)) break;
      times[i] = pt;
      sequences[i] = sequences[parent]!;
      args[i] = args[parent]!;
      handlers[i] = handlers[parent];
      i = parent;
    }
    times[i] = atMs;
    sequences[i] = sequence;
    args[i] = arg;
    handlers[i] = handler;
  }

  /** Schedules a closure (for rare events: phase changes, schedule steps). */
  at(atMs: number, run: () => void): void {
    this.schedule(atMs, new Action(run), 0);
  }

  /**
   * Fires every event due at or before `untilMs`, in order, then sets the clock to `untilMs`.
   * For models driven through the synchronous API (`tryAcquire`/`settle`): no promise involved.
   */
  run(untilMs: number): void {
    while (this.count > 0 && this.times[0]! <= untilMs) this.fireNext();
    if (untilMs > this.nowMs) this.nowMs = untilMs;
  }

  /**
   * Like `run`, for models driven through `execute()`: after the events of each instant, it lets
   * the library's promise reactions run at that instant, before the clock moves. It awaits one
   * microtask turn at a time (each turn advances every pending promise chain by one reaction)
   * until QUIET_TURNS turns in a row made no call into the engine: a reaction that matters to the
   * model reads the clock, arms a timer or schedules an event, so a chain that does none of these
   * for that many hops has nothing left to do at this instant. Microtask order is fixed, so the
   * run is still a pure function of the seed; and it is ~10x faster than yielding a host
   * event-loop turn (setImmediate) per instant.
   */
  async runAsync(untilMs: number): Promise<void> {
    while (this.count > 0 && this.times[0]! <= untilMs) {
      const instant = this.times[0]!;
      const firedBefore = this.eventsFired - this.inertFired;
      while (this.count > 0 && this.times[0]! === instant) this.fireNext();
      // An instant where only cleared timers came due started nothing: no reaction to wait for.
      if (this.eventsFired - this.inertFired === firedBefore) continue;
      let quiet = 0;
      while (quiet < QUIET_TURNS) {
        const before = this.activity;
        await undefined;
        quiet = this.activity === before ? quiet + 1 : 0;
      }
      this.drains++;
    }
    if (untilMs > this.nowMs) this.nowMs = untilMs;
  }

  private fireNext(): void {
    const times = this.times;
    const sequences = this.sequences;
    const args = this.args;
    const handlers = this.handlers;
    const handler = handlers[0]!;
    const arg = args[0]!;
    this.nowMs = times[0]!;
    // Pop: the last event takes the root's place and sifts down.
    const last = --this.count;
    const lt = times[last]!;
    const ls = sequences[last]!;
    const la = args[last]!;
    const lh = handlers[last];
    handlers[last] = undefined;
    if (last > 0) {
      let i = 0;
      for (;;) {
        let child = 2 * i + 1;
        if (child >= last) break;
        const right = child + 1;
        if (
          right < last &&
          (times[right]! < times[child]! || (times[right]! === times[child]! && sequences[right]! < sequences[child]!))
        ) {
          child = right;
        }
        const ct = times[child]!;
        if (lt < ct || (lt === ct && ls < sequences[child]!)) break;
        times[i] = ct;
        sequences[i] = sequences[child]!;
        args[i] = args[child]!;
        handlers[i] = handlers[child];
        i = child;
      }
      times[i] = lt;
      sequences[i] = ls;
      args[i] = la;
      handlers[i] = lh;
    }
    this.eventsFired++;
    handler.fire(arg);
  }

  private grow(): void {
    const size = this.times.length * 2;
    const times = new Float64Array(size);
    times.set(this.times);
    const sequences = new Float64Array(size);
    sequences.set(this.sequences);
    const args = new Float64Array(size);
    args.set(this.args);
    this.times = times;
    this.sequences = sequences;
    this.args = args;
    this.handlers.length = size;
  }
}

/**
 * Microtask turns without engine activity after which an instant counts as settled. Ours: the
 * library's silent chains are a few hops (an async function's return, a waiter's promise, the
 * runner's continuation); every execute-mode scenario gives byte-identical results to a full
 * setImmediate drain from 2 turns up, and 8 leaves a margin. A turn costs tens of nanoseconds.
 */
const QUIET_TURNS = 8;
