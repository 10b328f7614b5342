import { build } from 'esbuild';
import { Log, LogLevel, Miniflare } from 'miniflare';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * adr/0043 in the real runtime: workerd (through Miniflare) running the limiter shared by
 * concurrent requests. Before the heartbeat, two of these three queued requests were cancelled by
 * workerd as hung ("your Worker's code had hung"), and the slot handed to one of them leaked.
 */
const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..', '..');

let mf: Miniflare;
let server: Server;
let dir: string;
const upstream = { concurrent: 0, peak: 0 };

beforeAll(async () => {
  server = createServer((req, res) => {
    const ms = Number(req.url!.split('/').pop());
    upstream.concurrent++;
    upstream.peak = Math.max(upstream.peak, upstream.concurrent);
    const timer = setTimeout(() => {
      upstream.concurrent--;
      res.end('done');
    }, ms);
    req.on('close', () => {
      if (!res.writableEnded) {
        clearTimeout(timer);
        upstream.concurrent--;
      }
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  dir = await mkdtemp(join(tmpdir(), 'resilix-waking-'));
  await build({
    stdin: {
      contents: `export * from ${JSON.stringify(join(root, 'src/limiter/index.ts'))};`,
      resolveDir: root,
      loader: 'ts',
    },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    outfile: join(dir, 'resilix.js'),
    logLevel: 'silent',
  });
  await copyFile(join(here, 'support/waking-worker.js'), join(dir, 'worker.js'));
  mf = new Miniflare({
    modules: true,
    modulesRoot: dir,
    modulesRules: [{ type: 'ESModule', include: ['**/*.js'] }],
    scriptPath: join(dir, 'worker.js'),
    compatibilityDate: '2025-07-01',
    bindings: { UPSTREAM: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
    log: new Log(LogLevel.NONE),
  });
  await mf.ready;
});

afterAll(async () => {
  await mf?.dispose();
  server?.close();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await mf.dispatchFetch(`http://worker${path}`);
  const text = await response.text();
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    body = { raw: text };
  }
  return { status: response.status, body };
}

describe('waking queued calls across requests in workerd', { timeout: 30_000 }, () => {
  it('serves calls queued by concurrent requests without a deadline, one at a time, none cancelled as hung', async () => {
    upstream.peak = 0;
    const results = await Promise.all([0, 1, 2].map(() => get('/call?delay=200')));
    expect(results.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(results.map((r) => r.body.body)).toEqual(['done', 'done', 'done']);
    expect(upstream.peak).toBe(1);
    expect((await get('/state')).body).toMatchObject({ inflight: 0, queued: 0 });
  });

  it('takes back the slot handed to a call whose request had already finished, and serves the next caller', async () => {
    const before = (await get('/state')).body as { started: number; timedOutInQueue: number };
    const first = get('/call?delay=300&timeoutMs=5000');
    // wait until the first call holds the slot, then leave a call behind in a finished request
    while (((await get('/state')).body.inflight as number) < 1) await new Promise((r) => setImmediate(r));
    expect((await get('/leave?timeoutMs=400')).body).toEqual({ left: true });
    expect((await first).status).toBe(200); // its settle hands the slot to the left-behind call
    // workerd cancels that call's continuation and its timers: only the limiter can recover the slot
    const next = await get('/call?delay=20&timeoutMs=5000');
    expect(next).toEqual({ status: 200, body: { body: 'done' } });
    const after = (await get('/state')).body as { started: number; timedOutInQueue: number; inflight: number };
    expect(after.inflight).toBe(0);
    expect(after.started - before.started).toBe(2); // the left-behind call never ran
    expect(after.timedOutInQueue - before.timedOutInQueue).toBe(1);
  });
});
