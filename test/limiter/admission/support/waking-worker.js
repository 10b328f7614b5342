// A Worker for waking-in-workerd.test.ts: one module-scope limiter (limit 1) shared by every
// request the isolate serves, so a call queued by one request is woken by another's settle.
// `./resilix.js` is the limiter bundled by the test. Plain JavaScript: what workerd runs.
import { limiter } from './resilix.js';

const shared = limiter({
  algorithm: 'fixed',
  initialLimit: 1,
  minLimit: 1,
  queueing: { initialFactor: 10, maxFactor: 11 },
});
let started = 0;

function state() {
  const s = shared.snapshot();
  return { inflight: s.inflight, queued: s.queued, admitted: s.admitted, timedOutInQueue: s.timedOutInQueue, started };
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === '/state') return Response.json(state());
    const timeoutMs = url.searchParams.has('timeoutMs') ? Number(url.searchParams.get('timeoutMs')) : undefined;
    const options = timeoutMs === undefined ? undefined : { timeoutMs };
    if (url.pathname === '/leave') {
      // Queue a call and finish the request without waiting for it: the call is left behind in a
      // request context that is already complete, as when a client goes away.
      shared
        .execute(() => {
          started++;
          return 'never';
        }, options)
        .catch(() => {});
      return Response.json({ left: true });
    }
    try {
      const body = await shared.execute(async (ctx) => {
        started++;
        const response = await fetch(`${env.UPSTREAM}/delay/${url.searchParams.get('delay')}`, { signal: ctx.signal });
        return response.text();
      }, options);
      return Response.json({ body });
    } catch (error) {
      return Response.json({ error: String(error?.message ?? error) }, { status: 503 });
    }
  },
};
