import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resilientFetch } from '../../src/fetch/fetch';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';

/**
 * Issue 15, defect 5, on real sockets and the platform fetch: the caller's signal bounds the body
 * read, with or without a deadline in the pipeline (docs/fetch.md). The server sends its headers at
 * once and then one chunk every 30 ms for 330 ms; the caller's signal fires 90 ms after the headers.
 */
let server: Server;
let url: string;

beforeAll(async () => {
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.flushHeaders();
    let sent = 0;
    const tick = setInterval(() => {
      response.write(`chunk ${sent}\n`);
      if (++sent === 11) {
        clearInterval(tick);
        response.end();
      }
    }, 30);
    response.on('close', () => clearInterval(tick));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function readBody(response: Response): Promise<string> {
  try {
    const text = await response.text();
    return `read to the end (${text.split('\n').length - 1} chunks)`;
  } catch (error) {
    return `aborted: ${(error as Error).name}`;
  }
}

describe("the caller's signal and the body, on real sockets", { timeout: 10_000 }, () => {
  it.each([
    ['with a deadline', () => pipeline(limiter(), timeout({ timeoutMs: 5_000 }))],
    ['without a deadline', () => pipeline(limiter())],
  ])('aborts the body read when the caller signal fires, %s', async (_name, build) => {
    const api = resilientFetch(build());
    const caller = new AbortController();
    const response = await api(url, { signal: caller.signal });
    expect(response.status).toBe(200);
    // Fired after the headers, not on a timer from the request: on a loaded machine the first
    // fetch of a process took longer than a fixed delay to connect, and the abort came too early.
    setTimeout(() => caller.abort(new DOMException('the caller gave up', 'TimeoutError')), 90);
    expect(await readBody(response)).toBe('aborted: TimeoutError');
  });

  it('reads the whole body past the deadline when the caller gave no signal', async () => {
    const api = resilientFetch(pipeline(limiter(), timeout({ timeoutMs: 100 })));
    const response = await api(url);
    expect(await readBody(response)).toBe('read to the end (11 chunks)');
  });
});
