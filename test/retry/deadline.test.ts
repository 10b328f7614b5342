import { describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/core/call';
import { TimeoutError } from '../../src/errors/index';
import { pipeline } from '../../src/pipeline/pipeline';
import { retry, type RetryGiveUpEvent } from '../../src/retry/retry';
import { timeout } from '../../src/timeout/timeout';
import { constant, flush, response, VirtualClock } from './support';

/** fn that fails `afterMs` after it starts, and records each attempt's start and its deadline signal. */
function failingAfter(clock: VirtualClock, afterMs: number) {
  const startedAt: number[] = [];
  const fn = (ctx: CallContext) => {
    startedAt.push(clock.now());
    void ctx.signal;
    return new Promise<never>((_resolve, reject) => clock.setTimer(() => reject(new Error('boom')), afterMs));
  };
  return { fn, startedAt };
}

describe('retries and the caller’s deadline', () => {
  it('does not start a retry that could not run as long as the last attempt before the deadline', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0), budget: false });
    const events: RetryGiveUpEvent[] = [];
    r.onGiveUp((e) => events.push(e));
    const { fn, startedAt } = failingAfter(clock, 600);
    const result = await clock.run(r.execute(fn, { timeoutMs: 1_000 }));
    // At 600 ms, 400 ms are left: less than the 600 ms the first attempt took.
    expect(startedAt).toEqual([0]);
    expect((result as { error: Error }).error.message).toBe('boom');
    expect(events).toEqual([{ attempt: 1, verdict: 'failure', reason: 'deadline' }]);
    expect(clock.now()).toBe(600);
  });

  it('does not start a wait that ends past the deadline', async () => {
    const clock = new VirtualClock();
    // random 0.999: the first wait is ~100 ms; an attempt fails at 1 ms and the budget is 50 ms.
    const r = retry({ clock, random: constant(0.999), budget: false });
    const { fn, startedAt } = failingAfter(clock, 1);
    await clock.run(r.execute(fn, { timeoutMs: 50 }));
    expect(startedAt).toEqual([0]);
    expect(r.snapshot().gaveUp.deadline).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('gives a retry what is left of the budget when that is shorter than the timeout policy’s', async () => {
    const clock = new VirtualClock();
    const p = pipeline(retry({ clock, random: constant(0), budget: false }), timeout({ timeoutMs: 1_000, clock }));
    const deadlines: number[] = [];
    const startedAt: number[] = [];
    const result = await clock.run(
      p.execute(
        (ctx) => {
          startedAt.push(clock.now());
          ctx.signal.addEventListener('abort', () => deadlines.push(clock.now()));
          return startedAt.length === 1
            ? new Promise((_resolve, reject) => clock.setTimer(() => reject(new Error('fast 5xx')), 400))
            : new Promise(() => {});
        },
        { timeoutMs: 1_200 },
      ),
    );
    // Attempt 2 starts at 400 ms with 800 ms left: its deadline is at 1 200 ms, not at 1 400.
    expect(startedAt).toEqual([0, 400]);
    expect(deadlines).toEqual([1_200]);
    expect((result as { error: unknown }).error).toBeInstanceOf(TimeoutError);
    expect(((result as { error: TimeoutError }).error as TimeoutError).timeoutMs).toBe(800);
  });

  it('gives the first attempt the timeout policy’s timeoutMs when the call’s budget is longer', async () => {
    const clock = new VirtualClock();
    const p = pipeline(
      retry({ clock, random: constant(0), budget: false, maxAttempts: 2 }),
      timeout({ timeoutMs: 100, clock }),
    );
    const startedAt: number[] = [];
    await clock.run(
      p.execute(
        () => {
          startedAt.push(clock.now());
          return new Promise(() => {});
        },
        { timeoutMs: 10_000 },
      ),
    );
    expect(startedAt).toEqual([0, 100]);
    expect(clock.now()).toBe(200);
  });

  it('keeps the timeout policy’s per-attempt deadline when the call’s timeoutMs is Infinity', async () => {
    const clock = new VirtualClock();
    const p = pipeline(
      retry({ clock, random: constant(0), budget: false, maxAttempts: 2 }),
      timeout({ timeoutMs: 100, clock }),
    );
    const result = await clock.run(p.execute(() => new Promise(() => {}), { timeoutMs: Infinity }));
    expect((result as { error: unknown }).error).toBeInstanceOf(TimeoutError);
    expect(clock.now()).toBe(200);
  });

  it('rejects a bad timeoutMs before any attempt, as execute does without a retry', async () => {
    const clock = new VirtualClock();
    let attempts = 0;
    const result = await clock.run(
      retry({ clock }).execute(
        () => {
          attempts++;
          return 'x';
        },
        { timeoutMs: -1 },
      ),
    );
    expect((result as { error: Error }).error).toBeInstanceOf(RangeError);
    expect((result as { error: Error }).error.message).toBe(
      'resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received -1',
    );
    expect(attempts).toBe(0);
  });
});

