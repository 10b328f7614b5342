import { resolveClock, type Clock } from '../../../../src/core/clock';
import type { Observation } from '../../../../src/core/observation';
import type { Permit } from '../../../../src/core/ports';
import type { QueueingConfig } from '../../../../src/index';
import { Admission } from '../../../../src/internal';
import type { QueueOrder } from '../../../../src/limiter/wait-queue';
import { FakeClock } from '../../../helpers/fake-clock';
import { StandInController } from './stand-in-controller';

export const OK: Observation = Object.freeze({ verdict: 'ok', latencyMs: 10 });

export interface HarnessOptions {
  limit?: number;
  queueing?: QueueingConfig | false;
  queueOrder?: QueueOrder;
  random?: () => number;
  clock?: Clock;
}

/** Admission with a stand-in controller and a fake clock that counts its reads. */
export function harness(options: HarnessOptions = {}) {
  const fake = new FakeClock();
  const counting = { reads: 0 };
  const base = options.clock ?? fake;
  const clock: Clock = {
    now: () => {
      counting.reads++;
      return base.now();
    },
    setTimer: (cb, ms) => base.setTimer!(cb, ms),
    clearTimer: (h) => base.clearTimer!(h),
  };
  const controller = new StandInController(options.limit ?? 10);
  const admission = new Admission({
    clock: resolveClock(clock, 'test'),
    controller,
    queueing: options.queueing === false ? undefined : (options.queueing ?? { initialFactor: 2, maxFactor: 3 }),
    queueOrder: options.queueOrder ?? 'fifo',
    random: options.random ?? (() => 0.5),
  });
  return { admission, controller, clock: fake, counting };
}

/** Takes `n` permits through the fast path, failing loudly if one is refused. */
export function fill(admission: Admission, n: number): Permit[] {
  const permits: Permit[] = [];
  for (let i = 0; i < n; i++) {
    const permit = admission.tryAcquire();
    if (permit === undefined) throw new Error(`fast path refused permit ${i + 1} of ${n}`);
    permits.push(permit);
  }
  return permits;
}

export type Outcome =
  | { status: 'pending' }
  | { status: 'admitted'; permit: Permit }
  | { status: 'refused'; error: unknown };

/** Starts a slow-path acquire and tracks how it ends. */
export function enqueue(
  admission: Admission,
  options: { signal?: AbortSignal; deadlineAt?: number; timeoutMs?: number } = {},
): { outcome: Outcome } {
  const tracked: { outcome: Outcome } = { outcome: { status: 'pending' } };
  admission.acquire(options.signal, options.deadlineAt ?? Infinity, options.timeoutMs).then(
    (permit) => {
      tracked.outcome = { status: 'admitted', permit };
    },
    (error: unknown) => {
      tracked.outcome = { status: 'refused', error };
    },
  );
  return tracked;
}
