import { describe, expect, it } from 'vitest';
import { decorrelatedJitterMs, fullJitterMs } from '../../src/retry/backoff';
import { retry } from '../../src/retry/retry';
import { constant, VirtualClock } from './support';

describe('backoff with jitter (AWS Architecture Blog, "Exponential Backoff And Jitter")', () => {
  it('draws full jitter under a ceiling that doubles per retry from baseDelayMs', () => {
    expect([1, 2, 3, 4].map((n) => fullJitterMs(n, 100, 20_000, 0.5))).toEqual([50, 100, 200, 400]);
    expect(fullJitterMs(1, 100, 20_000, 0)).toBe(0);
  });

  it('caps full jitter’s ceiling at maxDelayMs, even for a huge retry number', () => {
    expect(fullJitterMs(20, 100, 20_000, 0.5)).toBe(10_000);
    expect(fullJitterMs(5_000, 100, 20_000, 0.5)).toBe(10_000);
  });

  it('draws decorrelated jitter between baseDelayMs and three times the previous wait, capped', () => {
    expect(decorrelatedJitterMs(100, 100, 20_000, 0)).toBe(100);
    expect(decorrelatedJitterMs(100, 100, 20_000, 0.5)).toBe(200);
    expect(decorrelatedJitterMs(1_000, 100, 20_000, 0.5)).toBe(1_550);
    expect(decorrelatedJitterMs(10_000, 100, 20_000, 0.99)).toBe(20_000);
  });

  it('arms one timer per wait with the drawn delay (exponential by default)', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0.5), budget: false, maxAttempts: 4 });
    await clock.run(r.execute(() => Promise.reject(new Error('down'))));
    expect(clock.armed).toEqual([50, 100, 200]);
    expect(clock.now()).toBe(350);
  });

  it('grows decorrelated waits from the previous wait', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0.5), budget: false, maxAttempts: 4, backoff: 'decorrelated' });
    await clock.run(r.execute(() => Promise.reject(new Error('down'))));
    expect(clock.armed).toEqual([200, 350, 575]);
  });

  it('never waits longer than maxDelayMs', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0.999), budget: false, maxAttempts: 6, maxDelayMs: 300 });
    await clock.run(r.execute(() => Promise.reject(new Error('down'))));
    expect(Math.max(...clock.armed)).toBeLessThanOrEqual(300);
    expect(clock.armed).toHaveLength(5);
  });
});
