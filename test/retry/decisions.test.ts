import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/breaker';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { CallContext } from '../../src/core/call';
import type { Observation } from '../../src/core/observation';
import { BulkheadFullError, isBrokenCircuitError, LimitExceededError, TimeoutError } from '../../src/errors/index';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import type { AttemptOutcome } from '../../src/retry/options';
import { retry, type RetryGiveUpEvent } from '../../src/retry/retry';
import { timeout } from '../../src/timeout/timeout';
import { spyPolicy } from '../helpers/spy-policy';
import { constant, response, VirtualClock } from './support';

/** A retry policy on a virtual clock with no jitter (every wait is 0) and no budget in the way. */
function quickRetry(clock: VirtualClock, extra: Parameters<typeof retry>[0] = {}) {
  return retry({ clock, random: constant(0), budget: false, ...extra });
}

/** fn that answers from a script, one entry per attempt, and records when each attempt started. */
function scripted(clock: VirtualClock, script: Array<() => unknown>) {
  const startedAt: number[] = [];
  const attempts: number[] = [];
  const fn = (ctx: CallContext) => {
    startedAt.push(clock.now());
    attempts.push(ctx.attempt);
    const step = script[Math.min(startedAt.length - 1, script.length - 1)]!;
    return step();
  };
  return { fn, startedAt, attempts };
}

const fail = () => Promise.reject(new Error('boom'));

