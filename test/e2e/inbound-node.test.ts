import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { shedding, slowHello, type Handler } from '../../examples/inbound-node';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { Executor } from '../../src/core/call';
import { limiter } from '../../src/limiter/limiter';

const running: Array<{ server: Server; sockets: Set<Socket> }> = [];

async function serve(gate: Executor, handler: Handler): Promise<string> {
  const server = createServer(shedding(gate, handler));
  const sockets = new Set<Socket>();
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  running.push({ server, sockets });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function eventually(condition: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

afterEach(async () => {
  for (const { server, sockets } of running.splice(0)) {
    for (const s of sockets) s.destroy();
    await new Promise<void>((done) => server.close(() => done()));
  }
});

describe('the inbound node:http example (examples/inbound-node.ts)', { timeout: 10_000 }, () => {
  it('serves what the limiter admits and sheds the rest with 503 and Retry-After', async () => {
    let entered = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const url = await serve(
      limiter({ algorithm: 'fixed', initialLimit: 2, minLimit: 1, queueing: false }),
      async (_req, res) => {
        entered++;
        await released;
        res.end('done');
      },
    );
    const admitted = [fetch(url), fetch(url)];
    await eventually(() => entered === 2);
    const shed = await Promise.all([fetch(url), fetch(url), fetch(url)]);
    expect(shed.map((r) => r.status)).toEqual([503, 503, 503]);
    for (const r of shed) expect(Number(r.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await shed[0]!.text()).toBe('overloaded, retry later\n');
    release();
    const served = await Promise.all(admitted);
    expect(served.map((r) => r.status)).toEqual([200, 200]);
    expect(entered).toBe(2);
  });

  it("sends 1 s when the rejection gives no hint (seed 001's constant)", async () => {
    const gate = bulkhead({ maxConcurrent: 1 });
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const url = await serve(gate, async (_req, res) => {
      await released;
      res.end('done');
    });
    const first = fetch(url);
    await eventually(() => gate.active === 1);
    const second = await fetch(url);
    expect(second.status).toBe(503);
    expect(second.headers.get('retry-after')).toBe('1');
    release();
    expect((await first).status).toBe(200);
  });

  it("serves the example's own handler through the gate", async () => {
    const response = await fetch(await serve(bulkhead({ maxConcurrent: 1 }), slowHello));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ hello: 'world' });
  });

  it('answers 500 when the handler throws before answering', async () => {
    const url = await serve(bulkhead({ maxConcurrent: 4 }), async () => {
      throw new Error('the handler broke');
    });
    const response = await fetch(url);
    expect(response.status).toBe(500);
  });

  it('aborts the handler signal when the client hangs up, and frees the slot', async () => {
    const gate = bulkhead({ maxConcurrent: 1 });
    let aborted: unknown;
    const url = await serve(gate, (_req, _res, signal) => {
      return new Promise<void>((_resolve, reject) => {
        signal.addEventListener('abort', () => {
          aborted = signal.reason;
          reject(signal.reason);
        });
      });
    });
    const client = new AbortController();
    const pending = fetch(url, { signal: client.signal }).catch((e: unknown) => e);
    await eventually(() => gate.active === 1);
    client.abort();
    await pending;
    await eventually(() => aborted !== undefined);
    expect(String(aborted)).toContain('the client closed the connection');
    await eventually(() => gate.active === 0);
  });
});
