import { describe, expect, it } from 'vitest';
import { flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';

describe('live resize: one limiter, every caller sees a new limit mid-flight', () => {
  it('admits waiters at once when the limit is raised', async () => {
    const { admission } = harness({ limit: 10 });
    fill(admission, 10);
    const waiters = Array.from({ length: 15 }, () => enqueue(admission));
    expect(admission.resize(20)).toBe(20);
    await flush();
    expect(waiters.filter((w) => w.outcome.status === 'admitted')).toHaveLength(10);
    expect(admission.inflight).toBe(20);
    expect(admission.queued).toBe(5);
  });

  it('admits nobody new after the limit is lowered until in-flight falls under it', async () => {
    const { admission } = harness({ limit: 10 });
    const running = fill(admission, 10);
    const waiters = Array.from({ length: 5 }, () => enqueue(admission));
    admission.resize(6);
    for (const permit of running.slice(0, 4)) permit.settle(OK);
    await flush();
    expect(admission.inflight).toBe(6);
    expect(waiters.every((w) => w.outcome.status === 'pending')).toBe(true);
    expect(admission.tryAcquire()).toBeUndefined();
    running[4]!.settle(OK);
    await flush();
    expect(waiters.filter((w) => w.outcome.status === 'admitted')).toHaveLength(1);
    expect(admission.inflight).toBe(6);
  });

  it('still starts a waiter handed its slot before the limit was lowered: the slot is its own', async () => {
    const { admission } = harness({ limit: 2 });
    const running = fill(admission, 2);
    const handed = enqueue(admission);
    const waiting = enqueue(admission);
    running[0]!.settle(OK); // hands the slot to `handed`; its claim runs in a later microtask
    admission.resize(1);
    await flush();
    expect(handed.outcome.status).toBe('admitted');
    expect(waiting.outcome.status).toBe('pending');
    expect(admission.inflight).toBe(2);
  });

  it('admits as many waiters as a window-close increase allows, inside the settle that closed it', async () => {
    const { admission, controller } = harness({ limit: 10 });
    const running = fill(admission, 10);
    const waiters = Array.from({ length: 8 }, () => enqueue(admission));
    controller.limitAfterNextObserve = 14;
    running[0]!.settle(OK);
    await flush();
    // 9 running after the settle, limit 14: five waiters go at once
    expect(waiters.filter((w) => w.outcome.status === 'admitted')).toHaveLength(5);
    expect(admission.inflight).toBe(14);
    expect(admission.limit).toBe(14);
  });

  it('serves the newest waiters first on a raise in lifo order', async () => {
    const { admission } = harness({ limit: 2, queueOrder: 'lifo' });
    fill(admission, 2);
    const waiters = Array.from({ length: 3 }, () => enqueue(admission));
    admission.resize(4);
    await flush();
    expect(waiters.map((w) => w.outcome.status)).toEqual(['pending', 'admitted', 'admitted']);
  });

  it('clamps a resize to the controller guardrails and reports the limit in force', () => {
    const { admission } = harness({ limit: 10 });
    // the stand-in's guardrails are 1..10 000
    expect(admission.resize(50_000)).toBe(10_000);
    expect(admission.limit).toBe(10_000);
  });

  it('passes the resize time to the controller with one clock read', () => {
    const { admission, controller, clock, counting } = harness({ limit: 10 });
    const changes: number[] = [];
    controller.changes.subscribe((c) => changes.push(c.at));
    clock.advance(123);
    counting.reads = 0;
    admission.resize(12);
    expect(changes).toEqual([123]);
    expect(counting.reads).toBe(1);
  });
});
