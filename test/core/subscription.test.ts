import { describe, expect, it } from 'vitest';
import { breaker, bulkhead, KeyRegistry, limiter, pipeline, type Subscription } from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';

/** Two failures trip a breaker with minSamples 2 (and consecutiveFailures 2). */
async function trip(b: ReturnType<typeof breaker>): Promise<void> {
  for (let i = 0; i < 2; i++) {
    await b
      .execute(() => {
        throw new Error('down');
      })
      .catch(() => undefined);
  }
}

describe('subscriptions ([Symbol.dispose], for `using`)', () => {
  it('ends only its own subscription when one function is subscribed twice', async () => {
    const b = bulkhead({ maxConcurrent: 1 });
    let heard = 0;
    const count = (): void => {
      heard++;
    };
    const first = b.onSettle(count);
    b.onSettle(count);
    await b.execute(() => 1);
    expect(heard).toBe(2);
    first.dispose();
    first.dispose(); // a second dispose is a no-op, not the other subscription's end
    heard = 0;
    await b.execute(() => 1);
    expect(heard).toBe(1);
  });

  it('stops a breaker listener when the `using` block that holds it ends', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock, minSamples: 2, openMs: 10 });
    const heard: string[] = [];
    {
      using _open = b.onOpen(({ to }) => heard.push(to));
      await trip(b);
    }
    clock.advance(10);
    b.reset();
    await trip(b);
    expect(heard).toEqual(['open']);
  });

  it('stops a pipeline onSettle listener when its `using` block ends', async () => {
    const p = pipeline(bulkhead({ maxConcurrent: 1 }));
    const verdicts: string[] = [];
    {
      using _settled = p.onSettle((o) => verdicts.push(o.verdict));
      await p.execute(() => 'inside');
    }
    await p.execute(() => 'after');
    expect(verdicts).toEqual(['ok']);
  });

  it('releases a breaker isolation when its `using` block ends', () => {
    const b = breaker();
    {
      using _hold = b.isolate();
      expect(b.state).toBe('isolated');
    }
    expect(b.state).toBe('closed');
  });

  it('is one disposal whichever way it is called: dispose() then [Symbol.dispose]() releases one hold', () => {
    const b = breaker();
    const first = b.isolate();
    const second = b.isolate();
    first.dispose();
    first[Symbol.dispose]();
    expect(b.state).toBe('isolated');
    second[Symbol.dispose]();
    expect(b.state).toBe('closed');
  });

  it('gives every event source the same Subscription shape', () => {
    const registry = new KeyRegistry({ create: () => bulkhead({ maxConcurrent: 1 }) });
    const handles: Subscription[] = [
      breaker().onStateChange(() => undefined),
      limiter().onLimitChange(() => undefined),
      registry.onEvict(() => undefined),
      pipeline(bulkhead({ maxConcurrent: 1 })).onSettle(() => undefined),
    ];
    for (const handle of handles) {
      expect(typeof handle.dispose).toBe('function');
      expect(handle[Symbol.dispose]).toBe(handle.dispose);
    }
  });
});
