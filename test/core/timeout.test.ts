import { describe, expect, it, vi } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { TimeoutError, isTimeoutError } from '../../src/errors/index';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

describe('the timeout policy', () => {
  it('rejects with a TimeoutError at the deadline and aborts ctx.signal with it', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    let seen: AbortSignal | undefined;
    const call = t.execute((ctx) => {
      seen = ctx.signal;
      return new Promise(() => {});
    });
    clock.advance(99);
    await flush();
    expect(seen!.aborted).toBe(false);
    clock.advance(1);
    const error = await call.catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect((error as TimeoutError).timeoutMs).toBe(100);
    expect((error as TimeoutError).queued).toBe(false);
    expect(seen!.aborted).toBe(true);
    expect(seen!.reason).toBe(error);
    expect(t.snapshot().timedOut).toBe(1);
  });

  it('hands work that reads ctx.signal only after the call settled an aborted signal, when the deadline ended it', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    const work = deferred<number>();
    let ctx: { signal: AbortSignal } | undefined;
    const call = t.execute((c) => {
      ctx = c;
      return work.promise;
    });
    clock.advance(100);
    const error = await call.catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    work.resolve(1); // the detached work ends; the call settles as timed out
    await flush();
    expect(ctx!.signal.aborted).toBe(true); // first read now
    expect(ctx!.signal.reason).toBe(error);
  });

  it('lets a per-call timeoutMs override the policy default', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 1000, clock });
    const call = t.execute(() => new Promise(() => {}), { timeoutMs: 10 });
    clock.advance(10);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
  });

  it('keeps the caller reason when the caller aborts', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 1000, clock });
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    const call = t.execute(
      (ctx) => {
        seen = ctx.signal;
        return new Promise(() => {});
      },
      { signal: controller.signal },
    );
    const reason = new DOMException('navigated away', 'AbortError');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(seen!.reason).toBe(reason);
    expect(clock.pendingTimers).toBe(0);
  });

  it('never aborts the signal after a success, so a body can still be read', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    let seen: AbortSignal | undefined;
    await t.execute((ctx) => {
      seen = ctx.signal;
      return 'headers';
    });
    clock.advance(1000);
    expect(seen!.aborted).toBe(false);
    expect(clock.pendingTimers).toBe(0);
  });

  it('keeps the bulkhead slot of a timed-out call until the work really settles', async () => {
    const clock = new FakeClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(b, timeout({ timeoutMs: 50, clock }));
    const stubborn = deferred();
    const call = p.execute(() => stubborn.promise); // ignores its signal
    clock.advance(50);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
    expect(b.active).toBe(1);
    await expect(p.execute(() => 'second')).rejects.toThrowError(/bulkhead is full/);
    stubborn.resolve('finally');
    await flush();
    expect(b.active).toBe(0);
    await expect(p.execute(() => 'third')).resolves.toBe('third');
  });

  it('tells the breaker `timeout` at the deadline, even when the work never settles', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock); // sits in the breaker's place
    const b = bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(spy, b, timeout({ timeoutMs: 20, clock }));
    const stubborn = deferred();
    const call = p.execute(() => stubborn.promise);
    clock.advance(20);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
    expect(spy.observations).toHaveLength(1);
    expect(spy.observations[0]).toMatchObject({ verdict: 'timeout', latencyMs: 20, durationMs: 20 });
    expect(b.active).toBe(1);
    clock.advance(5);
    stubborn.resolve('ok after all');
    await flush();
    expect(spy.observations).toHaveLength(1); // exactly one, even though the work later succeeded
    expect(b.active).toBe(0);
  });

  it('does not abort other calls when one call times out', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 1000, clock });
    const signals: AbortSignal[] = [];
    const slow = t.execute(
      (ctx) => {
        signals.push(ctx.signal);
        return new Promise(() => {});
      },
      { timeoutMs: 10 },
    );
    const steady = deferred<string>();
    const other = t.execute((ctx) => {
      signals.push(ctx.signal);
      return steady.promise;
    });
    clock.advance(10);
    await expect(slow).rejects.toBeInstanceOf(TimeoutError);
    expect(signals.map((s) => s.aborted)).toEqual([true, false]);
    steady.resolve('fine');
    await expect(other).resolves.toBe('fine');
  });

  it('creates no AbortController for a call that never reads ctx.signal', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    const original = globalThis.AbortController;
    let created = 0;
    globalThis.AbortController = class extends original {
      constructor() {
        super();
        created++;
      }
    };
    try {
      await t.execute(() => 1);
      await t.execute((ctx) => ctx.signal.aborted);
    } finally {
      globalThis.AbortController = original;
    }
    expect(created).toBe(1);
  });

  it('hands the caller signal straight through when there is no deadline', async () => {
    const spy = spyPolicy();
    const controller = new AbortController();
    let seen: AbortSignal | undefined;
    await spy.execute(
      (ctx) => {
        seen = ctx.signal;
      },
      { signal: controller.signal },
    );
    expect(seen).toBe(controller.signal);
  });
});

