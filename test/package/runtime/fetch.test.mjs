import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { isTimeoutError, KeyRegistry, limiter, originKey, pipeline, resilientFetch, timeout } from 'resilix';

/** A loopback upstream: /ok answers 200, /busy 503 with Retry-After 3, /hang never answers. */
let server;
let base;
const sockets = new Set();

before(async () => {
  server = createServer((req, res) => {
    if (req.url === '/ok') res.end('ok');
    else if (req.url === '/busy') {
      res.writeHead(503, { 'retry-after': '3' });
      res.end('busy');
    }
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${server.address().port}`;
});

after(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

describe("resilientFetch over Node's own fetch, from the packed dist/", () => {
  it('returns the response and teaches the pipeline ok', async () => {
    const p = pipeline(limiter(), timeout({ timeoutMs: 2_000 }));
    const verdicts = [];
    p.onSettle((o) => verdicts.push(o.verdict));
    const response = await resilientFetch(p)(`${base}/ok`);
    assert.equal(await response.text(), 'ok');
    assert.deepEqual(verdicts, ['ok']);
  });

  it('returns a 503 as fetch does, and reads its Retry-After as overload', async () => {
    const p = pipeline(limiter());
    const seen = [];
    p.onSettle((o) => seen.push([o.verdict, o.retryAfterMs]));
    const response = await resilientFetch(p)(new Request(`${base}/busy`));
    assert.equal(response.status, 503);
    await response.text();
    assert.deepEqual(seen, [['overload', 3_000]]);
  });

  it('keys a KeyRegistry by origin', async () => {
    const registry = new KeyRegistry({ create: () => limiter() });
    await (await resilientFetch(registry)(new URL(`${base}/ok`))).text();
    assert.deepEqual([...registry.keys()], [originKey(base)]);
  });

  it('times out a request that gets no answer and aborts it', async () => {
    const error = await resilientFetch(pipeline(timeout({ timeoutMs: 50 })))(`${base}/hang`).catch((e) => e);
    assert.equal(isTimeoutError(error), true);
  });
});
