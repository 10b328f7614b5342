import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startScriptedUpstream, startWorker, type ScriptedUpstream, type WorkerHandle } from './harness';

/**
 * Module-scope resilix state in workerd when a request is cancelled (its client goes away) while
 * its call waits in a key's limiter queue or runs. The cancelling client is a second Worker that
 * aborts its service-binding subrequest: workerd then cancels the inner request, its subrequests,
 * its timers and its promise continuations (adr/0043). Each key: limiter limit 1 with a queue,
 * timeout 800 ms; a `retry…` registry puts a retry (2 attempts) in front.
 *
 * What keeps a cancelled call's continuations alive is `ctx.waitUntil`: handed the call's promise
 * (`waitUntil=call`), the request's context lives until the call settles, so the call runs to its
 * end (its answer goes nowhere) and every count comes back. With the request's signal passed to
 * execute the call rejects at once, which ends that waitUntil before the attempt has stopped; the
 * attempt's own promise must be handed over too (`waitUntil=work`).
 */
interface State {
  registry: { size: number; busy: number; evictions: number; overflows: number };
  keys: string[];
  busy: Record<string, boolean>;
  limiters: Record<
    string,
    { inflight: number; queued: number; admitted: number; abortedInQueue: number; timedOutInQueue: number }
  >;
  retries: Record<string, { calls: number; active: number }>;
  started: number;
  settled: Array<{ key: string; outcome: string; body?: string }>;
  answered: number;
}

const CROSS_REQUEST = 'A promise was resolved or rejected from a different request context';

let upstream: ScriptedUpstream;
let worker: WorkerHandle;

beforeAll(async () => {
  upstream = await startScriptedUpstream();
  worker = await startWorker('registry-cancel.js', { UPSTREAM: upstream.url }, 'src', {
    client: 'cancelling-client.js',
    compatibilityFlags: ['enable_request_signal'],
  });
}, 60_000);

afterAll(async () => {
  await worker?.dispose();
  await upstream?.close();
});

async function call(query: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await worker.mf.dispatchFetch(`http://worker/?${query}`);
  const text = await response.text();
  return {
    status: response.status,
    body: response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : { text },
  };
}

async function state(reg: string): Promise<State> {
  return (await (await worker.mf.dispatchFetch(`http://worker/state?reg=${reg}`)).json()) as State;
}

/** Polls the Worker's state until `condition` holds, failing after `ms`. */
async function stateWhen(reg: string, condition: (s: State) => boolean, ms = 3_000): Promise<State> {
  const until = Date.now() + ms;
  for (;;) {
    const s = await state(reg);
    if (condition(s)) return s;
    if (Date.now() > until) throw new Error(`state of ${reg} not reached within ${ms} ms: ${JSON.stringify(s)}`);
    await sleep(20);
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));
const warnings = (from: number) => worker.stderr.slice(from).filter((line) => line.includes(CROSS_REQUEST));

/**
 * One call holds each key's only slot (500 ms), and a second request per key queues behind it and is cancelled after
 * 100 ms (`extra` is its query's tail): both waiters are still queued, and the holders then answer 200.
 */
async function holdAndCancelQueued(reg: string, extra = ''): Promise<void> {
  const holders = ['a', 'b'].map((key) => call(`reg=${reg}&key=${key}&path=/delay/500`));
  await eventually(() => upstream.peakConcurrent === 2);
  const cancelled = await Promise.all(
    ['a', 'b'].map((key) => call(`reg=${reg}&key=${key}&path=/delay/10&abortAfter=100${extra}`)),
  );
  expect(cancelled.map((r) => r.status)).toEqual([499, 499]);
  // Nothing told the limiter (no signal): the waiters stay queued.
  expect((await state(reg)).limiters).toMatchObject({
    a: { inflight: 1, queued: 1 },
    b: { inflight: 1, queued: 1 },
  });
  expect((await Promise.all(holders)).map((r) => r.status)).toEqual([200, 200]);
}

