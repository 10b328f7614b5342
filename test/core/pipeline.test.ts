import { describe, expect, it } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { BulkheadFullError, TimeoutError } from '../../src/errors/index';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

describe('pipeline composition', () => {
  it('refuses policies out of the canonical order and names the order', () => {
    expect(() => pipeline(timeout({ timeoutMs: 10 }), bulkhead({ maxConcurrent: 1 }))).toThrowError(
      /breaker -> limiter -> bulkhead -> timeout; received timeout -> bulkhead/,
    );
  });

  it('refuses two policies of one kind', () => {
    expect(() => pipeline(bulkhead({ maxConcurrent: 1 }), bulkhead({ maxConcurrent: 2 }))).toThrowError(
      /two bulkhead policies/,
    );
  });

  it('refuses an empty pipeline and things that are not policies', () => {
    expect(() => pipeline()).toThrowError(/at least one policy/);
    expect(() => pipeline({ kind: 'breaker' } as never)).toThrowError(/not a resilix policy/);
    expect(() => pipeline(bulkhead({ maxConcurrent: 1 }), 42 as never)).toThrowError(
      /argument 1 is not a resilix policy/,
    );
  });

  it('takes only a plain object last for options: null and an array are named as bad arguments', () => {
    for (const last of [null, []]) {
      expect(() => pipeline(bulkhead({ maxConcurrent: 1 }), last as never)).toThrowError(
        new TypeError(
          'resilix: pipeline argument 1 is not a resilix policy; pass retry(), breaker(), limiter(), bulkhead() or timeout() results',
        ),
      );
    }
  });

  it('refuses a pipeline passed as a policy, and says how to reuse its policies', () => {
    const inner = pipeline(timeout({ timeoutMs: 5 }));
    expect(() => pipeline(bulkhead({ maxConcurrent: 1 }), inner as never)).toThrowError(
      'resilix: pipeline argument 1 is a pipeline, not a policy; pipelines do not nest: pass its policies (`...inner.policies`)',
    );
    expect(pipeline(bulkhead({ maxConcurrent: 1 }), ...inner.policies).policies).toHaveLength(2);
  });

  it('refuses policies that read different clocks', () => {
    const a = new FakeClock();
    const b = new FakeClock();
    expect(() => pipeline(bulkhead({ maxConcurrent: 1, clock: a }), timeout({ timeoutMs: 5, clock: b }))).toThrowError(
      /share one clock/,
    );
    expect(() => pipeline(bulkhead({ maxConcurrent: 1, clock: a }), timeout({ timeoutMs: 5, clock: a }))).not.toThrow();
  });

  it('accepts any subset in order, with a trailing options object', async () => {
    const p = pipeline(bulkhead({ maxConcurrent: 2 }), { classify: () => 'answered' });
    await expect(p.execute(() => 'value')).resolves.toBe('value');
    expect(p.snapshot().policies).toHaveLength(1);
  });
});

