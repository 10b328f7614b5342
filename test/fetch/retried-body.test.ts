import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resilientFetch } from '../../src/fetch/fetch';
import { pipeline } from '../../src/pipeline/pipeline';
import { retry } from '../../src/retry/retry';

/**
 * A retried Response's body is cancelled, against a real HTTP server that keeps connections alive for 60 s (nginx's
 * 75 s is in that range). Left unread, each retried 503 kept its socket until the server's keep-alive closed it:
 * one socket per retry, during an outage, when retries come in bursts.
 */
const BUSY = 'b'.repeat(64 * 1024); // past what undici reads ahead of the caller
let server: Server;
let url = '';
const open = new Set<Socket>();
/** How each request is answered: '503', '503-wait' (Retry-After: 1) or '200'. */
let answers: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const answer = answers.shift() ?? '200';
      if (answer === '200') res.writeHead(200).end('ok');
      else res.writeHead(503, answer === '503-wait' ? { 'retry-after': '1' } : {}).end(BUSY);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.on('connection', (socket) => {
    open.add(socket);
    socket.on('close', () => open.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

async function socketsSettleAt(most: number): Promise<number> {
  for (let i = 0; i < 50 && open.size > most; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  return open.size;
}

describe('a retried Response (real HTTP server)', () => {
  it('has its body cancelled: ten calls that each retry a 503 leave at most two sockets, not eleven', async () => {
    server.closeAllConnections();
    await socketsSettleAt(0);
    const api = resilientFetch(pipeline(retry({ baseDelayMs: 0, budget: false })));
    for (let i = 0; i < 10; i++) {
      answers = ['503', '200'];
      const response = await api(url);
      expect(await response.text()).toBe('ok');
    }
    // Unread, the ten 503s held ten sockets and the 200s shared one: 11 (resilix 0.3).
    expect(await socketsSettleAt(2)).toBeLessThanOrEqual(2);
  });

  it('keeps the body of the Response it returns: a 503 it gives up on is read in full', async () => {
    const api = resilientFetch(pipeline(retry({ baseDelayMs: 0, budget: false, maxAttempts: 2 })));
    answers = ['503', '503'];
    const response = await api(url);
    expect(response.status).toBe(503);
    expect(await response.text()).toBe(BUSY);
  });
});