describe('a KeyRegistry in workerd, a request cancelled while its call is queued', { timeout: 30_000 }, () => {
  // Known defect: the registry counts the calls it runs until they settle, and a ghost never does.
  // The limiter heals (adr/0043); the registry's own count does not. Asserted as it is.
  it('without waitUntil: the limiter takes back the slot, but the keys stay busy and a new key is refused', async () => {
    upstream.reset();
    const log = worker.stderr.length;
    const startedAt = Date.now();
    await holdAndCancelQueued('queued');
    // The holders hand their slots to the ghosts, across request contexts: workerd says so and
    // drops the ghosts' continuations.
    await eventually(() => warnings(log).length > 0);
    // Past the cancelled calls' deadlines the next call per key takes its slot back and runs at once.
    await sleepUntil(startedAt + 1_100);
    for (const key of ['a', 'b']) {
      const next = await call(`reg=queued&key=${key}&path=/delay/10`);
      expect(next.status).toBe(200);
      expect(next.body.waitedMs).toBeLessThan(300);
    }
    const after = await state('queued');
    expect(after.limiters).toMatchObject({
      a: { inflight: 0, queued: 0, timedOutInQueue: 1 },
      b: { inflight: 0, queued: 0, timedOutInQueue: 1 },
    });
    // The ghosts never started nor settled, so the registry's count of them stays up for good.
    expect(after).toMatchObject({ started: 4, answered: 4 });
    expect(after.settled).toHaveLength(4);
    expect(after.busy).toEqual({ a: true, b: true });
    expect(after.registry.busy).toBe(2);
    // Both keys busy at the cap: a new key is refused.
    const fresh = await call('reg=queued&key=c&path=/delay/10');
    expect(fresh.body).toMatchObject({ error: 'TooManyKeysError' });
    expect(await state('queued')).toMatchObject({ keys: ['a', 'b'], registry: { evictions: 0, overflows: 1 } });
    expect(upstream.served).toBe(4);
  });

  it('with waitUntil: the cancelled call runs to its end once given the slot, and the keys are free at once', async () => {
    upstream.reset();
    const log = worker.stderr.length;
    await holdAndCancelQueued('queued-wu', '&waitUntil=call');
    // The request's context lives on: each ghost takes its slot, calls the upstream and settles;
    // its handler answers a client that has gone.
    const after = await stateWhen('queued-wu', (s) => s.settled.length === 4);
    expect(after.settled.map((s) => s.outcome)).toEqual(['ok', 'ok', 'ok', 'ok']);
    expect(after).toMatchObject({ started: 4, answered: 4 });
    expect(after.limiters).toMatchObject({
      a: { inflight: 0, queued: 0, admitted: 2, timedOutInQueue: 0 },
      b: { inflight: 0, queued: 0, admitted: 2, timedOutInQueue: 0 },
    });
    expect(after.busy).toEqual({ a: false, b: false });
    expect(after.registry.busy).toBe(0);
    // So a new key evicts an idle one instead of finding the registry full and busy.
    const fresh = await call('reg=queued-wu&key=c&path=/delay/10');
    expect(fresh.body).toMatchObject({ body: 'ok' });
    expect(await state('queued-wu')).toMatchObject({ keys: ['b', 'c'], registry: { evictions: 1, overflows: 0 } });
    // The ghosts did reach the upstream: 2 holders, 2 ghosts, 1 fresh.
    expect(upstream.served).toBe(5);
    expect(warnings(log)).toEqual([]);
  });

  it("with the request's signal passed to execute, the waiter leaves at once and is never handed a slot", async () => {
    upstream.reset();
    const holder = call('reg=signal&key=a&path=/delay/400');
    await eventually(() => upstream.peakConcurrent === 1);
    expect((await call('reg=signal&key=a&path=/delay/10&signal=1&abortAfter=100')).status).toBe(499);
    expect((await state('signal')).limiters.a).toMatchObject({
      inflight: 1,
      queued: 0,
      admitted: 1,
      abortedInQueue: 1,
    });
    expect((await holder).status).toBe(200);
    expect(await state('signal')).toMatchObject({
      busy: { a: false },
      registry: { busy: 0 },
      limiters: { a: { inflight: 0, queued: 0, admitted: 1, timedOutInQueue: 0 } },
    });
    expect(upstream.served).toBe(1);
  });
});

