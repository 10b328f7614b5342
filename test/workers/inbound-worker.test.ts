import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  eventually,
  startBundledWorker,
  startScriptedUpstream,
  type LibraryBuild,
  type ScriptedUpstream,
  type WorkerHandle,
} from './harness';

/**
 * examples/inbound-worker.ts, bundled as it is and run in workerd, in front of a loopback origin:
 * its `import ... from 'resilix'` is src/ once, and the packed dist/index.js once.
 */
const LIBRARIES: ReadonlyArray<readonly [string, LibraryBuild]> = [
  ['src/', 'src'],
  ['the packed dist/', 'dist'],
];

describe.each(LIBRARIES)('with resilix from %s', (_name, library) => {
  let origin: ScriptedUpstream;
  let worker: WorkerHandle;

  beforeAll(async () => {
    origin = await startScriptedUpstream();
    worker = await startBundledWorker('examples/inbound-worker.ts', { ORIGIN: origin.url }, library);
  }, 15_000);

  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  describe('the inbound Workers example (examples/inbound-worker.ts)', { timeout: 15_000 }, () => {
    it('serves a request through the module-scope limiter', async () => {
      const response = await worker.mf.dispatchFetch('http://worker/delay/10');
      expect(response.status).toBe(200);
      expect(response.headers.get('x-served-by')).toBe('resilix-example');
      expect(await response.text()).toBe('ok');
    });

    it('admits 4 at first (at most 8 as its slow start grows), queues a few and sheds the rest with 503 and Retry-After', async () => {
      origin.reset();
      // Limit 4, queueing factors 2 and 3: 4 run, 4 more wait, the next 4 wait with a rising
      // chance of rejection, and from 12 running + waiting every arrival is shed.
      const responses = await Promise.all(
        Array.from({ length: 14 }, () => worker.mf.dispatchFetch('http://worker/delay/300')),
      );
      const ok = responses.filter((r) => r.status === 200);
      const shed = responses.filter((r) => r.status === 503);
      expect(ok.length + shed.length).toBe(14);
      expect(ok.length).toBeGreaterThanOrEqual(9);
      expect(shed.length).toBeGreaterThanOrEqual(2);
      for (const r of shed) {
        expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(await r.text()).toBe('overloaded, retry later\n');
      }
      await Promise.all(ok.map((r) => r.text()));
      // The limiter starts at 4 and its slow start grows the limit by one per call that found it
      // full (adr/0045), at most to twice a round's starting limit: 4 at first, never more than 8.
      expect(origin.peakConcurrent).toBeGreaterThanOrEqual(4);
      expect(origin.peakConcurrent).toBeLessThanOrEqual(8);
      expect(origin.served).toBe(ok.length);
    });
  });
});

/**
 * The example behind a client that goes away while the handler runs (the harness's cancelling
 * client, with `?abortAfter=`): workerd cancels the request, its subrequest to the origin, its
 * timers and its promise continuations (docs/workers.md, "A request its client cancels"). A
 * cancelled handler's slot must still come back, or after `initialLimit` (4) such requests every
 * request of the isolate waits for slots nobody gives back, and is shed with 503 at its 2 s
 * deadline. With `enable_request_signal` the example's `{ signal: request.signal }` aborts the call
 * and its subrequest; without it the request's signal never aborts.
 */
const FLAGS: ReadonlyArray<readonly [string, string[]]> = [
  ['with enable_request_signal', ['enable_request_signal']],
  ['without enable_request_signal', []],
];

describe.each(FLAGS)('the inbound Workers example, requests its client cancels (%s)', (_name, flags) => {
  let origin: ScriptedUpstream;
  let worker: WorkerHandle;

  beforeAll(async () => {
    origin = await startScriptedUpstream();
    worker = await startBundledWorker('examples/inbound-worker.ts', { ORIGIN: origin.url }, 'src', {
      client: 'cancelling-client.js',
      compatibilityFlags: flags,
    });
  }, 15_000);

  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  it('gives back the slot of every cancelled request: after 6, a burst of 4 is served, none shed', {
    timeout: 30_000,
  }, async () => {
    const CANCELLED = 6;
    origin.reset();
    // One at a time, each cancelled 100 ms into its 300 ms subrequest (the client answers 499).
    for (let i = 0; i < CANCELLED; i++) {
      const cancelled = await worker.mf.dispatchFetch('http://worker/delay/300?abortAfter=100');
      expect(cancelled.status).toBe(499);
      await cancelled.text();
    }
    // The origin's work is over: no subrequest is open there.
    await eventually(() => origin.concurrent === 0, 3_000);
    // As many requests at once as the limit's initial value: a limiter with its slots serves them
    // all at once; one whose slots were lost queues them until their deadline and sheds them.
    const burst = await Promise.all(Array.from({ length: 4 }, () => worker.mf.dispatchFetch('http://worker/delay/50')));
    const statuses = burst.map((r) => r.status);
    await Promise.all(burst.map((r) => r.text()));
    expect(statuses).toEqual([200, 200, 200, 200]);
    // Every cancelled request reached the origin: its subrequest was cancelled (the origin saw the
    // connection close) or, kept alive by waitUntil, served; then the burst's 4.
    expect(origin.abandoned + origin.served).toBe(CANCELLED + 4);
    // workerd logged no promise resolved across request contexts and no uncaught error.
    expect(worker.stderr.filter((line) => /different request context|Uncaught/.test(line))).toEqual([]);
  });
});