describe('what the retry policy retries (verdict-driven)', () => {
  it('does not retry a call that succeeded', async () => {
    const clock = new VirtualClock();
    const { fn, startedAt } = scripted(clock, [() => 'ok']);
    const result = await clock.run(quickRetry(clock).execute(fn));
    expect(result).toEqual({ ok: true, value: 'ok' });
    expect(startedAt).toEqual([0]);
  });

  it('retries a failure and resolves with the retry’s value', async () => {
    const clock = new VirtualClock();
    const { fn, attempts } = scripted(clock, [fail, () => 'second']);
    const result = await clock.run(quickRetry(clock).execute(fn));
    expect(result).toEqual({ ok: true, value: 'second' });
    expect(attempts).toEqual([1, 2]);
  });

  it('retries a 5xx answer that resolved (the verdict is failure, not the promise state)', async () => {
    const clock = new VirtualClock();
    const { fn, attempts } = scripted(clock, [() => response(500), () => response(200)]);
    const result = await clock.run(quickRetry(clock).execute(fn));
    expect(result).toEqual({ ok: true, value: response(200) });
    expect(attempts).toEqual([1, 2]);
  });

  it('retries an attempt that hit its own deadline', async () => {
    const clock = new VirtualClock();
    const p = pipeline(quickRetry(clock), timeout({ timeoutMs: 100, clock }));
    const { fn, startedAt } = scripted(clock, [() => new Promise(() => {}), () => 'late but fine']);
    const result = await clock.run(p.execute(fn));
    expect(result).toEqual({ ok: true, value: 'late but fine' });
    expect(startedAt).toEqual([0, 100]);
  });

  it('does not retry an answered call (404)', async () => {
    const clock = new VirtualClock();
    const { fn, startedAt } = scripted(clock, [() => response(404)]);
    const result = await clock.run(quickRetry(clock).execute(fn));
    expect(result).toEqual({ ok: true, value: response(404) });
    expect(startedAt).toHaveLength(1);
  });

  it('retries an overload (429) no sooner than its Retry-After', async () => {
    const clock = new VirtualClock();
    const { fn, startedAt } = scripted(clock, [() => response(429, '2'), () => response(200)]);
    const result = await clock.run(quickRetry(clock).execute(fn));
    expect(result).toEqual({ ok: true, value: response(200) });
    expect(startedAt).toEqual([0, 2_000]);
  });

  it('waits the longer of the backoff and the Retry-After', async () => {
    const clock = new VirtualClock();
    // random 0.5 with base 100: the first retry's backoff is 50 ms, longer than Retry-After 0.
    const r = retry({ clock, random: constant(0.5), budget: false });
    const { fn, startedAt } = scripted(clock, [() => response(503, '0'), () => response(200)]);
    await clock.run(r.execute(fn));
    expect(startedAt).toEqual([0, 50]);
  });

  it('does not make a retry whose Retry-After is longer than maxDelayMs, and returns the 503', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, { maxDelayMs: 1_000 });
    const reasons: RetryGiveUpEvent[] = [];
    r.onGiveUp((e) => reasons.push(e));
    const { fn, startedAt } = scripted(clock, [() => response(503, '5')]);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: response(503, '5') });
    expect(startedAt).toHaveLength(1);
    expect(reasons).toEqual([{ attempt: 1, verdict: 'overload', reason: 'retryAfter' }]);
    expect(r.snapshot().gaveUp.retryAfter).toBe(1);
  });

  it('does not retry when the caller aborts the attempt, and rejects with the caller’s reason', async () => {
    const clock = new VirtualClock();
    const controller = new AbortController();
    const reason = new Error('caller left');
    const { fn, startedAt } = scripted(clock, [
      () => {
        controller.abort(reason);
        return Promise.reject(new Error('aborted fetch'));
      },
    ]);
    const result = await clock.run(quickRetry(clock).execute(fn, { signal: controller.signal }));
    expect(result).toEqual({ ok: false, error: reason });
    expect(startedAt).toHaveLength(1);
  });

  it('never retries a refusal by our own breaker', async () => {
    const clock = new VirtualClock();
    const b = breaker({ clock });
    b.isolate();
    const p = pipeline(quickRetry(clock, { shouldRetry: () => true, retryLimitExceeded: true }), b);
    const { fn, startedAt } = scripted(clock, [() => 'never runs']);
    const result = await clock.run(p.execute(fn));
    expect(result.ok).toBe(false);
    expect(isBrokenCircuitError((result as { error: unknown }).error)).toBe(true);
    expect(startedAt).toHaveLength(0);
    expect(b.snapshot().rejected).toBe(1);
  });

  it('does not retry a refusal by a full bulkhead', async () => {
    const clock = new VirtualClock();
    const full = bulkhead({ maxConcurrent: 1, clock });
    const p = pipeline(quickRetry(clock, { retryLimitExceeded: true }), full);
    const hold = p.execute(() => new Promise(() => {}));
    const result = await clock.run(p.execute(() => 'never runs'));
    expect((result as { error: unknown }).error).toBeInstanceOf(BulkheadFullError);
    expect(full.snapshot().rejected).toBe(1);
    void hold;
  });

  it('does not retry our own limiter’s shed by default', async () => {
    const clock = new VirtualClock();
    const l = limiter({ clock, algorithm: 'fixed', initialLimit: 1, minLimit: 1, queueing: false });
    const p = pipeline(quickRetry(clock), l);
    void p.execute(() => new Promise(() => {})); // holds the only slot
    const result = await clock.run(p.execute(() => 'never runs'));
    expect((result as { error: unknown }).error).toBeInstanceOf(LimitExceededError);
    expect(l.snapshot().shed).toBe(1);
  });

  it('retries our own limiter’s shed when retryLimitExceeded is on, no sooner than its retryAfterMs', async () => {
    const clock = new VirtualClock();
    const { fn, startedAt } = scripted(clock, [
      () => Promise.reject(new LimitExceededError('shed', { retryAfterMs: 300 })),
      () => 'admitted',
    ]);
    const r = quickRetry(clock, { retryLimitExceeded: true });
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: 'admitted' });
    expect(startedAt).toEqual([0, 300]);
  });

  it('retries a real limiter’s shed, each time after at least the shed’s retryAfterMs', async () => {
    const clock = new VirtualClock();
    const l = limiter({ clock, algorithm: 'fixed', initialLimit: 1, minLimit: 1, queueing: false });
    const r = quickRetry(clock, { retryLimitExceeded: true, maxAttempts: 10 });
    const p = pipeline(r, l);
    // Two calls of 100 ms each: the limiter has timed a completion, so its sheds carry a hint.
    for (let i = 0; i < 2; i++) {
      await clock.run(p.execute(() => new Promise((done) => clock.setTimer(() => done('warm'), 100))));
    }
    const holder = p.execute(() => new Promise((done) => clock.setTimer(() => done('held'), 400)));
    const waits: Array<{ delayMs: number; retryAfterMs: number | undefined }> = [];
    r.onRetry((e) => waits.push({ delayMs: e.delayMs, retryAfterMs: e.retryAfterMs }));
    let ranAt = NaN;
    const result = await clock.run(
      p.execute(() => {
        ranAt = clock.now();
        return 'second';
      }),
    );
    await clock.run(holder);
    expect(result).toEqual({ ok: true, value: 'second' });
    // The holder runs 200-600 ms. Shed at 200 (hint 100), 300 (hint 200) and 500 ms (hint 400): one
    // completion timed since 100 ms, so the measured drain rate halves as the wait goes on.
    expect(waits).toEqual([
      { delayMs: 100, retryAfterMs: 100 },
      { delayMs: 200, retryAfterMs: 200 },
      { delayMs: 400, retryAfterMs: 400 },
    ]);
    expect(ranAt).toBe(900);
  });

  it('returns the last attempt’s value when the attempts run out (a 503 stays a Response)', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, { maxAttempts: 3 });
    const { fn, startedAt } = scripted(clock, [() => response(503)]);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: response(503) });
    expect(startedAt).toHaveLength(3);
  });

  it('rejects with the last attempt’s own error when the attempts run out, and says why', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, { maxAttempts: 2 });
    const events: RetryGiveUpEvent[] = [];
    r.onGiveUp((e) => events.push(e));
    const errors = [new Error('first'), new Error('second')];
    let n = 0;
    const result = await clock.run(r.execute(() => Promise.reject(errors[n++])));
    expect(result).toEqual({ ok: false, error: errors[1] });
    expect(events).toEqual([{ attempt: 2, verdict: 'failure', reason: 'maxAttempts' }]);
    expect(r.snapshot().gaveUp).toEqual({ maxAttempts: 1, budget: 0, deadline: 0, retryAfter: 0 });
  });

  it('lets shouldRetry refuse a failure the default would retry', async () => {
    const clock = new VirtualClock();
    const seen: AttemptOutcome[] = [];
    const r = quickRetry(clock, {
      shouldRetry: (o) => {
        seen.push(o);
        return false;
      },
    });
    const error = new Error('not idempotent');
    const result = await clock.run(r.execute(() => Promise.reject(error)));
    expect(result).toEqual({ ok: false, error });
    expect(seen).toEqual([{ verdict: 'failure', attempt: 1, error, value: undefined, retryAfterMs: undefined }]);
  });

  it('lets shouldRetry retry an answered call the default would not', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, { shouldRetry: (o) => (o.verdict === 'answered' ? true : undefined) });
    const { fn, startedAt } = scripted(clock, [() => response(409), () => response(201)]);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: response(201) });
    expect(startedAt).toHaveLength(2);
  });

  it("hands shouldRetry a resolved answer as its value, the docs' 409 example included", async () => {
    const clock = new VirtualClock();
    const seen: AttemptOutcome[] = [];
    const r = quickRetry(clock, {
      shouldRetry: (o) => {
        seen.push(o);
        return o.verdict === 'answered' ? (o.value as { status: number }).status === 409 : undefined;
      },
    });
    const conflict = response(409);
    const { fn, startedAt } = scripted(clock, [() => conflict, () => response(201)]);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: response(201) });
    expect(startedAt).toHaveLength(2);
    expect(seen).toEqual([
      { verdict: 'answered', attempt: 1, error: undefined, value: conflict, retryAfterMs: undefined },
    ]);
  });

  it('keeps the default when shouldRetry throws', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, {
      shouldRetry: () => {
        throw new Error('buggy predicate');
      },
    });
    const { fn, startedAt } = scripted(clock, [fail, () => 'recovered']);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: 'recovered' });
    expect(startedAt).toHaveLength(2);
  });

  it('decides on its own classifier when it runs alone', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock, {
      classify: (s) => (s.status === 'fulfilled' && (s.value as { ok: boolean }).ok === false ? 'failure' : undefined),
    });
    const { fn, startedAt } = scripted(clock, [() => ({ ok: false }), () => ({ ok: true })]);
    const result = await clock.run(r.execute(fn));
    expect(result).toEqual({ ok: true, value: { ok: true } });
    expect(startedAt).toHaveLength(2);
  });

  it('decides on the pipeline’s classifier in a pipeline, the verdict the other policies learned', async () => {
    const clock = new VirtualClock();
    const spy = spyPolicy(clock);
    const p = pipeline(quickRetry(clock), spy, {
      classify: (s) => (s.status === 'fulfilled' && s.value === 'busy' ? 'overload' : undefined),
    });
    const { fn, startedAt } = scripted(clock, [() => 'busy', () => 'done']);
    const result = await clock.run(p.execute(fn));
    expect(result).toEqual({ ok: true, value: 'done' });
    expect(startedAt).toHaveLength(2);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['overload', 'ok']);
  });
});

