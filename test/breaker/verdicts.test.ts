import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/breaker';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { Verdict } from '../../src/core/verdict';
import { isBulkheadFullError } from '../../src/errors/index';
import { pipeline } from '../../src/pipeline/pipeline';
import { deferred, FakeClock, flush } from '../helpers/fake-clock';
import { rig } from './support';

describe('what each verdict teaches the breaker', () => {
  it.each<[Verdict, { state: string; samples: number; failures: number }]>([
    ['failure', { state: 'open', samples: 20, failures: 20 }],
    ['timeout', { state: 'open', samples: 20, failures: 20 }],
    ['ok', { state: 'closed', samples: 20, failures: 0 }],
    ['answered', { state: 'closed', samples: 20, failures: 0 }],
    ['overload', { state: 'closed', samples: 0, failures: 0 }],
    ['rejected', { state: 'closed', samples: 0, failures: 0 }],
    ['cancelled', { state: 'closed', samples: 0, failures: 0 }],
  ])('20 calls ending %s leave it %o', (verdict, expected) => {
    const { b, calls } = rig({ consecutiveFailures: Infinity });
    calls(20, verdict);
    expect(b.snapshot()).toMatchObject(expected);
  });

  it('does not let overload dilute real failures: 10 failures among 30 overloads open it', () => {
    const { b, calls } = rig({ minSamples: 10, consecutiveFailures: Infinity });
    for (let i = 0; i < 10; i++) {
      calls(3, 'overload');
      calls(1, 'failure');
    }
    expect(b.snapshot()).toMatchObject({ state: 'open', samples: 10, failureRate: 1 });
  });

  it('lets neither overload nor rejected nor cancelled break a run of failures', () => {
    const { b, calls, call } = rig();
    calls(9, 'failure');
    call('overload');
    call('rejected');
    call('cancelled');
    expect(b.snapshot().consecutiveFailures).toBe(9);
    call('failure');
    expect(b.snapshot().lastReason).toBe('consecutive-failures');
  });

  it('lets an answered call (a 4xx) break a run of failures', () => {
    const { b, calls, call } = rig();
    calls(9, 'failure');
    call('answered');
    call('failure');
    expect(b.state).toBe('closed');
    expect(b.snapshot().consecutiveFailures).toBe(1);
  });
});

describe('verdicts through execute', () => {
  it('counts thrown errors and 5xx responses as failures and 429s and 503s as neither', async () => {
    const b = breaker({ clock: new FakeClock(), consecutiveFailures: Infinity });
    await expect(b.execute(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await b.execute(() => ({ status: 500 }));
    await b.execute(() => ({ status: 429 }));
    await b.execute(() => ({ status: 503 }));
    await b.execute(() => ({ status: 404 }));
    await b.execute(() => 'fine');
    expect(b.snapshot()).toMatchObject({ samples: 4, failures: 2, failureRate: 0.5 });
  });

  it('uses its classify option', async () => {
    const b = breaker({ clock: new FakeClock(), classify: () => 'failure', consecutiveFailures: 2 });
    await b.execute(() => 'looks fine');
    await b.execute(() => 'looks fine');
    expect(b.state).toBe('open');
  });

  it('measures latency on the clock and counts a slow success as slow', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock, slowCallDurationMs: 1_000 });
    const gate = deferred<string>();
    const call = b.execute(() => gate.promise);
    clock.advance(1_500);
    gate.resolve('late');
    await call;
    expect(b.snapshot()).toMatchObject({ samples: 1, slowCalls: 1, failures: 0 });
  });

  it('ignores a call the bulkhead inside it refused: our own shedding never opens our own breaker (ADR-007)', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock, consecutiveFailures: 1 });
    const p = pipeline(b, bulkhead({ clock, maxConcurrent: 1 }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    for (let i = 0; i < 5; i++) await expect(p.execute(() => 'x')).rejects.toSatisfy(isBulkheadFullError);
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 0 });
    gate.resolve('done');
    await running;
    await flush();
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 1, failures: 0 });
  });

  it('ignores a call the caller aborted', async () => {
    const b = breaker({ clock: new FakeClock(), consecutiveFailures: 1 });
    const controller = new AbortController();
    const work = deferred<string>();
    const call = b.execute(() => work.promise, { signal: controller.signal });
    controller.abort(new Error('caller gave up'));
    await expect(call).rejects.toThrow('caller gave up');
    work.reject(new Error('the fetch saw the abort')); // settles as cancelled, not failure
    await flush();
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 0 });
  });
});
