import { describe, expect, it } from 'vitest';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { KeyRegistry } from '../../src/registry/key-registry';
import { retryBudget } from '../../src/retry/budget';
import { retry } from '../../src/retry/retry';
import { constant, flush, VirtualClock } from './support';

describe('retry in a KeyRegistry', () => {
  it('keeps a key busy while one of its calls waits to retry, so it is not evicted mid-call', async () => {
    const clock = new VirtualClock();
    const registry = new KeyRegistry({
      maxKeys: 1,
      create: () => pipeline(retry({ clock, random: constant(0.5) }), limiter({ clock })),
    });
    const waiting = registry.get('a').execute(() => Promise.reject(new Error('down')));
    waiting.catch(() => {});
    await flush();
    expect(clock.pendingTimers).toBe(1); // the backoff wait; the limiter holds nothing now
    expect(registry.isBusy('a')).toBe(true);
    expect(() => registry.get('b')).toThrow(/TooManyKeys|full|busy/i);
    await clock.run(waiting.catch(() => 'done'));
    expect(registry.isBusy('a')).toBe(false);
  });

  it('shares one budget per host between the pipelines of several routes', async () => {
    const clock = new VirtualClock();
    const budgets = new Map<string, ReturnType<typeof retryBudget>>();
    const budgetFor = (host: string) => {
      let budget = budgets.get(host);
      if (budget === undefined) {
        budget = retryBudget({ clock, maxBalance: 1, minRetriesPerSecond: 0 });
        budgets.set(host, budget);
      }
      return budget;
    };
    const registry = new KeyRegistry({
      create: (key) => pipeline(retry({ clock, random: constant(0), budget: budgetFor(key.split(' ')[0]!) })),
    });
    let attempts = 0;
    const failing = () => {
      attempts++;
      return Promise.reject(new Error('host down'));
    };
    await clock.run(registry.execute('api.example.com /users', failing).catch(() => 'x'));
    await clock.run(registry.execute('api.example.com /orders', failing).catch(() => 'x'));
    await clock.run(registry.execute('other.example.com /orders', failing).catch(() => 'x'));
    // api.example.com /users: 2 attempts (its host's one retry), /orders: 1 (none left for the host);
    // other.example.com has a budget of its own: 2.
    expect(attempts).toBe(5);
    expect(budgets.get('api.example.com')!.snapshot()).toMatchObject({ granted: 1, refused: 2 });
    expect(budgets.get('other.example.com')!.snapshot()).toMatchObject({ granted: 1, refused: 1 });
  });
});
