import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  breaker,
  bulkhead,
  isBulkheadFullError,
  isLimitExceededError,
  limiter,
  pipeline,
  retry,
  timeout,
  type Observation,
  type RefusalEvent,
} from '../../src/index';
import { deferred, FakeClock, flush } from '../helpers/fake-clock';

/** Copies of what a listener heard (the Observation is reused by the runner). */
function heard<T extends object>(): { events: T[]; listener: (event: T) => void } {
  const events: T[] = [];
  return { events, listener: (event) => events.push({ ...event }) };
}

const refusalShape = (r: RefusalEvent) => ({
  policy: r.policy,
  reason: r.reason,
  retryAfterMs: r.retryAfterMs,
  attempt: r.attempt,
  queuedMs: r.queuedMs,
});

afterEach(() => {
  vi.restoreAllMocks();
});

describe('per-call events: a settled call', () => {
  it('gives pipeline.onSettle every call that ran, with its Observation, after the policies learned from it', async () => {
    const clock = new FakeClock();
    const guard = breaker({ clock });
    const p = pipeline(guard, limiter({ clock }));
    const { events, listener } = heard<Observation>();
    let samplesWhenHeard = -1;
    p.onSettle((o) => {
      listener(o);
      samplesWhenHeard = guard.snapshot().samples;
    });
    await p.execute(() => {
      clock.advance(40);
      return 'ok';
    });
    await p
      .execute(
        () => {
          clock.advance(7);
          throw new Error('upstream 500');
        },
        { attempt: 2 },
      )
      .catch(() => undefined);
    expect(events).toEqual([
      { verdict: 'ok', latencyMs: 40, durationMs: 40, queuedMs: 0, inflight: 1, retryAfterMs: undefined, attempt: 1 },
      {
        verdict: 'failure',
        latencyMs: 7,
        durationMs: 7,
        queuedMs: 0,
        inflight: 1,
        retryAfterMs: undefined,
        attempt: 2,
      },
    ]);
    expect(samplesWhenHeard).toBe(2);
  });

  it('hands every listener the one Observation object the runner reuses: valid only during the listener', async () => {
    const p = pipeline(limiter({ clock: new FakeClock() }));
    const seen: Observation[] = [];
    p.onSettle((o) => seen.push(o));
    await p.execute(() => 'first');
    await p.execute(() => 'second');
    expect(seen).toHaveLength(2);
    expect(seen[0]).toBe(seen[1]);
  });

  it("gives a policy's onSettle the calls it admitted in any pipeline, and its own calls", async () => {
    const clock = new FakeClock();
    const shared = limiter({ clock });
    const a = pipeline(breaker({ clock }), shared);
    const b = pipeline(shared, timeout({ timeoutMs: 1_000, clock }));
    const verdicts: string[] = [];
    shared.onSettle((o) => verdicts.push(`${o.verdict}:${o.attempt}`));
    await a.execute(() => 'a');
    await b.execute(() => 'b', { attempt: 2 });
    await shared.execute(() => 'alone', { attempt: 3 });
    expect(verdicts).toEqual(['ok:1', 'ok:2', 'ok:3']);
  });

  it('reaches the policies innermost first, then the pipeline', async () => {
    const clock = new FakeClock();
    const policies = [breaker({ clock }), limiter({ clock }), bulkhead({ maxConcurrent: 2, clock })] as const;
    const t = timeout({ timeoutMs: 1_000, clock });
    const p = pipeline(...policies, t);
    const order: string[] = [];
    p.onSettle(() => order.push('pipeline'));
    for (const policy of [...policies, t]) policy.onSettle(() => order.push(policy.kind));
    await p.execute(() => 'ok');
    expect(order).toEqual(['timeout', 'bulkhead', 'limiter', 'breaker', 'pipeline']);
  });

  it('reports our deadline as a settled call with verdict timeout, when the work settles', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    const p = pipeline(limiter({ clock }), t);
    const { events, listener } = heard<Observation>();
    t.onSettle(listener);
    const work = deferred<string>();
    const pending = p.execute(() => work.promise).catch((e: unknown) => e);
    await flush();
    clock.advance(100);
    await pending;
    expect(events).toEqual([]); // the slots are still held: nothing has settled yet
    clock.advance(20);
    work.resolve('late');
    await flush();
    expect(events.map((o) => [o.verdict, o.durationMs])).toEqual([['timeout', 120]]);
  });

  it('hears every attempt of a retried call, with its attempt number', async () => {
    const clock = new FakeClock();
    const p = pipeline(retry({ clock, random: () => 0 }), limiter({ clock }));
    const attempts: string[] = [];
    p.onSettle((o) => attempts.push(`${o.attempt}:${o.verdict}`));
    let calls = 0;
    await p.execute(() => {
      calls++;
      if (calls < 3) throw new Error('flaky');
      return 'third time';
    });
    expect(attempts).toEqual(['1:failure', '2:failure', '3:ok']);
  });

  it('times a lone bulkhead call for a listener, on the bulkhead clock', async () => {
    const clock = new FakeClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const { events, listener } = heard<Observation>();
    b.onSettle(listener);
    await b.execute(() => {
      clock.advance(25);
      return 'ok';
    });
    expect(events.map((o) => [o.verdict, o.latencyMs, o.inflight])).toEqual([['ok', 25, 1]]);
  });

  it('does not report a lone bulkhead call that started before the listener subscribed', async () => {
    const clock = new FakeClock();
    const b = bulkhead({ maxConcurrent: 1, clock });
    const work = deferred<string>();
    const running = b.execute(() => work.promise);
    const { events, listener } = heard<Observation>();
    b.onSettle(listener);
    work.resolve('ok');
    await running;
    await b.execute(() => 'after');
    expect(events.map((o) => o.verdict)).toEqual(['ok']);
    expect(events).toHaveLength(1);
  });

  it('stops hearing calls once the subscription is disposed', async () => {
    const p = pipeline(limiter({ clock: new FakeClock() }));
    let count = 0;
    const subscription = p.onSettle(() => count++);
    await p.execute(() => 1);
    subscription.dispose();
    await p.execute(() => 2);
    expect(count).toBe(1);
  });

  it('does not let a listener that throws break the call or the other listeners', async () => {
    const reported = vi.spyOn(console, 'error').mockImplementation(() => {});
    const p = pipeline(limiter({ clock: new FakeClock() }));
    let second = 0;
    p.onSettle(() => {
      throw new Error('listener bug');
    });
    p.onSettle(() => second++);
    await expect(p.execute(() => 'still fine')).resolves.toBe('still fine');
    expect(second).toBe(1);
    expect(reported).toHaveBeenCalledTimes(1);
  });

  it('does not report a refused call as settled', async () => {
    const clock = new FakeClock();
    const guard = breaker({ clock });
    guard.isolate();
    const p = pipeline(guard, limiter({ clock }));
    let settled = 0;
    p.onSettle(() => settled++);
    guard.onSettle(() => settled++);
    await p.execute(() => 'never').catch(() => undefined);
    expect(settled).toBe(0);
  });
});

