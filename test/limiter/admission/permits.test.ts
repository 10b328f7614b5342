import { describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/core/observation';
import { flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';

describe('tryAcquire and permit.settle (the low-level pair)', () => {
  it('admits up to the limit and refuses the next call', () => {
    const { admission } = harness({ limit: 3 });
    const permits = fill(admission, 3);
    expect(permits.map((p) => p.inflight)).toEqual([1, 2, 3]);
    expect(admission.tryAcquire()).toBeUndefined();
    expect(admission.inflight).toBe(3);
  });

  it('frees the slot on settle', () => {
    const { admission } = harness({ limit: 1 });
    const [permit] = fill(admission, 1);
    permit!.settle(OK);
    expect(admission.inflight).toBe(0);
    expect(admission.tryAcquire()).toBeDefined();
  });

  it('ignores a second settle of the same permit: the slot is released and observed once', () => {
    const { admission, controller } = harness({ limit: 2 });
    const [first, second] = fill(admission, 2);
    first!.settle(OK);
    first!.settle(OK);
    first!.settle({ verdict: 'timeout', latencyMs: 1 });
    expect(admission.inflight).toBe(1);
    expect(controller.observed).toHaveLength(1);
    second!.settle(OK);
    expect(admission.inflight).toBe(0);
  });

  it('ignores a second settle in a row even when the first one handed the slot to a waiter', async () => {
    const { admission, controller } = harness({ limit: 1 });
    const [permit] = fill(admission, 1);
    const waiter = enqueue(admission);
    permit!.settle(OK);
    permit!.settle(OK);
    await flush();
    // the waiter got a different pooled object, so the stale second settle could not release it
    expect(waiter.outcome.status).toBe('admitted');
    expect(waiter.outcome.status === 'admitted' && waiter.outcome.permit).not.toBe(permit);
    expect(admission.inflight).toBe(1);
    expect(controller.observed).toHaveLength(1);
  });

  it('hands a settled permit object out again (pooled), so steady state allocates no permits', () => {
    const { admission } = harness({ limit: 2 });
    const first = admission.tryAcquire()!;
    first.settle(OK);
    const second = admission.tryAcquire()!;
    expect(second).toBe(first);
    expect(second.inflight).toBe(1);
    // the pool holds only what was ever in flight at once
    const a = admission.tryAcquire()!;
    a.settle(OK);
    second.settle(OK);
    const reused = [admission.tryAcquire()!, admission.tryAcquire()!];
    expect(new Set(reused)).toEqual(new Set([first, a]));
  });

  it('reads the clock zero times in tryAcquire and exactly once per settle', () => {
    const { admission, counting } = harness({ limit: 5 });
    counting.reads = 0;
    const permits = fill(admission, 5);
    expect(admission.tryAcquire()).toBeUndefined();
    expect(counting.reads).toBe(0);
    for (const permit of permits) permit.settle(OK);
    expect(counting.reads).toBe(5);
    permits[0]!.settle(OK);
    expect(counting.reads).toBe(5);
  });

  it('gives the controller the observation, the settle time and the in-flight count including the settling call', () => {
    const { admission, controller, clock } = harness({ limit: 5 });
    const permits = fill(admission, 3);
    clock.advance(42);
    const observation: Observation = { verdict: 'ok', latencyMs: 42 };
    permits[1]!.settle(observation);
    expect(controller.observed).toEqual([{ observation, now: 42, inflight: 3, marked: false }]);
  });

  it.each(['rejected', 'cancelled'] as const)(
    'releases the slot of a %s call and leaves it to the controller to ignore',
    (verdict) => {
      const { admission, controller } = harness({ limit: 1 });
      const [permit] = fill(admission, 1);
      permit!.settle({ verdict, latencyMs: 0 });
      expect(admission.inflight).toBe(0);
      expect(controller.observed.map((o) => o.observation.verdict)).toEqual([verdict]);
      expect(admission.tryAcquire()).toBeDefined();
    },
  );

  it('does not let a tryAcquire take a slot a waiter is owed (no queue jumping)', async () => {
    const { admission } = harness({ limit: 2 });
    const [first] = fill(admission, 2);
    const waiter = enqueue(admission);
    first!.settle(OK);
    expect(admission.tryAcquire()).toBeUndefined();
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(2);
  });

  it('refuses the fast path while anyone waits, even with a free slot (a limit listener calling in mid-settle)', async () => {
    const { admission, controller } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const waiter = enqueue(admission);
    let jumped: unknown = 'not called';
    controller.changes.subscribe(() => {
      // the slot is free and the limit has grown, but the waiter has not been served yet
      jumped = admission.tryAcquire();
    });
    controller.limitAfterNextObserve = 2;
    running!.settle(OK);
    expect(jumped).toBeUndefined();
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
  });

  it('gives the waiter the in-flight count at its admission', async () => {
    const { admission } = harness({ limit: 3 });
    const permits = fill(admission, 3);
    const waiter = enqueue(admission);
    permits[0]!.settle(OK);
    await flush();
    expect(waiter.outcome.status === 'admitted' && waiter.outcome.permit.inflight).toBe(3);
  });

  it('takes the fast path inside acquire when a slot is free and nobody waits', async () => {
    const { admission, counting } = harness({ limit: 1 });
    counting.reads = 0;
    const call = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    await flush();
    expect(call.outcome.status).toBe('admitted');
    expect(counting.reads).toBe(0);
  });

  it('still frees the slot when the controller throws in observe, and a waiter gets it at its next heartbeat', async () => {
    const { admission, controller, clock } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const waiter = enqueue(admission);
    controller.observe = () => {
      throw new Error('controller bug');
    };
    expect(() => running!.settle(OK)).toThrow('controller bug');
    expect(admission.inflight).toBe(0);
    clock.advance(1_000);
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
  });
});
