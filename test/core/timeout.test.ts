import { describe, expect, it } from 'vitest';
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
