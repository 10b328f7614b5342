import { afterEach, describe, expect, it, vi } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { CallFn, ExecuteOptions } from '../../src/core/call';
import { BulkheadFullError, TimeoutError, isTimeoutError } from '../../src/errors/index';
import { resilientFetch, type FetchFunction, type KeyedExecutor } from '../../src/fetch/fetch';
import { KeyRegistry } from '../../src/registry/key-registry';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

interface SentCall {
  input: RequestInfo | URL;
  init: RequestInit | undefined;
  thisArg: unknown;
}

/** A fetch stub: records what it was given and answers with what the test scripts. */
function stubFetch(answer: (input: RequestInfo | URL, init: RequestInit | undefined) => Promise<Response> | Response) {
  const calls: SentCall[] = [];
  const fn = function (this: unknown, input: RequestInfo | URL, init?: RequestInit): Promise<Response> {
    calls.push({ input, init, thisArg: this });
    return Promise.resolve(answer(input, init));
  };
  return { fetch: fn as FetchFunction, calls };
}

/** A fetch stub that never answers on its own: it settles only when its signal aborts. */
/** A fetch that never answers and rejects when its signal aborts: `init.signal`, else a Request's own, as fetch does. */
function hangingFetch() {
  return stubFetch(
    (input, init) =>
      new Promise<Response>((_resolve, reject) => {
        // fetch's rule: init.signal, null included, wins over the Request's own.
        const signal = init?.signal !== undefined ? init.signal : input instanceof Request ? input.signal : undefined;
        signal?.addEventListener('abort', () => reject(signal.reason));
      }),
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe('resilientFetch', () => {
  it('resolves with the upstream Response and records one ok observation', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const stub = stubFetch(() => new Response('hello', { status: 200 }));
    const f = resilientFetch(pipeline(spy), { fetch: stub.fetch });
    const response = await f('https://api.example.com/items');
    expect(await response.text()).toBe('hello');
    expect(stub.calls).toHaveLength(1);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['ok']);
  });

  it('ends the latency sample at the response headers, before the body is read', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    let push!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({
      start: (c) => {
        push = c;
      },
    });
    const headers = deferred<Response>();
    const f = resilientFetch(pipeline(spy), { fetch: () => headers.promise });
    const pending = f('https://api.example.com/stream');
    clock.advance(30);
    headers.resolve(new Response(body, { status: 200 }));
    const response = await pending;
    expect(spy.observations).toHaveLength(1);
    expect(spy.observations[0]!.latencyMs).toBe(30);
    clock.advance(500);
    push.enqueue(new TextEncoder().encode('late body'));
    push.close();
    expect(await response.text()).toBe('late body');
    expect(spy.observations).toHaveLength(1);
    expect(spy.observations[0]!.durationMs).toBe(30);
  });

  it.each([
    [200, 'ok'],
    [301, 'ok'],
    [404, 'answered'],
    [422, 'answered'],
    [429, 'overload'],
    [503, 'overload'],
    [500, 'failure'],
    [502, 'failure'],
  ] as const)('returns a %i Response as fetch would and classifies it %s', async (status, verdict) => {
    const spy = spyPolicy(new FakeClock());
    const stub = stubFetch(() => new Response(null, { status }));
    const response = await resilientFetch(pipeline(spy), { fetch: stub.fetch })('https://api.example.com/');
    expect(response.status).toBe(status);
    expect(spy.observations.map((o) => o.verdict)).toEqual([verdict]);
  });

  it('reads a Retry-After in seconds from a 429 into the observation', async () => {
    const spy = spyPolicy(new FakeClock());
    const stub = stubFetch(() => new Response(null, { status: 429, headers: { 'Retry-After': '7' } }));
    await resilientFetch(pipeline(spy), { fetch: stub.fetch })('https://api.example.com/');
    expect(spy.observations[0]).toMatchObject({ verdict: 'overload', retryAfterMs: 7000 });
  });

  it('reads a Retry-After given as an HTTP date from a 503', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2025-03-01T12:00:00Z'));
    const spy = spyPolicy(new FakeClock());
    const stub = stubFetch(
      () => new Response(null, { status: 503, headers: { 'Retry-After': 'Sat, 01 Mar 2025 12:01:30 GMT' } }),
    );
    await resilientFetch(pipeline(spy), { fetch: stub.fetch })('https://api.example.com/');
    expect(spy.observations[0]).toMatchObject({ verdict: 'overload', retryAfterMs: 90_000 });
  });

  it('rejects with the network error fetch threw and records a failure', async () => {
    const spy = spyPolicy(new FakeClock());
    const networkError = new TypeError('fetch failed');
    const f = resilientFetch(pipeline(spy), { fetch: () => Promise.reject(networkError) });
    await expect(f('https://api.example.com/')).rejects.toBe(networkError);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['failure']);
  });

  it('cancels the call with the caller reason when init.signal aborts, and records cancelled', async () => {
    const spy = spyPolicy(new FakeClock());
    const stub = hangingFetch();
    const controller = new AbortController();
    const pending = resilientFetch(pipeline(spy), { fetch: stub.fetch })('https://api.example.com/', {
      signal: controller.signal,
    });
    const reason = new DOMException('user left', 'AbortError');
    controller.abort(reason);
    await expect(pending).rejects.toBe(reason);
    const sent = stub.calls[0]!.init!.signal!;
    expect(sent.aborted).toBe(true);
    expect(sent.reason).toBe(reason);
    await flush();
    expect(spy.observations.map((o) => o.verdict)).toEqual(['cancelled']);
  });

  it("honours a Request's own signal when init gives none", async () => {
    const spy = spyPolicy(new FakeClock());
    const stub = hangingFetch();
    const controller = new AbortController();
    const request = new Request('https://api.example.com/', { signal: controller.signal });
    const pending = resilientFetch(pipeline(spy), { fetch: stub.fetch })(request);
    controller.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
    // No deadline: fetch gets the Request as it is, and its own signal governs the request.
    expect(stub.calls[0]!.init).toBeUndefined();
    expect((stub.calls[0]!.input as Request).signal.aborted).toBe(true);
    await flush();
    expect(spy.observations.map((o) => o.verdict)).toEqual(['cancelled']);
  });

  it("takes init.signal null as no signal, as fetch does, not as the Request's own", async () => {
    const request = new Request('https://api.example.com/', { signal: AbortSignal.abort(new Error('gone')) });
    // The platform's rule we follow: a present null replaces the Request's signal.
    expect(new Request(request, { signal: null }).signal.aborted).toBe(false);
    const spy = spyPolicy(new FakeClock());
    const stub = stubFetch(() => new Response('served'));
    const response = await resilientFetch(pipeline(spy), { fetch: stub.fetch })(request, { signal: null });
    expect(await response.text()).toBe('served');
    expect(stub.calls).toHaveLength(1);
    expect(stub.calls[0]!.init!.signal).toBeNull();
    await flush();
    expect(spy.observations.map((o) => o.verdict)).toEqual(['ok']);
  });

  it('sends the request fetch would send for an init whose members are inherited or getters, with a deadline too', async () => {
    // What the platform reads from the init resilix hands it: a Request built from it, as fetch does.
    const seen = async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      return Response.json({ method: request.method, header: request.headers.get('x-h'), body: await request.text() });
    };
    const asked = { method: 'POST', header: 'yes', body: 'hello' };
    const inherited = Object.create({ method: 'POST', body: 'hello', headers: { 'x-h': 'yes' } }) as RequestInit;
    const asRequest = new Request('https://template.example/', {
      method: 'POST',
      body: 'hello',
      headers: { 'x-h': 'yes' },
    });
    expect(await (await seen('https://api.example.com/', inherited)).json()).toEqual(asked);
    for (const withDeadline of [false, true]) {
      const policy = withDeadline ? timeout({ timeoutMs: 5_000 }) : bulkhead({ maxConcurrent: 4 });
      const f = resilientFetch(pipeline(policy), { fetch: seen as FetchFunction });
      expect(await (await f('https://api.example.com/', inherited)).json()).toEqual(asked);
      expect(await (await f('https://api.example.com/', asRequest.clone() as RequestInit)).json()).toEqual(asked);
    }
  });

  it('rejects, never throws, for a null input or an init whose signal getter throws', async () => {
    // As fetch does: the Request it would build refuses a null input.
    const platform: FetchFunction = async (input, init) => {
      void new Request(input, init);
      return new Response();
    };
    const f = resilientFetch(pipeline(bulkhead({ maxConcurrent: 1 })), { fetch: platform });
    const registryFetch = resilientFetch(new KeyRegistry({ create: () => pipeline(bulkhead({ maxConcurrent: 1 })) }), {
      fetch: platform,
    });
    const broken = Object.defineProperty({}, 'signal', {
      get() {
        throw new Error('signal getter broke');
      },
    }) as RequestInit;
    for (const api of [f, registryFetch]) {
      let pending: Promise<Response> | undefined;
      expect(() => {
        pending = api(null as never);
      }).not.toThrow();
      await expect(pending).rejects.toThrow(TypeError);
      expect(() => {
        pending = api('https://api.example.com/', broken);
      }).not.toThrow();
      await expect(pending).rejects.toThrow('signal getter broke');
    }
  });

  it('rejects at once, without calling fetch, when the caller signal is already aborted', async () => {
    const stub = stubFetch(() => new Response('never'));
    const reason = new Error('already gone');
    const f = resilientFetch(pipeline(spyPolicy(new FakeClock())), { fetch: stub.fetch });
    await expect(f('https://api.example.com/', { signal: AbortSignal.abort(reason) })).rejects.toBe(reason);
    expect(stub.calls).toHaveLength(0);
  });

  it('aborts fetch with a TimeoutError at our deadline and records a timeout', async () => {
    const clock = new FakeClock();
    const spy = spyPolicy(clock);
    const stub = hangingFetch();
    const f = resilientFetch(pipeline(spy, timeout({ timeoutMs: 100, clock })), { fetch: stub.fetch });
    const pending = f('https://api.example.com/');
    clock.advance(99);
    await flush();
    expect(stub.calls[0]!.init!.signal!.aborted).toBe(false);
    clock.advance(1);
    const error = await pending.catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect((error as TimeoutError).timeoutMs).toBe(100);
    expect(stub.calls[0]!.init!.signal!.reason).toBe(error);
    await flush();
    expect(spy.observations.map((o) => o.verdict)).toEqual(['timeout']);
  });

  it("lets options.timeoutMs override the pipeline's timeout policy", async () => {
    const clock = new FakeClock();
    const stub = hangingFetch();
    const f = resilientFetch(timeout({ timeoutMs: 10_000, clock }), { fetch: stub.fetch, timeoutMs: 250 });
    const pending = f('https://api.example.com/');
    clock.advance(250);
    await expect(pending).rejects.toBeInstanceOf(TimeoutError);
  });

  it('never aborts the signal after the headers arrived, so the body stays readable past the deadline', async () => {
    const clock = new FakeClock();
    const headers = deferred<Response>();
    const stub = stubFetch(() => headers.promise);
    const f = resilientFetch(timeout({ timeoutMs: 100, clock }), { fetch: stub.fetch });
    const pending = f('https://api.example.com/');
    clock.advance(40);
    headers.resolve(new Response('body'));
    const response = await pending;
    clock.advance(1_000);
    expect(stub.calls[0]!.init!.signal!.aborted).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    expect(await response.text()).toBe('body');
  });

  it("aborts the body with the caller's signal after the headers, also under a deadline (issue 15, defect 5)", async () => {
    const clock = new FakeClock();
    const headers = deferred<Response>();
    const stub = stubFetch(() => headers.promise);
    const f = resilientFetch(pipeline(spyPolicy(clock), timeout({ timeoutMs: 100, clock })), { fetch: stub.fetch });
    const controller = new AbortController();
    const pending = f('https://api.example.com/', { signal: controller.signal });
    headers.resolve(new Response('body'));
    await pending;
    const sent = stub.calls[0]!.init!.signal!;
    expect(sent.aborted).toBe(false);
    const reason = new DOMException('user left', 'AbortError');
    controller.abort(reason);
    expect(sent.aborted).toBe(true);
    expect(sent.reason).toBe(reason);
  });

  it('does not abort the body at the deadline when the caller gave a signal', async () => {
    const clock = new FakeClock();
    const headers = deferred<Response>();
    const stub = stubFetch(() => headers.promise);
    const f = resilientFetch(timeout({ timeoutMs: 100, clock }), { fetch: stub.fetch });
    const controller = new AbortController();
    const pending = f('https://api.example.com/', { signal: controller.signal });
    clock.advance(40);
    headers.resolve(new Response('body'));
    const response = await pending;
    clock.advance(1_000);
    expect(stub.calls[0]!.init!.signal!.aborted).toBe(false);
    expect(clock.pendingTimers).toBe(0);
    expect(await response.text()).toBe('body');
  });

  it('aborts fetch with our TimeoutError at the deadline when the caller gave a signal', async () => {
    const clock = new FakeClock();
    const stub = hangingFetch();
    const f = resilientFetch(timeout({ timeoutMs: 100, clock }), { fetch: stub.fetch });
    const pending = f('https://api.example.com/', { signal: new AbortController().signal });
    await flush();
    clock.advance(100);
    const error = await pending.catch((e: unknown) => e);
    expect(isTimeoutError(error)).toBe(true);
    expect(stub.calls[0]!.init!.signal!.reason).toBe(error);
  });

  it('hands fetch the caller init itself, with no signal of ours, when nothing of ours can abort the request', async () => {
    const stub = stubFetch(() => new Response(null, { status: 201 }));
    const f = resilientFetch(pipeline(spyPolicy(new FakeClock())), { fetch: stub.fetch });
    const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' };
    await f('https://api.example.com/items', init);
    const sent = stub.calls[0]!;
    expect(sent.input).toBe('https://api.example.com/items');
    expect(sent.init).toBe(init);
    expect(init).toEqual({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  });

  it('hands fetch no init at all when the caller gave none and nothing of ours can abort', async () => {
    const stub = stubFetch(() => new Response(null));
    await resilientFetch(pipeline(spyPolicy(new FakeClock())), { fetch: stub.fetch })('https://api.example.com/');
    expect(stub.calls[0]!.init).toBeUndefined();
  });

  it('passes a copy of the caller init with our signal when a deadline applies, and never mutates it', async () => {
    const clock = new FakeClock();
    const stub = stubFetch(() => new Response(null, { status: 201 }));
    const f = resilientFetch(pipeline(spyPolicy(clock), timeout({ timeoutMs: 1_000, clock })), { fetch: stub.fetch });
    const init: RequestInit = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' };
    await f('https://api.example.com/items', init);
    const sent = stub.calls[0]!;
    expect(sent.init).not.toBe(init);
    expect(sent.init).toMatchObject({
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(sent.init!.signal).toBeInstanceOf(AbortSignal);
    expect(sent.init!.signal!.aborted).toBe(false);
    expect(init).toEqual({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
  });

  it('hands the caller signal itself to fetch when no deadline applies', async () => {
    const stub = stubFetch(() => new Response(null));
    const controller = new AbortController();
    await resilientFetch(pipeline(spyPolicy(new FakeClock())), { fetch: stub.fetch })('https://api.example.com/', {
      signal: controller.signal,
    });
    expect(stub.calls[0]!.init!.signal).toBe(controller.signal);
  });

  it('calls the given fetch as a plain function, so no stray `this` reaches a platform fetch', async () => {
    const stub = stubFetch(() => new Response(null));
    const options = { fetch: stub.fetch };
    await resilientFetch(pipeline(spyPolicy(new FakeClock())), options)('https://api.example.com/');
    expect(stub.calls[0]!.thisArg).toBeUndefined();
  });

  it('uses the global fetch, looked up at call time, when none is given', async () => {
    const stub = stubFetch(() => new Response('from the global'));
    const f = resilientFetch(pipeline(spyPolicy(new FakeClock())));
    vi.stubGlobal('fetch', stub.fetch);
    try {
      expect(await (await f('https://api.example.com/')).text()).toBe('from the global');
    } finally {
      vi.unstubAllGlobals();
    }
    expect(stub.calls).toHaveLength(1);
  });

  it('rejects with the policy refusal and never calls fetch when the bulkhead is full', async () => {
    const stub = hangingFetch();
    const f = resilientFetch(bulkhead({ maxConcurrent: 1 }), { fetch: stub.fetch });
    const controller = new AbortController();
    const first = f('https://api.example.com/1', { signal: controller.signal });
    await expect(f('https://api.example.com/2')).rejects.toBeInstanceOf(BulkheadFullError);
    expect(stub.calls).toHaveLength(1);
    controller.abort('caller left');
    await expect(first).rejects.toBe('caller left');
  });

  it('uses a per-wrapper classifier over the default', async () => {
    const spy = spyPolicy(new FakeClock());
    const stub = stubFetch(() => new Response(null, { status: 404 }));
    const f = resilientFetch(pipeline(spy), {
      fetch: stub.fetch,
      classify: (settled) =>
        settled.status === 'fulfilled' && (settled.value as Response).status === 404 ? 'failure' : undefined,
    });
    await f('https://api.example.com/');
    expect(spy.observations.map((o) => o.verdict)).toEqual(['failure']);
  });
});

describe('resilientFetch with a registry of pipelines', () => {
  it('keys each call with the key function it is given', async () => {
    const spy = spyPolicy(new FakeClock());
    const keys: string[] = [];
    const registry: KeyedExecutor = {
      execute<T>(key: string, fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
        keys.push(key);
        return spy.execute(fn, options);
      },
    };
    const stub = stubFetch(() => new Response(null));
    const f = resilientFetch(registry, {
      fetch: stub.fetch,
      key: (_input, init) => new Headers(init?.headers).get('x-tenant') ?? 'anonymous',
    });
    await f('https://a.example.com/x', { headers: { 'x-tenant': 'acme' } });
    await f('https://a.example.com/y');
    expect(keys).toEqual(['acme', 'anonymous']);
    expect(spy.observations.map((o) => o.verdict)).toEqual(['ok', 'ok']);
  });

  it('gives a KeyRegistry one pipeline per origin by default', async () => {
    const clock = new FakeClock();
    const made: string[] = [];
    const registry = new KeyRegistry({
      create: (key) => {
        made.push(key);
        return pipeline(spyPolicy(clock));
      },
    });
    const stub = stubFetch(() => new Response(null));
    const f = resilientFetch(registry, { fetch: stub.fetch });
    await f('https://API.example.com:443/a?q=1');
    await f('https://api.example.com/b');
    await f(new URL('http://api.example.com:8080/c'));
    await f(new Request('https://other.example.org/d'));
    expect(made).toEqual(['https://api.example.com', 'http://api.example.com:8080', 'https://other.example.org']);
    expect(registry.keys()).toEqual(made);
    expect(stub.calls).toHaveLength(4);
  });

  it('rejects (never throws) when the key cannot be computed, as fetch does for a bad URL', async () => {
    const registry = new KeyRegistry({ create: () => pipeline(spyPolicy(new FakeClock())) });
    const stub = stubFetch(() => new Response(null));
    const f = resilientFetch(registry, { fetch: stub.fetch });
    let pending: Promise<Response> | undefined;
    expect(() => {
      pending = f('/relative/path');
    }).not.toThrow();
    await expect(pending).rejects.toBeInstanceOf(TypeError);
    expect(registry.size).toBe(0);
    expect(stub.calls).toHaveLength(0);
  });
});

describe('resilientFetch options', () => {
  const executor = pipeline(spyPolicy(new FakeClock()));

  it('refuses a target that cannot execute calls, naming what it needs', () => {
    expect(() => resilientFetch({} as never)).toThrow(
      'resilix: resilientFetch needs a pipeline, a policy or a KeyRegistry as its first argument; received object',
    );
    expect(() => resilientFetch(null as never)).toThrow(/received null/);
  });

  it('refuses a timeoutMs that is not a positive number', () => {
    expect(() => resilientFetch(executor, { timeoutMs: 0 })).toThrow(
      'resilix: resilientFetch option "timeoutMs" must be a number in (0, Infinity]; received 0',
    );
  });

  it('refuses a fetch option that is not a function', () => {
    expect(() => resilientFetch(executor, { fetch: 'fetch' as never })).toThrow(
      'resilix: resilientFetch option "fetch" must be a function; received "fetch"',
    );
  });
});
