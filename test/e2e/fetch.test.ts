import { afterEach, describe, expect, it } from 'vitest';
import { startUpstream, type DemoUpstream } from '../../demo/upstream';
import { defaultClassify, type Classification } from '../../src/core/classify';
import { TimeoutError, isLimitExceededError } from '../../src/errors/index';
import { resilientFetch } from '../../src/fetch/fetch';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { KeyRegistry } from '../../src/registry/key-registry';
import { timeout } from '../../src/timeout/timeout';

/** Real fetch, real sockets, the demo's loopback server. Each test is bounded by its server's service times. */
const servers: DemoUpstream[] = [];

async function upstream(capacity: number, serviceMs: number, maxWaiting = 200): Promise<DemoUpstream> {
  const server = await startUpstream({ capacity, serviceMs, maxWaiting, jitter: 0 });
  servers.push(server);
  return server;
}

async function eventually(condition: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('resilientFetch on real sockets', { timeout: 10_000 }, () => {
  it('limits each host on its own through a KeyRegistry, in one line', async () => {
    const slow = await upstream(1, 300);
    const fast = await upstream(10, 20);
    const registry = new KeyRegistry({
      create: () => limiter({ algorithm: 'fixed', initialLimit: 2, minLimit: 1, queueing: false }),
    });
    const f = resilientFetch(registry);

    const toSlow = Array.from({ length: 4 }, () =>
      f(`${slow.url}/a`).then(
        (r) => r.status,
        (e: unknown) => e,
      ),
    );
    const toFast = Array.from({ length: 2 }, () =>
      f(`${fast.url}/b`).then(
        (r) => r.status,
        (e: unknown) => e,
      ),
    );
    const slowResults = await Promise.all(toSlow);
    const fastResults = await Promise.all(toFast);

    expect(slowResults.filter((r) => r === 200)).toHaveLength(2);
    expect(slowResults.filter((r) => isLimitExceededError(r))).toHaveLength(2);
    expect(fastResults).toEqual([200, 200]);
    expect(registry.keys()).toEqual([slow.url, fast.url]);
    expect(slow.stats().served).toBe(2);
  });

  it('aborts a real request at the deadline and the server sees the client hang up', async () => {
    const server = await upstream(1, 3_000);
    const f = resilientFetch(pipeline(timeout({ timeoutMs: 150 })));
    const startedAt = performance.now();
    const error = await f(`${server.url}/slow`).catch((e: unknown) => e);
    const elapsed = performance.now() - startedAt;
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(150);
    expect(elapsed).toBeGreaterThanOrEqual(149);
    expect(elapsed).toBeLessThan(1_500);
    await eventually(() => server.stats().abandoned === 1);
    expect(server.stats().served).toBe(0);
  });

  it("returns the server's own 503 as a Response and teaches overload with its Retry-After", async () => {
    const server = await upstream(1, 300, 0);
    const seen: Classification[] = [];
    const f = resilientFetch(pipeline(timeout({ timeoutMs: 2_000 })), {
      classify: (settled) => {
        const c = defaultClassify(settled);
        seen.push(c);
        return c;
      },
    });
    const first = f(`${server.url}/one`);
    await eventually(() => server.stats().serving === 1);
    const refused = await f(`${server.url}/two`);
    expect(refused.status).toBe(503);
    expect(await refused.text()).toBe('busy');
    expect((await first).status).toBe(200);
    expect(seen).toEqual([{ verdict: 'overload', retryAfterMs: 1_000 }, { verdict: 'ok' }]);
  });

  it('keeps the body readable after the headers, however long it is read', async () => {
    const server = await upstream(1, 20);
    const f = resilientFetch(pipeline(timeout({ timeoutMs: 100 })));
    const response = await f(`${server.url}/x`);
    await new Promise((r) => setTimeout(r, 150)); // past the deadline the call had
    expect(await response.text()).toBe('ok');
  });
});
