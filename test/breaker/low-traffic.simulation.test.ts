import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/breaker';
import type { BreakerOptions } from '../../src/breaker/options';
import { FakeClock } from '../helpers/fake-clock';
import { mulberry32 } from '../helpers/mulberry32';

/** mulberry32: a small seeded PRNG, so every run of this file sees the same traffic. */
const random = mulberry32;

interface Traffic {
  callsPerMinute: number;
  failureShare: number;
  hours: number;
  seed: number;
}

/**
 * Poisson arrivals at a steady rate against an upstream failing a fixed share of calls (probes
 * included), through the real breaker on a virtual clock. Returns opens from closed per hour and
 * the minute of the first open.
 */
function simulate(
  t: Traffic,
  options: Omit<BreakerOptions, 'clock'> = {},
): { opensPerHour: number; firstOpenMin: number } {
  const clock = new FakeClock();
  const b = breaker({ ...options, clock });
  const next = random(t.seed);
  let opens = 0;
  let firstOpenAt = Infinity;
  b.onOpen((e) => {
    if (e.from !== 'closed') return;
    opens++;
    if (firstOpenAt === Infinity) firstOpenAt = e.at;
  });
  const endMs = t.hours * 3_600_000;
  for (let at = 0; at < endMs; ) {
    at += (-Math.log(1 - next()) * 60_000) / t.callsPerMinute;
    clock.advance(at - clock.now());
    const ticket = b.admit();
    if (ticket >= 0) b.settle(ticket, { verdict: next() < t.failureShare ? 'failure' : 'ok', latencyMs: 100 });
  }
  return { opensPerHour: opens / t.hours, firstOpenMin: firstOpenAt / 60_000 };
}

function medianFirstOpenMin(t: Omit<Traffic, 'seed' | 'hours'>, options: Omit<BreakerOptions, 'clock'> = {}): number {
  const minutes = Array.from(
    { length: 41 },
    (_, i) => simulate({ ...t, hours: 3, seed: 100 + i }, options).firstOpenMin,
  );
  return minutes.sort((a, b) => a - b)[20]!;
}

/** ADR-0021: the numbers behind the low-traffic floor and its confidence bar. */
describe('the breaker at low traffic (seeded simulation)', () => {
  it.each([3, 8])(
    'at %i calls a minute, an upstream failing 20 %% of calls opens it at most 0.05 times an hour',
    (callsPerMinute) => {
      const { opensPerHour } = simulate({ callsPerMinute, failureShare: 0.2, hours: 300, seed: 7 });
      expect(opensPerHour).toBeLessThanOrEqual(0.05);
    },
  );

  it('never opens on an upstream failing 10 % of calls at 8 calls a minute over 300 hours', () => {
    expect(simulate({ callsPerMinute: 8, failureShare: 0.1, hours: 300, seed: 7 }).opensPerHour).toBe(0);
  });

  it('opens on an upstream failing 60 % of calls at 8 calls a minute in a median of under 3 minutes', () => {
    expect(medianFirstOpenMin({ callsPerMinute: 8, failureShare: 0.6 })).toBeLessThan(3);
  });

  it('would take over 20 minutes without the floor, on the consecutive-failure backstop alone', () => {
    expect(medianFirstOpenMin({ callsPerMinute: 8, failureShare: 0.6 }, { lowTrafficMinSamples: 20 })).toBeGreaterThan(
      20,
    );
  });

  it('needs the confidence bar: a plain rate over 5 calls would open on a 20 %-failing upstream over once an hour', () => {
    // lowTrafficMinSamples 5 with minSamples 5 reads the plain rate from 5 calls, as a bare floor would.
    const bare = simulate({ callsPerMinute: 8, failureShare: 0.2, hours: 300, seed: 7 }, { minSamples: 5 });
    expect(bare.opensPerHour).toBeGreaterThan(1);
  });
});