describe('a call running when its request is cancelled', { timeout: 30_000 }, () => {
  // Known defect: the call's subrequest and its timeout's timer die with the request, so the call
  // never settles and its permit is never given back; the key's limiter stays full for good.
  // Asserted as it is; a fix turns these into the waitUntil case's assertions.
  it.each([
    ['without a signal', 'running', '', [], 0],
    ['with the signal', 'running-signal', '&signal=1', ['AbortError'], 1],
  ])('without waitUntil (%s): its slot is lost for good', async (_, reg, signal, outcomes, answered) => {
    upstream.reset();
    const log = worker.stderr.length;
    expect((await call(`reg=${reg}&key=a&path=/delay/300&abortAfter=100${signal}`)).status).toBe(499);
    await eventually(() => upstream.abandoned === 1);
    await sleep(1_000); // past its 800 ms deadline
    const after = await state(reg);
    // With the signal the call itself rejects at once (and its handler answers the gone client);
    // its attempt never ends, so its slot stays taken.
    expect(after.settled.map((s) => s.outcome)).toEqual(outcomes);
    expect(after).toMatchObject({ answered, busy: { a: true }, limiters: { a: { inflight: 1, queued: 0 } } });
    // The next call waits for a slot nobody gives back.
    const next = await call(`reg=${reg}&key=a&path=/delay/10`);
    expect(next.body).toMatchObject({ error: 'TimeoutError' });
    expect((await state(reg)).limiters.a).toMatchObject({ inflight: 1, timedOutInQueue: 1 });
    expect(upstream.served).toBe(0);
    expect(warnings(log)).toEqual([]);
  });

  it('with waitUntil: it runs to its end, its answer goes nowhere, and its slot comes back', async () => {
    upstream.reset();
    expect((await call('reg=running-wu&key=a&path=/delay/300&abortAfter=100&waitUntil=call')).status).toBe(499);
    const after = await stateWhen('running-wu', (s) => s.settled.length === 1);
    expect(after).toMatchObject({
      settled: [{ outcome: 'ok', body: 'ok' }],
      answered: 1,
      busy: { a: false },
      registry: { busy: 0 },
      limiters: { a: { inflight: 0, queued: 0 } },
    });
    // The subrequest was not cancelled with the request.
    expect(upstream).toMatchObject({ served: 1, abandoned: 0 });
    const next = await call('reg=running-wu&key=a&path=/delay/10');
    expect(next.body).toMatchObject({ body: 'ok' });
    expect(next.body.waitedMs).toBeLessThan(300);
  });

  it('with the signal, waitUntil on the call is not enough: it rejects at once, before its attempt ends, and the slot is lost', async () => {
    upstream.reset();
    const query = 'reg=running-signal-wu&key=a&path=/delay/300&abortAfter=100&signal=1&waitUntil=call';
    expect((await call(query)).status).toBe(499);
    await eventually(() => upstream.abandoned === 1);
    await sleep(1_000);
    expect(await state('running-signal-wu')).toMatchObject({
      settled: [{ outcome: 'AbortError' }],
      busy: { a: true },
      limiters: { a: { inflight: 1, queued: 0 } },
    });
  });

  it("with the signal and waitUntil on the attempt's promise too, the aborted attempt ends and gives the slot back", async () => {
    upstream.reset();
    const query = 'reg=running-signal-work&key=a&path=/delay/300&abortAfter=100&signal=1&waitUntil=work';
    expect((await call(query)).status).toBe(499);
    await eventually(() => upstream.abandoned === 1);
    const after = await stateWhen('running-signal-work', (s) => s.limiters.a?.inflight === 0);
    expect(after).toMatchObject({
      settled: [{ outcome: 'AbortError' }],
      busy: { a: false },
      registry: { busy: 0 },
      limiters: { a: { inflight: 0, queued: 0 } },
    });
    expect(upstream.served).toBe(0);
    const next = await call('reg=running-signal-work&key=a&path=/delay/10');
    expect(next.body).toMatchObject({ body: 'ok' });
  });
});

describe('a retry in the pipeline, its call running when the request is cancelled', { timeout: 30_000 }, () => {
  // Known defect, as above: retry's own count of calls in flight stays up with the limiter's.
  it('without waitUntil: retry.active and the slot stay up for good', async () => {
    upstream.reset();
    expect((await call('reg=retry&key=a&path=/delay/300&abortAfter=100')).status).toBe(499);
    await eventually(() => upstream.abandoned === 1);
    await sleep(1_000);
    expect(await state('retry')).toMatchObject({
      settled: [],
      busy: { a: true },
      retries: { a: { calls: 1, active: 1 } },
      limiters: { a: { inflight: 1 } },
    });
  });

  it('with waitUntil: the call settles, retry.active is back to 0 and the slot is free', async () => {
    upstream.reset();
    expect((await call('reg=retry-wu&key=a&path=/delay/300&abortAfter=100&waitUntil=call')).status).toBe(499);
    const after = await stateWhen('retry-wu', (s) => s.settled.length === 1);
    expect(after).toMatchObject({
      settled: [{ outcome: 'ok' }],
      busy: { a: false },
      registry: { busy: 0 },
      retries: { a: { calls: 1, active: 0 } },
      limiters: { a: { inflight: 0, queued: 0 } },
    });
    expect(upstream).toMatchObject({ served: 1, abandoned: 0 });
  });
});