describe('each attempt is a full pass through the inner policies', () => {
  it('admits every attempt through the inner policies and numbers it', async () => {
    const clock = new VirtualClock();
    const spy = spyPolicy(clock);
    const p = pipeline(quickRetry(clock), spy, timeout({ timeoutMs: 1_000, clock }));
    const { fn, attempts } = scripted(clock, [fail, fail, () => 'third']);
    const result = await clock.run(p.execute(fn));
    expect(result).toEqual({ ok: true, value: 'third' });
    expect(spy.admitted).toBe(3);
    expect(attempts).toEqual([1, 2, 3]);
    expect(spy.observations.map((o) => [o.attempt, o.verdict])).toEqual([
      [1, 'failure'],
      [2, 'failure'],
      [3, 'ok'],
    ]);
  });

  it('reports every attempt, numbered, to pipeline.onSettle', async () => {
    const clock = new VirtualClock();
    const p = pipeline(quickRetry(clock), limiter({ clock }));
    const heard: Array<Pick<Observation, 'attempt' | 'verdict'>> = [];
    p.onSettle((o) => heard.push({ attempt: o.attempt, verdict: o.verdict }));
    const { fn } = scripted(clock, [fail, () => 'ok']);
    await clock.run(p.execute(fn));
    expect(heard).toEqual([
      { attempt: 1, verdict: 'failure' },
      { attempt: 2, verdict: 'ok' },
    ]);
  });

  it('counts from the caller’s own attempt number', async () => {
    const clock = new VirtualClock();
    const { fn, attempts } = scripted(clock, [fail, () => 'ok']);
    await clock.run(quickRetry(clock).execute(fn, { attempt: 4 }));
    expect(attempts).toEqual([4, 5]);
  });

  it('counts calls, retries and recoveries in its snapshot', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock);
    await clock.run(r.execute(() => 'first time'));
    const { fn } = scripted(clock, [fail, () => 'recovered']);
    await clock.run(r.execute(fn));
    const s = r.snapshot();
    expect([s.calls, s.retries, s.recovered, s.active]).toEqual([2, 1, 1, 0]);
  });

  it('is refused outside the outermost position of a pipeline', () => {
    const clock = new VirtualClock();
    expect(() => pipeline(breaker({ clock }), retry({ clock }))).toThrow(
      /order retry -> breaker -> limiter -> bulkhead -> timeout; received breaker -> retry/,
    );
  });

  it('is refused on another clock than the pipeline’s', () => {
    expect(() => pipeline(retry({ clock: new VirtualClock() }), breaker({ clock: new VirtualClock() }))).toThrow(
      /share one clock/,
    );
  });

  it('rejects a timed-out attempt with the TimeoutError the attempt produced', async () => {
    const clock = new VirtualClock();
    const p = pipeline(quickRetry(clock, { maxAttempts: 2 }), timeout({ timeoutMs: 100, clock }));
    const result = await clock.run(p.execute(() => new Promise(() => {})));
    expect((result as { error: unknown }).error).toBeInstanceOf(TimeoutError);
    expect(clock.now()).toBe(200);
  });
});

