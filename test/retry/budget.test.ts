import { describe, expect, it } from 'vitest';
import { pipeline } from '../../src/pipeline/pipeline';
import { limiter } from '../../src/limiter/limiter';
import { RETRY_BUDGET_DEFAULTS, retryBudget } from '../../src/retry/budget';
import { retry, type RetryGiveUpEvent } from '../../src/retry/retry';
import { constant, VirtualClock } from './support';

describe('the retry budget', () => {
  it('starts full: 100 retries, then refuses', () => {
    const clock = new VirtualClock();
    const budget = retryBudget({ clock });
    let granted = 0;
    while (budget.tryWithdraw()) granted++;
    expect(granted).toBe(100);
    expect(budget.snapshot()).toMatchObject({ granted: 100, refused: 1 });
  });

  it('earns one retry for every five first-time successes (ratio 0.2)', () => {
    const clock = new VirtualClock();
    const budget = retryBudget({ clock, maxBalance: 1, minRetriesPerSecond: 0 });
    expect(budget.tryWithdraw()).toBe(true);
    for (let i = 0; i < 4; i++) budget.deposit();
    expect(budget.tryWithdraw()).toBe(false);
    budget.deposit();
    expect(budget.tryWithdraw()).toBe(true);
  });

  it('pays every retry its deposits earned, whatever the rounding of their sum (ratio 0.2 and 0.1)', () => {
    for (const [ratio, perRetry] of [
      [0.2, 5],
      [0.1, 10],
    ] as const) {
      const budget = retryBudget({ clock: new VirtualClock(), ratio, minRetriesPerSecond: 0 });
      while (budget.tryWithdraw()) {}
      for (let i = 0; i < 10 * perRetry; i++) budget.deposit();
      let granted = 0;
      while (budget.tryWithdraw()) granted++;
      expect(granted).toBe(10);
      expect(budget.balance).toBeGreaterThanOrEqual(0);
      expect(budget.balance).toBeLessThan(1e-9);
    }
  });

  it('earns minRetriesPerSecond with time alone, and no more than maxBalance', () => {
    const clock = new VirtualClock();
    const budget = retryBudget({ clock, maxBalance: 20, ratio: 0 });
    for (let i = 0; i < 20; i++) budget.tryWithdraw();
    expect(budget.balance).toBe(0);
    clock.advance(500);
    expect(budget.balance).toBe(5);
    clock.advance(60_000);
    expect(budget.balance).toBe(20);
  });

  it('never holds more than maxBalance, however many successes it is given', () => {
    const budget = retryBudget({ clock: new VirtualClock(), maxBalance: 3 });
    for (let i = 0; i < 1_000; i++) budget.deposit();
    expect(budget.balance).toBe(3);
  });

  it('states its defaults with their sources', () => {
    expect(RETRY_BUDGET_DEFAULTS).toEqual({ ratio: 0.2, minRetriesPerSecond: 10, maxBalance: 100 });
  });

  it('stops a retry the budget cannot pay for, with reason budget and the last error', async () => {
    const clock = new VirtualClock();
    const budget = retryBudget({ clock, maxBalance: 1, minRetriesPerSecond: 0 });
    const r = retry({ clock, budget, random: constant(0) });
    const events: RetryGiveUpEvent[] = [];
    r.onGiveUp((e) => events.push(e));
    const first = new Error('first call');
    const second = new Error('second call');
    let attempts = 0;
    // The first call spends the only retry; the second call's first failure finds none.
    await clock.run(
      r.execute(() => {
        attempts++;
        return attempts === 1 ? Promise.reject(first) : 'recovered';
      }),
    );
    const result = await clock.run(r.execute(() => Promise.reject(second)));
    expect(result).toEqual({ ok: false, error: second });
    expect(attempts).toBe(2);
    expect(events).toEqual([{ attempt: 1, verdict: 'failure', reason: 'budget' }]);
    expect(r.snapshot()).toMatchObject({ budgetRefusals: 1, retries: 1, gaveUp: { budget: 1 } });
    expect(budget.snapshot()).toMatchObject({ granted: 1, refused: 1 });
  });

  it('earns only from calls that succeeded on their first attempt', async () => {
    const clock = new VirtualClock();
    const budget = retryBudget({ clock, minRetriesPerSecond: 0 });
    const r = retry({ clock, budget, random: constant(0) });
    await clock.run(r.execute(() => 'first time'));
    let n = 0;
    await clock.run(r.execute(() => (n++ === 0 ? Promise.reject(new Error('once')) : 'on the retry')));
    expect(budget.snapshot().deposits).toBe(1);
  });

  it('is shared: one pipeline’s retries use up another’s', async () => {
    const clock = new VirtualClock();
    const perHost = retryBudget({ clock, maxBalance: 2, minRetriesPerSecond: 0 });
    const users = pipeline(retry({ clock, budget: perHost, random: constant(0) }), limiter({ clock }));
    const orders = pipeline(retry({ clock, budget: perHost, random: constant(0) }), limiter({ clock }));
    let attempts = 0;
    const failing = () => {
      attempts++;
      return Promise.reject(new Error('host down'));
    };
    await clock.run(users.execute(failing)); // 3 attempts: the default maxAttempts, 2 retries spent
    await clock.run(orders.execute(failing)); // 1 attempt: the shared budget is empty
    expect(attempts).toBe(4);
    expect(perHost.snapshot()).toMatchObject({ granted: 2, refused: 1 });
  });

  it('is refused when it reads another clock than the retry policy', () => {
    expect(() => retry({ clock: new VirtualClock(), budget: retryBudget({ clock: new VirtualClock() }) })).toThrow(
      'resilix: retry option "budget" reads another clock than the retry policy; pass the same `clock` to retryBudget() and retry()',
    );
  });

  it('can be turned off', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, budget: false, random: constant(0), maxAttempts: 5 });
    let attempts = 0;
    await clock.run(
      r.execute(() => {
        attempts++;
        return Promise.reject(new Error('x'));
      }),
    );
    expect(attempts).toBe(5);
    expect(r.snapshot().budget).toBeUndefined();
  });

  it('takes budget options for a policy’s own budget', () => {
    const r = retry({ clock: new VirtualClock(), budget: { ratio: 0.1, maxBalance: 10 } });
    expect(r.snapshot().budget).toMatchObject({ ratio: 0.1, maxBalance: 10, minRetriesPerSecond: 10, balance: 10 });
  });
});
