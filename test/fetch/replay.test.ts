import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resilientFetch } from '../../src/fetch/fetch';
import type { CallFn, ExecuteOptions } from '../../src/core/call';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { retry } from '../../src/retry/retry';

/**
 * A Request with a body, retried through resilientFetch, against a real HTTP server that answers
 * 503 to the first attempt and echoes the body of the second: every attempt sends the whole body
 * (each gets its own clone), and the caller's Request stays unread.
 */
let server: Server;
let url = '';
const received: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      received.push(body);
      if (received.length % 2 === 1) {
        res.writeHead(503).end('busy');
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`echo:${body}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('resilientFetch behind retry() with a Request body', () => {
  it('sends the whole body on every attempt and leaves the caller its Request unread', async () => {
    received.length = 0;
    const send = resilientFetch(pipeline(retry({ maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 })));
    const request = new Request(url, { method: 'POST', body: 'payload-1' });
    const response = await send(request);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe('echo:payload-1');
    expect(received).toEqual(['payload-1', 'payload-1']);
    expect(request.bodyUsed).toBe(false);
  });

  it('sends a Request without a body as it is (nothing to clone)', async () => {
    received.length = 0;
    const send = resilientFetch(pipeline(retry({ maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 })));
    const response = await send(new Request(url));
    expect(response.status).toBe(200);
    expect(received).toEqual(['', '']);
  });
});

describe('resilientFetch with no retry on the path: the Request is sent as it is, as fetch sends it', () => {
  it("consumes the caller's Request instead of teeing it (a clone would keep a copy of the body)", async () => {
    received.length = 1; // the server answers odd arrivals 503 and even ones 200: this is the second
    const send = resilientFetch(pipeline(limiter()));
    const request = new Request(url, { method: 'POST', body: 'payload-2' });
    const response = await send(request);
    expect(await response.text()).toBe('echo:payload-2');
    expect(request.bodyUsed).toBe(true);
  });

  it('still clones for a lone retry policy, and for an executor it cannot see into', async () => {
    const inner = limiter();
    const custom = { execute: <T>(fn: CallFn<T>, options?: ExecuteOptions) => inner.execute(fn, options) };
    for (const target of [retry({ maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 }), custom]) {
      received.length = 0;
      const request = new Request(url, { method: 'POST', body: 'payload-3' });
      await (await resilientFetch(target)(request)).text();
      expect(request.bodyUsed).toBe(false);
    }
  });
});