describe('retries and the caller’s signal', () => {
  it('rejects at once with the caller’s reason when it aborts during a backoff wait, and leaves no timer armed', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0.5), baseDelayMs: 1_000, budget: { maxBalance: 5 } });
    const controller = new AbortController();
    let attempts = 0;
    let settled: unknown;
    const call = r.execute(
      () => {
        attempts++;
        return Promise.reject(new Error('boom'));
      },
      { signal: controller.signal },
    );
    call.catch((e: unknown) => {
      settled = e;
    });
    await flush();
    expect(clock.pendingTimers).toBe(1); // the 500 ms backoff wait
    const reason = new Error('user navigated away');
    controller.abort(reason);
    await flush();
    expect(settled).toBe(reason);
    expect(clock.now()).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(attempts).toBe(1);
    expect(r.snapshot().abortedInBackoff).toBe(1);
    // The retry that was never made is given back to the budget.
    expect(r.snapshot().budget!.balance).toBe(5);
    expect(r.snapshot().budget!.granted).toBe(0);
  });

  it('does not start at all when the signal is already aborted', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const reason = new Error('gone');
    controller.abort(reason);
    let attempts = 0;
    const result = await clock.run(
      retry({ clock }).execute(
        () => {
          attempts++;
          return 'x';
        },
        { signal: controller.signal },
      ),
    );
    expect(result).toEqual({ ok: false, error: reason });
    expect(attempts).toBe(0);
  });

  it('passes the caller’s signal to every attempt', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const seen: boolean[] = [];
    let n = 0;
    await clock.run(
      retry({ clock, random: constant(0), budget: false }).execute(
        (ctx) => {
          seen.push(ctx.signal === controller.signal);
          return n++ === 0 ? Promise.reject(new Error('once')) : 'ok';
        },
        { signal: controller.signal },
      ),
    );
    expect(seen).toEqual([true, true]);
  });
});

describe('the backoff wait timer', () => {
  it('is ref’d where the platform can (a pending retry keeps a Node process alive)', async () => {
    const refs: number[] = [];
    let time = 0;
    const pending: Array<() => void> = [];
    const clock = {
      now: () => time,
      setTimer: (callback: () => void, delayMs: number) => {
        pending.push(callback);
        return { delayMs, ref: () => refs.push(delayMs) };
      },
      clearTimer: () => {},
    };
    const r = retry({ clock, random: constant(0.5), budget: false, maxAttempts: 2 });
    let n = 0;
    const call = r.execute(() => (n++ === 0 ? Promise.reject(new Error('blip')) : 'ok'));
    await flush();
    expect(refs).toEqual([50]);
    time = 50;
    pending.shift()!();
    await expect(call).resolves.toBe('ok');
  });
});

describe('a backoff wait past one timer’s reach', () => {
  it('waits a Retry-After of 30 days in steps no longer than a platform timer takes', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0), budget: false, maxDelayMs: 40 * 86_400_000 });
    const startedAt: number[] = [];
    const thirtyDaysS = 30 * 86_400;
    const call = r.execute(() => {
      startedAt.push(clock.now());
      return startedAt.length === 1 ? response(503, String(thirtyDaysS)) : response(200);
    });
    const result = await clock.run(call);
    expect(result).toEqual({ ok: true, value: response(200) });
    expect(startedAt).toEqual([0, thirtyDaysS * 1_000]);
    // 2^31 - 1 ms: a longer setTimeout fires at once (Node warns, browsers and workerd say nothing).
    expect(Math.max(...clock.armed)).toBeLessThanOrEqual(2_147_483_647);
    expect(clock.armed.length).toBeGreaterThan(1);
  });

  it('clears the step armed when the caller aborts, and rejects with the reason', async () => {
    const clock = new VirtualClock();
    const r = retry({ clock, random: constant(0), budget: false, maxDelayMs: 40 * 86_400_000 });
    const controller = new AbortController();
    const call = r.execute(() => response(503, String(30 * 86_400)), { signal: controller.signal });
    await flush();
    clock.advance(2_147_483_647); // the first step ran out; the second is armed
    await flush();
    expect(clock.armed).toEqual([2_147_483_647, 30 * 86_400_000 - 2_147_483_647]);
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('caller left');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(clock.pendingTimers).toBe(0);
    expect(r.snapshot().abortedInBackoff).toBe(1);
  });
});
