import type { Clock } from '../../src/core/clock';

interface PendingTimer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A virtual clock for tests: time moves only when a test advances it, and deadline timers fire
 * in order as it passes them. No sleeps, no wall clock.
 */
export class FakeClock implements Clock {
  private time = 0;
  private nextId = 1;
  private timers: PendingTimer[] = [];

  constructor(startMs = 0) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): number {
    const id = this.nextId++;
    this.timers.push({ id, at: this.time + Math.max(0, delayMs), callback });
    this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
    return id;
  }

  clearTimer(handle: unknown): void {
    this.timers = this.timers.filter((t) => t.id !== handle);
  }

  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward, firing every timer due on the way, in order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (;;) {
      const next = this.timers[0];
      if (next === undefined || next.at > target) break;
      this.timers.shift();
      this.time = next.at;
      next.callback();
    }
    this.time = target;
  }
}

/** Lets pending promise reactions run. */
export async function flush(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** A promise with its resolve/reject exposed, for calls a test finishes by hand. */
export function deferred<T = unknown>(): {
  promise: Promise<T>;
  resolve: (v: T) => void;
  reject: (e: unknown) => void;
} {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}
