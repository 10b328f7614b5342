import { breaker, type CircuitBreaker } from '../../src/breaker/breaker';
import type { BreakerOptions } from '../../src/breaker/options';
import type { BreakerStateChange } from '../../src/breaker/state';
import type { Verdict } from '../../src/core/verdict';
import { FakeClock } from '../helpers/fake-clock';

/** A breaker on a fake clock, driven through its port with hand-made Observations. */
export interface Rig {
  readonly clock: FakeClock;
  readonly b: CircuitBreaker;
  /** Every state change, in order. */
  readonly changes: BreakerStateChange[];
  /** Admits and settles one call at once; returns the ticket (-1 when refused, nothing settled). */
  call(verdict: Verdict, latencyMs?: number): number;
  /** Runs `count` calls of one verdict; with `gapMs` the clock advances that much after each call. */
  calls(count: number, verdict: Verdict, options?: { latencyMs?: number; gapMs?: number }): void;
}

export function rig(options: Omit<BreakerOptions, 'clock'> = {}, startMs = 0): Rig {
  const clock = new FakeClock(startMs);
  const b = breaker({ clock, ...options });
  const changes: BreakerStateChange[] = [];
  b.onStateChange((change) => changes.push(change));
  const call = (verdict: Verdict, latencyMs = 5): number => {
    const ticket = b.admit();
    if (ticket >= 0) b.settle(ticket, { verdict, latencyMs });
    return ticket;
  };
  const calls = (count: number, verdict: Verdict, o: { latencyMs?: number; gapMs?: number } = {}): void => {
    for (let i = 0; i < count; i++) {
      call(verdict, o.latencyMs);
      if (o.gapMs !== undefined) clock.advance(o.gapMs);
    }
  };
  return { clock, b, changes, call, calls };
}

/** The reasons of the recorded changes, as `from>to:reason` strings (compact to assert on). */
export function transitions(changes: readonly BreakerStateChange[]): string[] {
  return changes.map((c) => `${c.from}>${c.to}:${c.reason}`);
}
