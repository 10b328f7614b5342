import { describe, expect, it } from 'vitest';
import { resolveClock, systemClock } from '../../src/core/clock';

describe('the clock seam', () => {
  it('defaults to the system clock', () => {
    expect(resolveClock(undefined, 'x')).toBe(systemClock);
    const a = systemClock.now();
    expect(systemClock.now()).toBeGreaterThanOrEqual(a);
  });

  it('resolves one user clock to one object, so policies can be checked for sharing it', () => {
    const clock = { now: () => 1 };
    expect(resolveClock(clock, 'x')).toBe(resolveClock(clock, 'y'));
  });

  it('never lets time run backwards or become NaN', () => {
    const readings = [10, 5, Number.NaN, 12, Number.NEGATIVE_INFINITY, 13];
    const clock = resolveClock({ now: () => readings.shift()! }, 'x');
    expect([clock.now(), clock.now(), clock.now(), clock.now(), clock.now(), clock.now()]).toEqual([
      10, 10, 10, 12, 12, 13,
    ]);
  });

  it('ignores a +Infinity reading like NaN instead of keeping it for ever', () => {
    const readings = [100, Number.POSITIVE_INFINITY, 150, 160];
    const clock = resolveClock({ now: () => readings.shift()! }, 'x');
    expect([clock.now(), clock.now(), clock.now(), clock.now()]).toEqual([100, 100, 150, 160]);
  });

  it('ignores a reading that is not a number', () => {
    const readings: unknown[] = [100, '500', 10n, undefined, 120];
    const clock = resolveClock({ now: () => readings.shift() as number }, 'x');
    expect([clock.now(), clock.now(), clock.now(), clock.now(), clock.now()]).toEqual([100, 100, 100, 100, 120]);
  });

  it('follows a monotonic clock whose readings are negative', () => {
    const readings = [-5_000, -4_990, -10, 0, 25];
    const clock = resolveClock({ now: () => readings.shift()! }, 'x');
    expect([clock.now(), clock.now(), clock.now(), clock.now(), clock.now()]).toEqual([-5_000, -4_990, -10, 0, 25]);
  });

  it('repeats the last reading when now() throws, and reports the error', () => {
    const reported: unknown[] = [];
    const original = (globalThis as { reportError?: unknown }).reportError;
    (globalThis as { reportError?: unknown }).reportError = (e: unknown) => reported.push(e);
    try {
      const boom = new Error('clock broke');
      let calls = 0;
      const clock = resolveClock(
        {
          now: () => {
            calls++;
            if (calls === 2) throw boom;
            return calls * 10;
          },
        },
        'x',
      );
      expect([clock.now(), clock.now(), clock.now()]).toEqual([10, 10, 30]);
      expect(reported).toEqual([boom]);
    } finally {
      (globalThis as { reportError?: unknown }).reportError = original;
    }
  });

  it('reads 0 for a faulty reading before the first good one, and holds there until the clock passes it', () => {
    const readings = [Number.NaN, -20, 5];
    const clock = resolveClock({ now: () => readings.shift()! }, 'x');
    expect([clock.now(), clock.now(), clock.now()]).toEqual([0, 0, 5]);
  });

  it("arms unref'd platform timers that can be cleared", async () => {
    let fired = false;
    const handle = systemClock.setTimer(() => {
      fired = true;
    }, 1);
    systemClock.clearTimer(handle);
    await new Promise((r) => setTimeout(r, 5));
    expect(fired).toBe(false);
  });
});
