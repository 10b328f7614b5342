import { describe, expect, it, vi } from 'vitest';
import { flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';

describe('a caller that aborts while queued', () => {
  it('leaves the queue at once with its signal reason', async () => {
    const { admission, clock } = harness({ limit: 1 });
    fill(admission, 1);
    const controller = new AbortController();
    const call = enqueue(admission, { signal: controller.signal, deadlineAt: 1_000, timeoutMs: 1_000 });
    expect(admission.queued).toBe(1);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    expect(admission.queued).toBe(0);
    await flush();
    expect(call.outcome).toEqual({ status: 'refused', error: reason });
    expect(clock.pendingTimers).toBe(0);
    expect(admission.counters().abortedInQueue).toBe(1);
  });

  it('leaks no slot: the limiter drains to zero and admits a full limit again', async () => {
    const { admission } = harness({ limit: 2 });
    const running = fill(admission, 2);
    const controllers = [new AbortController(), new AbortController(), new AbortController()];
    for (const c of controllers) enqueue(admission, { signal: c.signal });
    for (const c of controllers) c.abort();
    for (const permit of running) permit.settle(OK);
    await flush();
    expect(admission.inflight).toBe(0);
    expect(admission.queued).toBe(0);
    expect(fill(admission, 2)).toHaveLength(2);
  });

  it('does not starve the waiter behind it (the bulkhead-queue starvation cockatiel has on abort)', async () => {
    const { admission } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const aborter = new AbortController();
    const aborted = enqueue(admission, { signal: aborter.signal });
    const behind = enqueue(admission);
    aborter.abort();
    running!.settle(OK);
    await flush();
    expect(aborted.outcome.status).toBe('refused');
    expect(behind.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
  });

  it('rejects at once, without queueing, when the signal is already aborted', async () => {
    const { admission } = harness({ limit: 1 });
    fill(admission, 1);
    const reason = new Error('already');
    const call = enqueue(admission, { signal: AbortSignal.abort(reason) });
    expect(admission.queued).toBe(0);
    await flush();
    expect(call.outcome).toEqual({ status: 'refused', error: reason });
  });

  it('removes its abort listener when it is admitted, so a later abort does not touch admission', async () => {
    const { admission } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const aborter = new AbortController();
    const removed = vi.spyOn(aborter.signal, 'removeEventListener');
    const call = enqueue(admission, { signal: aborter.signal });
    running!.settle(OK);
    await flush();
    expect(call.outcome.status).toBe('admitted');
    expect(removed).toHaveBeenCalledWith('abort', expect.any(Function));
    aborter.abort();
    expect(admission.inflight).toBe(1);
    expect(admission.counters().abortedInQueue).toBe(0);
  });

  it('gives the slot back when the caller aborts after being handed it but before claiming it', async () => {
    const { admission } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const aborter = new AbortController();
    const handed = enqueue(admission, { signal: aborter.signal });
    const next = enqueue(admission);
    running!.settle(OK); // hands the slot to `handed`, whose claim has not run yet
    const reason = new Error('too late');
    aborter.abort(reason);
    await flush();
    expect(handed.outcome).toEqual({ status: 'refused', error: reason });
    expect(next.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
  });
});
