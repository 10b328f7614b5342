import { createServer } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  eventually,
  startScriptedUpstream,
  startWorker,
  type LibraryBuild,
  type ScriptedUpstream,
  type WorkerHandle,
} from './harness';

/** A loopback port that refuses connections: a network error for fetch. */
async function closedPort(): Promise<string> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((done) => probe.close(() => done()));
  return `http://127.0.0.1:${port}`;
}

// workerd starts in about half a second; each test below makes real requests on loopback and is
// bounded by the upstream's scripted delays (all under one second). The bound is generous: the
// first hook packs the tarball, 10-30 s on a busy 2-core machine.
const BOUND_MS = 60_000;

/**
 * Every test runs twice: on the library bundled from src/ (what the code says) and on the packed
 * tarball's dist/index.js (what a user's Worker imports from npm).
 */
const LIBRARIES: ReadonlyArray<readonly [string, LibraryBuild]> = [
  ['bundled from src/', 'src'],
  ['the packed dist/index.js', 'dist'],
];

describe.each(LIBRARIES)('the library %s', (_name, library) => {
  let upstream: ScriptedUpstream;
  let other: ScriptedUpstream;
  let worker: WorkerHandle;

  async function get<T = Record<string, unknown>>(path: string): Promise<T> {
    const response = await worker.mf.dispatchFetch(`http://worker${path}`);
    return (await response.json()) as T;
  }

  beforeAll(async () => {
    upstream = await startScriptedUpstream();
    other = await startScriptedUpstream();
    worker = await startWorker(
      'worker.js',
      { UPSTREAM: upstream.url, OTHER: other.url, CLOSED: await closedPort() },
      library,
    );
  }, BOUND_MS);

  afterAll(async () => {
    await worker?.dispose();
    await upstream?.close();
    await other?.close();
  });

  beforeEach(() => upstream.reset());

  describe('resilix inside workerd', { timeout: BOUND_MS }, () => {
    it('loads and runs with no Node-only global in scope', async () => {
      const env = await get('/env');
      expect(env).toMatchObject({
        process: 'undefined',
        Buffer: 'undefined',
        setImmediate: 'undefined',
        require: 'undefined',
        global: 'undefined',
      });
      expect(env.exports).toEqual(expect.arrayContaining(['pipeline', 'timeout', 'bulkhead', 'resilientFetch']));
    });

    it('ships a bundle that names no Node-only global or module', () => {
      const code = worker.library.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '');
      expect(code).not.toMatch(/\bprocess\.|\bBuffer\.|\bsetImmediate\(|\brequire\(|from\s*["']node:|\bsetInterval\(/);
    });

    it('returns the upstream response through a pipeline around fetch and classifies it ok', async () => {
      const result = await get('/call?path=/delay/20');
      expect(result).toEqual({ status: 200, body: 'ok', seen: [{ verdict: 'ok' }] });
    });

    it.each([
      ['/status/404', 404, { verdict: 'answered' }],
      ['/status/500', 500, { verdict: 'failure' }],
      ['/status/429%3Fretry-after%3D7', 429, { verdict: 'overload', retryAfterMs: 7000 }],
      ['/status/503', 503, { verdict: 'overload' }],
    ] as const)('returns %s as fetch would and classifies it', async (path, status, classification) => {
      const result = await get<{ status: number; seen: unknown[] }>(`/call?path=${path}`);
      expect(result.status).toBe(status);
      expect(result.seen).toEqual([classification]);
    });

    it('reads a Retry-After HTTP date from a 503 inside the Worker', async () => {
      const at = new Date(Date.now() + 120_000).toUTCString();
      const result = await get<{ seen: Array<{ verdict: string; retryAfterMs: number }> }>(
        `/call?path=${encodeURIComponent(`/status/503?retry-after=${at}`)}`,
      );
      expect(result.seen[0]!.verdict).toBe('overload');
      // An HTTP date has one-second resolution; the Worker's clock and ours agree within a second.
      expect(result.seen[0]!.retryAfterMs).toBeGreaterThan(117_000);
      expect(result.seen[0]!.retryAfterMs).toBeLessThanOrEqual(120_000);
    });

    it('rejects with the network error and classifies it a failure when the upstream refuses the connection', async () => {
      const result = await get('/call?base=closed&path=/');
      // workerd's network error is a plain Error (Node's fetch throws a TypeError): the default
      // classifier must not depend on the class, and does not.
      expect(result).toMatchObject({ error: 'Error', message: 'Network connection lost.' });
      expect(result.seen).toEqual([{ verdict: 'failure' }]);
    });

    it('times out a hanging subrequest at the deadline and closes its connection', async () => {
      const result = await get<{ error: string; code: string; timeoutMs: number; elapsedMs: number; timedOut: number }>(
        '/call?path=/hang&timeoutMs=200',
      );
      expect(result).toMatchObject({ error: 'TimeoutError', code: 'ERR_RESILIX_TIMEOUT', timeoutMs: 200, timedOut: 1 });
      // workerd's clock is coarse (Spectre mitigation: it moves at I/O, not while code runs), so the
      // worker's own reading of the elapsed time may come in a few ms under the deadline (196 ms
      // measured once under Node 24's runner); an early timeout would read far less.
      expect(result.elapsedMs).toBeGreaterThanOrEqual(190);
      expect(result.elapsedMs).toBeLessThan(2_000);
      // The abort reached the socket: the upstream saw the Worker hang up.
      await eventually(() => upstream.abandoned === 1);
    });

    it("cancels the subrequest with the caller's reason when the caller's signal aborts", async () => {
      const result = await get('/cancel?path=/hang&afterMs=50');
      expect(result).toMatchObject({ error: 'Error', message: 'the caller gave up' });
      await eventually(() => upstream.abandoned === 1);
    });

    it('shares one module-scope policy across concurrent requests and sheds the excess with 503 + Retry-After', async () => {
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => worker.mf.dispatchFetch('http://worker/shared?path=/delay/300')),
      );
      const statuses = responses.map((r) => r.status).sort();
      expect(statuses).toEqual([200, 200, 503, 503, 503, 503]);
      const shed = responses.filter((r) => r.status === 503);
      expect(shed.map((r) => r.headers.get('retry-after'))).toEqual(['1', '1', '1', '1']);
      const bodies = await Promise.all(responses.map((r) => r.json() as Promise<{ error?: string }>));
      expect(bodies.filter((b) => b.error === 'BulkheadFullError')).toHaveLength(4);
      expect(upstream.peakConcurrent).toBe(2);
      expect(upstream.served).toBe(2);
    });

    it('queues concurrent requests on one module-scope limiter: slots freed by one request admit calls of another', async () => {
      const responses = await Promise.all(
        Array.from({ length: 6 }, () => worker.mf.dispatchFetch('http://worker/queued?path=/delay/200')),
      );
      const bodies = (await Promise.all(responses.map((r) => r.json()))) as Array<{ status: number; waitedMs: number }>;
      expect(bodies.map((b) => b.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(upstream.peakConcurrent).toBe(2);
      expect(upstream.served).toBe(6);
      // Three waves of two: the last wave waited for two others to finish.
      expect(Math.max(...bodies.map((b) => b.waitedMs))).toBeGreaterThanOrEqual(550);
      const stats = await get<{ limit: number; inflight: number; queued: number; admitted: number; shed: number }>(
        '/stats',
      );
      expect(stats).toMatchObject({ limit: 2, inflight: 0, queued: 0, admitted: 6, shed: 0 });
    });

    it('limits each upstream host on its own through a KeyRegistry', async () => {
      const [a1, a2, b] = await Promise.all([
        worker.mf.dispatchFetch('http://worker/per-host?base=UPSTREAM&path=/delay/300'),
        worker.mf.dispatchFetch('http://worker/per-host?base=UPSTREAM&path=/delay/300'),
        worker.mf.dispatchFetch('http://worker/per-host?base=OTHER&path=/delay/50'),
      ]);
      expect([a1!.status, a2!.status].sort()).toEqual([200, 503]);
      expect(b!.status).toBe(200);
      const refused = (await (a1!.status === 503 ? a1! : a2!).json()) as { error: string; keys: string[] };
      expect(refused.error).toBe('LimitExceededError');
      const served = (await b!.json()) as { keys: string[] };
      expect(served.keys.sort()).toEqual([upstream.url, other.url].sort());
    });

    it('takes back the slot handed to a call whose request ended while it waited, once its budget is spent', async () => {
      const startedAt = Date.now();
      // A holds the only slot for 400 ms; B's request queues a call behind it and returns at once
      // without waiting for it (no ctx.waitUntil), so workerd cancels B's continuations.
      const a = worker.mf.dispatchFetch('http://worker/ghost?path=/delay/400');
      await eventually(() => upstream.peakConcurrent === 1);
      expect((await worker.mf.dispatchFetch('http://worker/ghost-detached?path=/delay/10')).status).toBe(202);
      expect(await get('/ghost-stats')).toMatchObject({ inflight: 1, queued: 1 });
      expect(((await (await a).json()) as { status: number }).status).toBe(200);
      // A's settle handed the slot to B, whose continuation will never run: the slot is stuck.
      expect(await get('/ghost-stats')).toMatchObject({ inflight: 1, queued: 0, timedOutInQueue: 0 });
      // B's budget (800 ms) runs out; the next call's slow path takes the slot back and runs at once.
      await new Promise((r) => setTimeout(r, Math.max(0, startedAt + 1_000 - Date.now())));
      const c = (await get('/ghost?path=/delay/10')) as { status: number; waitedMs: number };
      expect(c.status).toBe(200);
      expect(c.waitedMs).toBeLessThan(300);
      expect(await get('/ghost-stats')).toMatchObject({ inflight: 0, queued: 0, admitted: 3, timedOutInQueue: 1 });
      // B's call never reached the upstream.
      expect(upstream.served).toBe(2);
    });
  });
});
