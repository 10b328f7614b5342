import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
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
