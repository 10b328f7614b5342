import type { Clock } from '../../src/core/clock';

interface Timer {
  id: number;
  at: number;
  callback: () => void;
}

/**
 * A virtual clock for the retry tests: like test/helpers/fake-clock.ts, and it also tells when the
 * next timer is due, so a test can run a call with backoff waits to its end without guessing steps.
 */
export class VirtualClock implements Clock {
  private time: number;
  private nextId = 1;
  private timers: Timer[] = [];
  /** Every delay ever armed, in order (what the backoff asked for). */
  readonly armed: number[] = [];

  constructor(startMs = 0) {
    this.time = startMs;
  }

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): number {
    const id = this.nextId++;
    this.armed.push(delayMs);
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

  /** When the next timer is due, or undefined when none is armed. */
  get nextAt(): number | undefined {
    return this.timers[0]?.at;
  }

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

  /** Advances straight to the next due timer and fires it (and any due at the same moment). */
  fireNext(): boolean {
    const at = this.nextAt;
    if (at === undefined) return false;
    this.advance(at - this.time);
    return true;
  }

  /**
   * Runs pending promise reactions and due timers until `promise` settles. Throws when nothing is
   * armed and the promise still has not settled (a call stuck forever is a bug worth naming).
   */
  async run<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
    let outcome: { ok: true; value: T } | { ok: false; error: unknown } | undefined;
    promise.then(
      (value) => {
        outcome = { ok: true, value };
      },
      (error: unknown) => {
        outcome = { ok: false, error };
      },
    );
    for (let guard = 0; guard < 100_000; guard++) {
      await flush();
      if (outcome !== undefined) return outcome;
      if (!this.fireNext()) {
        await flush(20);
        if (outcome !== undefined) return outcome;
        throw new Error(`the call did not settle and no timer is armed (t = ${this.time} ms)`);
      }
    }
    throw new Error('the call did not settle within 100 000 timer firings');
  }
}

export async function flush(rounds = 10): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

/** A uniform source that always returns `value`: makes full jitter's wait exactly value x ceiling. */
export function constant(value: number): () => number {
  return () => value;
}

/** A fetch-like answer the default classifier reads: `{ status }` with an optional Retry-After. */
export function response(status: number, retryAfter?: string): { status: number; headers: Record<string, string> } {
  return { status, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter } };
}
