import { describe, expect, it } from 'vitest';
import { limiter } from '../../src/limiter/limiter';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';

/** A Response whose body records a cancel, as an unread fetch body holds its connection until then. */
function unread(status = 200): { response: Response; cancelled: () => boolean } {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    cancel() {
      cancelled = true;
    },
  });
  return { response: new Response(body, { status }), cancelled: () => cancelled };
}

describe('a value that arrives after its caller left (nobody will read it)', () => {
  it('has its body cancelled when it comes after the deadline', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    const work = deferred<Response>();
    const late = unread();
    const call = t.execute(() => work.promise);
    clock.advance(100);
    await expect(call).rejects.toThrow(/timed out/i);
    work.resolve(late.response);
    await flush();
    expect(late.cancelled()).toBe(true);
  });

  it('has its body cancelled when the caller aborted first', async () => {
    const clock = new FakeClock();
    const l = limiter({ clock });
    const leaving = new AbortController();
    const work = deferred<Response>();
    const late = unread();
    const call = l.execute(() => work.promise, { signal: leaving.signal });
    leaving.abort(new Error('caller left'));
    await expect(call).rejects.toThrow('caller left');
    expect(l.snapshot().inflight).toBe(1); // the work still runs, and holds its slot (ADR-0011)
    work.resolve(late.response);
    await flush();
    expect(late.cancelled()).toBe(true);
    expect(l.snapshot().inflight).toBe(0); // the slot went back when the work settled
  });

  it('leaves the value the caller gets alone', async () => {
    const clock = new FakeClock();
    const t = timeout({ timeoutMs: 100, clock });
    const answer = unread();
    const value = await t.execute(() => Promise.resolve(answer.response));
    await flush();
    expect(value).toBe(answer.response);
    expect(answer.cancelled()).toBe(false);
  });
});
