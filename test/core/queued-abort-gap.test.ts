import { describe, expect, it } from 'vitest';
import { limiter } from '../../src/limiter/index';
import { FakeClock, flush } from '../helpers/fake-clock';

describe('a caller who aborts between the wake-up and the start', () => {
  it.each([0, 1, 2, 3, 4, 5, 6, 8])(
    'never starts fn once the caller aborted (abort %i microtasks after the wake-up)',
    async (delay) => {
      const clock = new FakeClock();
      const l = limiter({ algorithm: 'fixed', initialLimit: 1, minLimit: 1, clock });
      const held = l.tryAcquire()!;
      const controller = new AbortController();
      let started = false;
      const queued = l.execute(
        () => {
          started = true;
        },
        { signal: controller.signal },
      );
      await flush();
      expect(l.queued).toBe(1);
      held.settle({ verdict: 'ok', latencyMs: 1 });
      for (let i = 0; i < delay; i++) await Promise.resolve();
      const reason = new Error('left just now');
      const startedBeforeAbort = started;
      controller.abort(reason);
      const outcome = await queued.then(
        () => 'resolved',
        (e: unknown) => e,
      );
      await flush();
      if (!startedBeforeAbort) {
        expect(started).toBe(false);
        expect(outcome).toBe(reason);
      }
      expect(l.inflight).toBe(0);
      expect(l.queued).toBe(0);
    },
  );
});