describe('per-call events: a refused call', () => {
  it('tells the pipeline and the breaker that an open breaker refused, with the time to half-open and the error the caller got', async () => {
    const clock = new FakeClock();
    const guard = breaker({ clock, minSamples: 2, openMs: 5_000 });
    const p = pipeline(guard, limiter({ clock }));
    const fromPipeline: RefusalEvent[] = [];
    const fromBreaker: RefusalEvent[] = [];
    p.onRefuse((r) => fromPipeline.push(r));
    guard.onRefuse((r) => fromBreaker.push(r));
    for (let i = 0; i < 2; i++) {
      await p
        .execute(() => {
          throw new Error('down');
        })
        .catch(() => undefined);
    }
    clock.advance(1_200);
    const error = await p.execute(() => 'never', { attempt: 2 }).catch((e: unknown) => e);
    expect(fromPipeline.map(refusalShape)).toEqual([
      { policy: 'breaker', reason: 'open', retryAfterMs: 3_800, attempt: 2, queuedMs: 0 },
    ]);
    expect(fromPipeline[0]!.error).toBe(error);
    expect(fromBreaker).toEqual(fromPipeline);
  });

  it('says isolated for a breaker held open by isolate()', async () => {
    const guard = breaker();
    guard.isolate();
    const { events, listener } = heard<RefusalEvent>();
    guard.onRefuse(listener);
    await guard.execute(() => 'never').catch(() => undefined);
    expect(events.map(refusalShape)).toEqual([
      { policy: 'breaker', reason: 'isolated', retryAfterMs: undefined, attempt: 1, queuedMs: 0 },
    ]);
  });

  it('says half-open when every probe slot is taken', async () => {
    const clock = new FakeClock();
    const guard = breaker({ clock, minSamples: 1, openMs: 1_000, halfOpenProbes: 1 });
    await guard
      .execute(() => {
        throw new Error('down');
      })
      .catch(() => undefined);
    clock.advance(1_000);
    const probe = deferred<string>();
    const probing = guard.execute(() => probe.promise);
    const reasons: string[] = [];
    guard.onRefuse((r) => reasons.push(r.reason));
    await guard.execute(() => 'second probe').catch(() => undefined);
    probe.resolve('ok');
    await probing;
    expect(reasons).toEqual(['half-open']);
  });

  it('tells the limiter and the pipeline that the limiter shed a call, with its retry hint', async () => {
    const clock = new FakeClock();
    const quota = limiter({ clock, initialLimit: 1, minLimit: 1, queueing: false });
    const p = pipeline(quota);
    const { events, listener } = heard<RefusalEvent>();
    quota.onRefuse(listener);
    const fromPipeline: RefusalEvent[] = [];
    p.onRefuse((r) => fromPipeline.push(r));
    const held = quota.tryAcquire()!;
    const error = await p.execute(() => 'never').catch((e: unknown) => e);
    held.settle({ verdict: 'ok', latencyMs: 1 });
    expect(isLimitExceededError(error)).toBe(true);
    expect(events.map((r) => [r.policy, r.reason, r.error])).toEqual([['limiter', 'shed', error]]);
    expect(events[0]!.retryAfterMs).toBe((error as { retryAfterMs?: number }).retryAfterMs);
    expect(fromPipeline).toHaveLength(1);
  });

  it('reports a shed even when the caller aborts in the same tick, after the limiter refused', async () => {
    const clock = new FakeClock();
    const quota = limiter({ clock, initialLimit: 1, minLimit: 1, queueing: false });
    const { events, listener } = heard<RefusalEvent>();
    quota.onRefuse(listener);
    const held = quota.tryAcquire()!;
    const controller = new AbortController();
    const pending = quota.execute(() => 'never', { signal: controller.signal }).catch((e: unknown) => e);
    controller.abort(new Error('caller left'));
    const error = await pending;
    held.settle({ verdict: 'ok', latencyMs: 1 });
    expect(isLimitExceededError(error)).toBe(true);
    expect(events.map((r) => [r.reason, r.error])).toEqual([['shed', error]]);
    expect(quota.snapshot().shed).toBe(1);
  });

  it('says queue-timeout, with the time queued, when the whole budget went on waiting', async () => {
    const clock = new FakeClock();
    const quota = limiter({ clock, initialLimit: 1, minLimit: 1 });
    const p = pipeline(quota, timeout({ timeoutMs: 50, clock }));
    const { events, listener } = heard<RefusalEvent>();
    p.onRefuse(listener);
    const held = quota.tryAcquire()!;
    const pending = p.execute(() => 'never').catch((e: unknown) => e);
    await flush();
    clock.advance(50);
    await pending;
    held.settle({ verdict: 'ok', latencyMs: 1 });
    expect(events.map(refusalShape)).toEqual([
      { policy: 'limiter', reason: 'queue-timeout', retryAfterMs: undefined, attempt: 1, queuedMs: 50 },
    ]);
  });

  it('says abandoned, not shed, for a waiter whose heartbeat stopped (its request went away; ADR-0043)', async () => {
    // Timers that never fire, as in a Workers request that was cancelled: the waiter's heartbeat goes silent.
    let now = 0;
    const clock = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const quota = limiter({ clock, algorithm: 'fixed', initialLimit: 1, minLimit: 1 });
    const { events, listener } = heard<RefusalEvent>();
    quota.onRefuse(listener);
    const held = quota.tryAcquire()!;
    const pending = quota.execute(() => 'never').catch((e: unknown) => e);
    await flush();
    now = 10_000;
    held.settle({ verdict: 'ok', latencyMs: 1 });
    const error = await pending;
    expect(isLimitExceededError(error)).toBe(true);
    expect(events.map((r) => [r.reason, r.error])).toEqual([['abandoned', error]]);
    expect(quota.snapshot()).toMatchObject({ shed: 0, abandonedInQueue: 1 });
  });

  it('tells the bulkhead (not the breaker before it) that the bulkhead was full', async () => {
    const clock = new FakeClock();
    const guard = breaker({ clock });
    const wall = bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(guard, wall);
    const byBreaker: RefusalEvent[] = [];
    guard.onRefuse((r) => byBreaker.push(r));
    const { events, listener } = heard<RefusalEvent>();
    wall.onRefuse(listener);
    const work = deferred<string>();
    const running = p.execute(() => work.promise);
    const error = await p.execute(() => 'never').catch((e: unknown) => e);
    work.resolve('done');
    await running;
    expect(isBulkheadFullError(error)).toBe(true);
    expect(events.map(refusalShape)).toEqual([
      { policy: 'bulkhead', reason: 'full', retryAfterMs: undefined, attempt: 1, queuedMs: 0 },
    ]);
    expect(byBreaker).toEqual([]);
  });

  it('hears each refused attempt of a retried call', async () => {
    const clock = new FakeClock();
    const quota = limiter({ clock, initialLimit: 1, minLimit: 1, queueing: false });
    const p = pipeline(retry({ clock, random: () => 0, retryLimitExceeded: true, maxAttempts: 2 }), quota);
    const attempts: number[] = [];
    p.onRefuse((r) => attempts.push(r.attempt));
    const held = quota.tryAcquire()!;
    const pending = p.execute(() => 'never').catch(() => undefined);
    await flush();
    clock.advance(10_000); // the shed's retry hint
    await pending;
    held.settle({ verdict: 'ok', latencyMs: 1 });
    expect(attempts).toEqual([1, 2]);
  });
});