/** A fake clock that clamps timers the way the platform does: a delay above 2^31 - 1 ms fires after 1 ms. */
class PlatformLikeClock extends FakeClock {
  readonly delays: number[] = [];
  override setTimer(callback: () => void, delayMs: number): number {
    this.delays.push(delayMs);
    return super.setTimer(callback, delayMs > 2 ** 31 - 1 ? 1 : delayMs);
  }
}

describe('deadlines longer than a platform timer, 2^31 - 1 ms (issue 15, defect 2)', () => {
  it('does not time a call out early on the platform timers when timeoutMs is 2^31', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const t = timeout({ timeoutMs: 2 ** 31 });
      let outcome = 'running';
      const call = t
        .execute(() => new Promise(() => {}))
        .catch((e: unknown) => {
          outcome = (e as Error).message;
        });
      vi.advanceTimersByTime(1);
      await flush();
      expect(outcome).toBe('running');
      vi.advanceTimersByTime(2 ** 31 - 2);
      await flush();
      expect(outcome).toBe('running');
      vi.advanceTimersByTime(1);
      await call;
      expect(outcome).toBe('resilix: the call timed out after 2147483648 ms');
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('times a per-call timeoutMs of 1e12 out at exactly 1e12 ms, arming no timer above 2^31 - 1 ms', async () => {
    const clock = new PlatformLikeClock();
    const p = pipeline(spyPolicy(clock), timeout({ timeoutMs: 100, clock }));
    let outcome = 'running';
    const call = p
      .execute(() => new Promise(() => {}), { timeoutMs: 1e12 })
      .catch((e: unknown) => {
        outcome = (e as Error).message;
      });
    clock.advance(1e12 - 1);
    await flush();
    expect(outcome).toBe('running');
    clock.advance(1);
    await call;
    expect(outcome).toBe('resilix: the call timed out after 1000000000000 ms');
    expect(Math.max(...clock.delays)).toBe(2 ** 31 - 1);
    expect(clock.delays).toHaveLength(Math.ceil(1e12 / (2 ** 31 - 1)));
    expect(clock.pendingTimers).toBe(0);
  });

  it('clears a long deadline when the call settles first, whichever step is armed', async () => {
    const clock = new PlatformLikeClock();
    const t = timeout({ timeoutMs: 2 ** 33, clock });
    const work = deferred<string>();
    const call = t.execute(() => work.promise);
    clock.advance(2 ** 32); // two steps have run out
    expect(clock.pendingTimers).toBe(1);
    work.resolve('done');
    await expect(call).resolves.toBe('done');
    expect(clock.pendingTimers).toBe(0);
    expect(t.snapshot().timedOut).toBe(0);
  });

  it('arms a deadline at or under 2^31 - 1 ms as one timer', async () => {
    const clock = new PlatformLikeClock();
    const t = timeout({ timeoutMs: 2 ** 31 - 1, clock });
    const call = t.execute(() => new Promise(() => {})).catch((e: unknown) => e);
    clock.advance(2 ** 31 - 1);
    expect(isTimeoutError(await call)).toBe(true);
    expect(clock.delays).toEqual([2 ** 31 - 1]);
  });
});
