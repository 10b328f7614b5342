import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  breaker,
  bulkhead,
  isBrokenCircuitError,
  isBulkheadFullError,
  isLimitExceededError,
  isTimeoutError,
  limiter,
  pipeline,
  retryAfterHeader,
  timeout,
} from 'resilix';

/** A virtual clock: time moves only when a test advances it (no sleeps). */
function fakeClock() {
  let now = 0;
  return {
    now: () => now,
    advance(ms) {
      now += ms;
    },
  };
}

describe('the policies, from the packed dist/', () => {
  it('runs a call through the four policies and reports it once', async () => {
    const p = pipeline(breaker(), limiter(), bulkhead({ maxConcurrent: 4 }), timeout({ timeoutMs: 1_000 }));
    const seen = [];
    const sub = p.onSettle((o) => seen.push([o.verdict, o.attempt]));
    assert.equal(await p.execute((ctx) => `attempt ${ctx.attempt}`, { attempt: 2 }), 'attempt 2');
    sub.dispose();
    assert.deepEqual(seen, [['ok', 2]]);
    assert.deepEqual(
      p.snapshot().policies.map((s) => s.kind),
      ['breaker', 'limiter', 'bulkhead', 'timeout'],
    );
  });

  it('sheds past the limit with a typed error and a Retry-After value', async () => {
    const quota = limiter({ initialLimit: 2, minLimit: 2, queueing: false });
    const held = [quota.tryAcquire(), quota.tryAcquire()];
    const error = await quota.execute(() => 'never').catch((e) => e);
    assert.equal(isLimitExceededError(error), true);
    assert.match(retryAfterHeader(error), /^[1-9][0-9]*$/);
    for (const permit of held) permit.settle({ verdict: 'ok', latencyMs: 1 });
    assert.equal(quota.inflight, 0);
  });

  it('refuses past a full bulkhead', async () => {
    const gate = bulkhead({ maxConcurrent: 1 });
    let release;
    const first = gate.execute(() => new Promise((resolve) => (release = resolve)));
    const second = await gate.execute(() => 'never').catch((e) => e);
    assert.equal(isBulkheadFullError(second), true);
    release('done');
    assert.equal(await first, 'done');
  });

  it('opens the breaker after failures and refuses the next call', async () => {
    const clock = fakeClock();
    const b = breaker({ clock, minSamples: 2 });
    const opened = [];
    b.onOpen((e) => opened.push(e.reason));
    for (let i = 0; i < 2; i++) {
      await b
        .execute(() => {
          throw new Error('down');
        })
        .catch(() => undefined);
    }
    assert.deepEqual(opened, ['failure-rate']);
    assert.equal(isBrokenCircuitError(await b.execute(() => 'refused').catch((e) => e)), true);
  });

  it('times a hanging call out with the platform timer and aborts its signal', async () => {
    // resilix unrefs its deadline timer (it must not keep a process alive): this one keeps the
    // test's event loop running while the hanging call waits for it.
    const keepAlive = setTimeout(() => undefined, 5_000);
    const t = timeout({ timeoutMs: 20 });
    let signal;
    const error = await t
      .execute((ctx) => {
        signal = ctx.signal;
        return new Promise(() => undefined);
      })
      .catch((e) => e);
    clearTimeout(keepAlive);
    assert.equal(isTimeoutError(error), true);
    assert.equal(error.timeoutMs, 20);
    assert.equal(signal.aborted, true);
  });

  it("cancels a call when the caller's signal aborts", async () => {
    const caller = new AbortController();
    const reason = new Error('caller gave up');
    const seen = [];
    const p = pipeline(limiter());
    p.onSettle((o) => seen.push(o.verdict));
    const call = p.execute(
      (ctx) => new Promise((_resolve, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason))),
      { signal: caller.signal },
    );
    caller.abort(reason);
    assert.equal(await call.catch((e) => e), reason);
    assert.deepEqual(seen, ['cancelled']);
  });
});
