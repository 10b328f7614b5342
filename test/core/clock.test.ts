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
