import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/index';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { CallContext } from '../../src/core/call';
import { isTimeoutError } from '../../src/errors/timeout-error';
import { limiter } from '../../src/limiter/limiter';
import type { QueueOrder } from '../../src/limiter/wait-queue';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { deferred, FakeClock, flush } from '../helpers/fake-clock';

/**
 * Issue 11: the five bugs peers shipped, each shown not to happen in resilix, end to end through
 * pipeline(breaker(), limiter(), bulkhead(), timeout()) with default breaker options. The unit-level
 * versions live in test/breaker/trip.test.ts, test/core/timeout.test.ts and
 * test/limiter/admission/abort.test.ts; these prove the whole pipeline keeps the property.
 */
function rig(options: { limit?: number; maxConcurrent?: number; timeoutMs?: number; queueOrder?: QueueOrder } = {}) {
  const clock = new FakeClock();
  const b = breaker({ clock });
  const limit = options.limit ?? 1;
  const l = limiter({
    clock,
    algorithm: 'fixed',
    initialLimit: limit,
    minLimit: 1,
    maxLimit: limit,
    ...(options.queueOrder === undefined ? {} : { queueOrder: options.queueOrder }),
  });
  const bh = bulkhead({ maxConcurrent: options.maxConcurrent ?? 10, clock });
  const p = pipeline(b, l, bh, timeout({ timeoutMs: options.timeoutMs ?? 100, clock }));
  const fail = () => p.execute(() => Promise.reject(new Error('503'))).catch(() => 'failed');
  const succeed = () => p.execute(async () => 'ok');
  return { clock, b, l, bh, p, fail, succeed };
}

describe('peer regressions, end to end through the full pipeline', () => {
  it('does not count failures from before an idle gap (17 of 19 failed, 61 s idle, then 1 failure: stays closed)', async () => {
    const { clock, b, fail, succeed } = rig();
    for (let i = 0; i < 9; i++) await fail();
    await succeed();
    for (let i = 0; i < 8; i++) await fail();
    await succeed();
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 19, failures: 17 });
    clock.advance(61_000);
    await fail();
    // Counting the old calls, 18 of 20 would have failed: 90 %, over the 50 % threshold.
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 1, failures: 1 });
    await expect(succeed()).resolves.toBe('ok');
  });

  it('does not trip on the first failure of a new pipeline', async () => {
    const { b, p, fail } = rig();
    await fail();
    expect(b.state).toBe('closed');
    let ran = false;
    await p.execute(() => {
      ran = true;
      return 'second';
    });
    expect(ran).toBe(true);
  });

  it('does not free the slot at the deadline while the timed-out call still runs', async () => {
    const { clock, l, bh, p } = rig({ limit: 1, maxConcurrent: 1, timeoutMs: 100 });
    const work = deferred<string>();
    const first = p.execute(() => work.promise);
    const firstOutcome = first.catch((e: unknown) => e);
    await flush();
    clock.advance(100);
    expect(isTimeoutError(await firstOutcome)).toBe(true);
    // The caller heard, but the upstream is still working: the slot stays taken.
    expect([l.inflight, bh.active]).toEqual([1, 1]);
    let secondRanAt = -1;
    const second = p.execute(
      () => {
        secondRanAt = clock.now();
        return 'second';
      },
      { timeoutMs: 1_000 },
    );
    await flush();
    expect(secondRanAt).toBe(-1);
    expect(l.queued).toBe(1);
    clock.advance(50);
    work.resolve('late');
    await expect(second).resolves.toBe('second');
    expect(secondRanAt).toBe(150);
    expect([l.inflight, bh.active]).toEqual([0, 0]);
  });

  it("does not abort the other calls when one call's deadline passes", async () => {
    const { clock, p } = rig({ limit: 3, timeoutMs: 1_000 });
    const contexts: CallContext[] = [];
    const works = [deferred<string>(), deferred<string>(), deferred<string>()];
    const calls = works.map((w, i) =>
      p.execute(
        (ctx) => {
          contexts.push(ctx);
          return w.promise;
        },
        i === 0 ? { timeoutMs: 50 } : undefined,
      ),
    );
    const firstOutcome = calls[0]!.catch((e: unknown) => e);
    await flush();
    // read every signal before the deadline, so each call holds its own controller
    const signals = contexts.map((c) => c.signal);
    clock.advance(50);
    expect(isTimeoutError(await firstOutcome)).toBe(true);
    expect(signals.map((s) => s.aborted)).toEqual([true, false, false]);
    works[1]!.resolve('b');
    works[2]!.resolve('c');
    await expect(calls[1]).resolves.toBe('b');
    await expect(calls[2]).resolves.toBe('c');
    works[0]!.resolve('late');
  });

  for (const queueOrder of ['fifo', 'lifo'] as const) {
    it(`does not starve the queue after a waiter aborts (${queueOrder})`, async () => {
      const { l, p } = rig({ limit: 1, timeoutMs: 10_000, queueOrder });
      const running = deferred<string>();
      const first = p.execute(() => running.promise);
      const leaving = new AbortController();
      const aborted = p.execute(() => 'never runs', { signal: leaving.signal }).catch((e: unknown) => e);
      const order: string[] = [];
      const waiter = (name: string) =>
        p.execute(() => {
          order.push(name);
          return name;
        });
      const before = waiter('before');
      await flush();
      expect([l.inflight, l.queued]).toEqual([1, 2]);
      leaving.abort(new Error('caller left'));
      expect(((await aborted) as Error).message).toBe('caller left');
      expect([l.inflight, l.queued]).toEqual([1, 1]);
      const after = waiter('after');
      await flush();
      expect([l.inflight, l.queued]).toEqual([1, 2]);
      running.resolve('done');
      await first;
      expect(await Promise.all([before, after])).toEqual(['before', 'after']);
      expect(order).toEqual(queueOrder === 'fifo' ? ['before', 'after'] : ['after', 'before']);
      expect([l.inflight, l.queued]).toEqual([0, 0]);
      // and the next call runs at once
      await expect(p.execute(() => 'next')).resolves.toBe('next');
    });
  }
});