describe('the pooled first-attempt handlers', () => {
  it('give every concurrent call its own outcome when they settle out of order', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock);
    const calls = Array.from({ length: 50 }, (_, i) => {
      let attempts = 0;
      return r.execute(() => {
        attempts++;
        // Call i settles at 100 - i ms; every third call fails its first attempt.
        return new Promise((resolve, reject) =>
          clock.setTimer(
            () => (i % 3 === 0 && attempts === 1 ? reject(new Error(`first of ${i}`)) : resolve([i, attempts])),
            100 - i,
          ),
        );
      });
    });
    const outcome = await clock.run(Promise.all(calls));
    expect(outcome.ok).toBe(true);
    expect((outcome as { value: unknown }).value).toEqual(
      Array.from({ length: 50 }, (_, i) => [i, i % 3 === 0 ? 2 : 1]),
    );
    expect(r.snapshot()).toMatchObject({ calls: 50, retries: 17, recovered: 17, active: 0 });
  });

  it('keep a call nested inside another call’s attempt apart from it', async () => {
    const clock = new VirtualClock();
    const r = quickRetry(clock);
    let outerAttempts = 0;
    const result = await clock.run(
      r.execute(async () => {
        outerAttempts++;
        const inner = await r.execute(() => 'inner');
        if (outerAttempts === 1) throw new Error(`outer failed after ${inner}`);
        return `outer with ${inner}`;
      }),
    );
    expect(result).toEqual({ ok: true, value: 'outer with inner' });
    expect(r.snapshot()).toMatchObject({ calls: 3, retries: 1, active: 0 });
  });
});
