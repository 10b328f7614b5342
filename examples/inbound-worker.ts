/**
 * Inbound load shedding for a Cloudflare Worker: the same idea as examples/inbound-node.ts, for a
 * `fetch` handler. The limiter lives at module scope, so every request this isolate serves shares
 * it. It is per isolate, not per Worker: Cloudflare runs many isolates, each with its own limit
 * (see docs/workers.md).
 *
 * Copy it into your app as it is: it imports `resilix` as your app does.
 */
import { isResilixError, limiter, pipeline, retryAfterHeader, timeout, type Executor } from 'resilix';

export type FetchHandler<Env> = (request: Request, env: Env, signal: AbortSignal) => Promise<Response>;

/** The part of a module Worker's `ctx` (its fetch's third argument) used here. */
interface ExecutionContext {
  waitUntil(promise: Promise<unknown>): void;
}

/**
 * Wraps a Worker's fetch handler with a limiter (any resilix executor). The handler's Response is
 * classified by its status, as an outbound one would be: a 5xx teaches the limiter a failure.
 */
export function shedding<Env>(gate: Executor, handler: FetchHandler<Env>) {
  return async (request: Request, env: Env, ctx: ExecutionContext): Promise<Response> => {
    try {
      return await gate.execute(
        (call) => {
          const work = handler(request, env, call.signal);
          // When the client goes away, workerd cancels the request's continuations: without
          // waitUntil the handler's end is never seen and its slot never given back
          // (docs/workers.md, "A request its client cancels").
          ctx.waitUntil(work.catch(() => {}));
          return work;
        },
        // A request still queued when its client goes away leaves the queue at once (with the
        // `enable_request_signal` compatibility flag; without it, at its deadline).
        { signal: request.signal },
      );
    } catch (error) {
      if (!isResilixError(error)) throw error;
      return new Response('overloaded, retry later\n', {
        status: 503,
        // Retry-After: the refusal's hint in whole seconds, rounded up; 1 s without one.
        headers: { 'retry-after': retryAfterHeader(error), 'content-type': 'text/plain' },
      });
    }
  };
}

interface Env {
  /** Where this Worker's own work goes (a text binding, e.g. `https://origin.example.com`). */
  ORIGIN: string;
}

// Module scope: shared by every request of this isolate. `initialLimit` 4: the slow start begins
// there (the default is 1) and the limiter finds the real value from latency.
const gate = pipeline(limiter({ initialLimit: 4, minLimit: 1 }), timeout({ timeoutMs: 2_000 }));

export default {
  fetch: shedding<Env>(gate, async (request, env, signal) => {
    // The handler's work: one subrequest to the origin, cancelled if the client goes away.
    const url = new URL(request.url);
    const upstream = await fetch(env.ORIGIN + url.pathname, { signal });
    return new Response(upstream.body, { status: upstream.status, headers: { 'x-served-by': 'resilix-example' } });
  }),
};