describe('one call through a pipeline', () => {
  it('delivers exactly one Observation with latency to mark(), duration to settle, and the attempt', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const work = deferred<string>();
    const p = pipeline(spy, bulkhead({ maxConcurrent: 4, clock }));
    const result = p.execute(
      async (ctx) => {
        clock.advance(30);
        ctx.mark();
        clock.advance(70);
        ctx.mark(); // a second mark does not move the first
        return work.promise;
      },
      { attempt: 2 },
    );
    clock.advance(400);
    work.resolve('done');
    await expect(result).resolves.toBe('done');
    expect(spy.observations).toEqual([
      { verdict: 'ok', latencyMs: 30, durationMs: 500, queuedMs: 0, inflight: 1, retryAfterMs: undefined, attempt: 2 },
    ]);
  });

  it('measures latency to settlement when the call never marks', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    await spy.execute(async () => {
      clock.advance(12);
    });
    expect(spy.observations[0]).toMatchObject({ verdict: 'ok', latencyMs: 12, durationMs: 12 });
  });

  it('tells the outer policies `rejected` when an inner policy refuses', async () => {
    const spy = spyPolicy();
    const gate = deferred();
    const p = pipeline(spy, bulkhead({ maxConcurrent: 1 }));
    const first = p.execute(() => gate.promise);
    await expect(p.execute(() => 'never')).rejects.toBeInstanceOf(BulkheadFullError);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['rejected']);
    gate.resolve(undefined);
    await first;
    expect(spy.observations.map((o) => o.verdict)).toEqual(['rejected', 'ok']);
  });

  it('tells the policies `cancelled` when the caller aborts, and rejects with the caller reason', async () => {
    const spy = spyPolicy();
    const controller = new AbortController();
    const work = deferred();
    const call = spy.execute(() => work.promise, { signal: controller.signal });
    const reason = new Error('user went away');
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    work.resolve('late');
    await flush();
    expect(spy.observations.map((o) => o.verdict)).toEqual(['cancelled']);
  });

  it('refuses a call whose signal is already aborted without admitting it', async () => {
    const spy = spyPolicy();
    const reason = new Error('already gone');
    await expect(spy.execute(() => 1, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(spy.admitted).toBe(0);
    expect(spy.observations).toEqual([]);
  });

  it('treats a synchronous throw in fn as a failure and rejects rather than throwing', async () => {
    const spy = spyPolicy();
    const boom = new Error('sync');
    const call = spy.execute(() => {
      throw boom;
    });
    await expect(call).rejects.toBe(boom);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['failure']);
  });

  it('accepts an fn that returns a plain value', async () => {
    const spy = spyPolicy();
    await expect(spy.execute(() => 7)).resolves.toBe(7);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['ok']);
  });

  it('classifies a returned 429 Response as overload and keeps its Retry-After, returning the Response', async () => {
    const spy = spyPolicy();
    const r = new Response('slow down', { status: 429, headers: { 'retry-after': '3' } });
    await expect(spy.execute(async () => r)).resolves.toBe(r);
    expect(spy.observations[0]).toMatchObject({ verdict: 'overload', retryAfterMs: 3000 });
  });

  it('uses a per-call classifier over the pipeline one', async () => {
    const spy = spyPolicy();
    const p = pipeline(spy, { classify: () => 'answered' });
    await p.execute(() => 1);
    await p.execute(() => 1, { classify: () => 'overload' });
    expect(spy.observations.map((o) => o.verdict)).toEqual(['answered', 'overload']);
  });

  it('rejects a call with a bad per-call timeoutMs without admitting it', async () => {
    const spy = spyPolicy();
    await expect(spy.execute(() => 1, { timeoutMs: -5 })).rejects.toThrowError(
      /"timeoutMs" must be a number in \(0, Infinity\]; received -5/,
    );
    await expect(spy.execute(() => 1, { timeoutMs: Number.NaN })).rejects.toBeInstanceOf(RangeError);
    await expect(spy.execute('not a function' as never)).rejects.toBeInstanceOf(TypeError);
    expect(spy.admitted).toBe(0);
  });

  it('applies a per-call timeoutMs even without a timeout policy', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const call = spy.execute(() => new Promise(() => {}), { timeoutMs: 50 });
    clock.advance(50);
    await expect(call).rejects.toBeInstanceOf(TimeoutError);
  });
});

describe('pipeline.onSettle', () => {
  it('hears every settled call with its verdict and attempt, after the policies learned', async () => {
    const clock = new FakeClock();
    const p = pipeline(bulkhead({ maxConcurrent: 2, clock }), timeout({ timeoutMs: 100, clock }));
    const heard: Array<{ verdict: string; attempt: number | undefined }> = [];
    const subscription = p.onSettle((o) => heard.push({ verdict: o.verdict, attempt: o.attempt }));
    await p.execute(async () => new Response(null, { status: 503 }), { attempt: 2 });
    await p.execute(() => 'fine');
    subscription.dispose();
    await p.execute(() => 'unheard');
    expect(heard).toEqual([
      { verdict: 'overload', attempt: 2 },
      { verdict: 'ok', attempt: 1 },
    ]);
  });

  it('hands every call of one pipeline the same Observation object, and another pipeline its own', async () => {
    const a = pipeline(bulkhead({ maxConcurrent: 2 }));
    const b = pipeline(bulkhead({ maxConcurrent: 2 }));
    const heard: Array<{ from: string; observation: object }> = [];
    a.onSettle((observation) => heard.push({ from: 'a', observation }));
    b.onSettle((observation) => heard.push({ from: 'b', observation }));
    await a.execute(() => 1);
    await a.execute(() => 2);
    await b.execute(() => 3);
    expect(heard.map((h) => h.from)).toEqual(['a', 'a', 'b']);
    expect(heard[1]?.observation).toBe(heard[0]?.observation);
    expect(heard[2]?.observation).not.toBe(heard[0]?.observation);
  });

  it('gives a call settled inside a settle listener of the same pipeline its own Observation', async () => {
    const p = pipeline(bulkhead({ maxConcurrent: 2 }));
    const heard: Array<{ verdict: string; latencyMs: number; observation: object }> = [];
    let nested = false;
    p.onSettle((observation) => {
      if (!nested) {
        nested = true;
        // A synchronous fn settles within this execute, inside the outer settle.
        p.execute(() => {
          throw new Error('inner');
        }).catch(() => {});
      }
      heard.push({ verdict: observation.verdict, latencyMs: observation.latencyMs, observation });
    });
    await p.execute(() => 'outer');
    expect(heard.map((h) => h.verdict)).toEqual(['failure', 'ok']);
    expect(heard[0]?.observation).not.toBe(heard[1]?.observation);
  });

  it('refuses unknown pipeline options', () => {
    expect(() => pipeline(bulkhead({ maxConcurrent: 1 }), { clasify: () => 'ok' } as never)).toThrowError(
      /pipeline has no option "clasify"; did you mean "classify"\?/,
    );
  });
});
