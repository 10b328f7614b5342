/**
 * Inbound load shedding for a `node:http` server (the seed-001 middleware, with resilix): an
 * adaptive limiter in front of the handler admits what the server can take, queues a little, and
 * answers the rest at once with 503 and a Retry-After taken from the rejection's hint.
 *
 *   npx tsx examples/inbound-node.ts      # listens on 127.0.0.1:8080
 *
 * Copy it into your app as it is: it imports `resilix` as your app does.
 */
import { createServer, type IncomingMessage, type RequestListener, type ServerResponse } from 'node:http';
import { pathToFileURL } from 'node:url';
import { isResilixError, limiter, pipeline, retryAfterHeader, timeout, type Executor } from 'resilix';

/** A handler that finishes the response itself; `signal` aborts when the client goes away. */
export type Handler = (req: IncomingMessage, res: ServerResponse, signal: AbortSignal) => Promise<void>;

/**
 * Wraps a handler with a limiter (any resilix executor: a limiter, a bulkhead, a pipeline). The
 * handler's run time is the latency the limiter learns from; a thrown error counts as a failure.
 */
export function shedding(gate: Executor, handler: Handler): RequestListener {
  return (req, res) => {
    const gone = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) gone.abort(new Error('the client closed the connection'));
    });
    gate
      .execute((ctx) => handler(req, res, ctx.signal), { signal: gone.signal })
      .catch((error: unknown) => {
        if (res.headersSent || gone.signal.aborted) {
          res.destroy();
        } else if (isResilixError(error)) {
          // Shed before any work started (limit exceeded, queue deadline, bulkhead full, open breaker).
          // Retry-After: the refusal's hint in whole seconds, rounded up; 1 s without one.
          res.writeHead(503, { 'retry-after': retryAfterHeader(error), 'content-type': 'text/plain' });
          res.end('overloaded, retry later\n');
        } else {
          res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('internal error\n');
        }
      });
  };
}

/** The example's own handler: some work that takes 20 ms, then a small JSON answer. */
export const slowHello: Handler = async (_req, res, signal) => {
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, 20);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"hello":"world"}\n');
};

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // One limiter for the whole server: every request shares it, and its limit follows the latency.
  // The timeout bounds a request's wait in the queue plus its run: a client gone after a second
  // gets nothing from work done for it later.
  const gate = pipeline(limiter({ initialLimit: 20 }), timeout({ timeoutMs: 1_000 }));
  createServer(shedding(gate, slowHello)).listen(8080, '127.0.0.1', () => {
    console.log('listening on http://127.0.0.1:8080 (Ctrl-C to stop)');
  });
}
