import {
  breaker,
  limiter,
  pipeline,
  retry,
  type CircuitBreaker,
  type Limiter,
  type RetryPolicy,
} from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';

/**
 * Policies in a known state, for the telemetry recipes to report:
 * - `warm`: 300 calls of 120 ms, one every 50 ms (15 s, six windows): limit 10, baseline 120 ms,
 *   then 3 calls left holding permits (inflight 3).
 * - `full`: limit 4, no queue, 4 permits held, then 2 calls shed (LimitExceededError).
 * - `tripped`: a breaker with minSamples 2 after two failures (open), then one call refused.
 */
export interface Fixture {
  readonly clock: FakeClock;
  readonly warm: Limiter;
  readonly full: Limiter;
  readonly tripped: CircuitBreaker;
  readonly healthy: CircuitBreaker;
}

export async function fixture(): Promise<Fixture> {
  const clock = new FakeClock();
  const warm = limiter({ clock, initialLimit: 10 });
  for (let i = 0; i < 300; i++) {
    const permit = warm.tryAcquire()!;
    clock.advance(50);
    permit.settle({ verdict: 'ok', latencyMs: 120 });
  }
  for (let i = 0; i < 3; i++) warm.tryAcquire();

  const full = limiter({ clock, initialLimit: 4, minLimit: 4, queueing: false });
  for (let i = 0; i < 4; i++) full.tryAcquire();
  for (let i = 0; i < 2; i++) await full.execute(() => 'never runs').catch(() => undefined);

  const tripped = breaker({ clock, minSamples: 2 });
  for (let i = 0; i < 2; i++) {
    await tripped
      .execute(() => {
        throw new Error('upstream down');
      })
      .catch(() => undefined);
  }
  await tripped.execute(() => 'refused').catch(() => undefined);

  const healthy = breaker({ clock });
  return { clock, warm, full, tripped, healthy };
}

/**
 * A retry policy that has retried and given up in known ways, for the retry recipes. No backoff
 * wait (random 0), a budget of 2 retries that earns nothing, 3 attempts at most:
 * - call 1 fails three times: 2 retries (verdict `failure`), then a give-up for `maxAttempts`;
 * - call 2 fails once: the budget is spent, so a give-up for `budget` (a budget refusal);
 * - call 3 answers 503 once: the retry it asks for (`overload`) is refused by the budget too.
 * After them: 0 active calls, a budget balance of 0, 2 budget refusals.
 * `subscribe` runs before the calls, so event-fed recipes can hear them.
 */
export async function retried(subscribe: (policy: RetryPolicy) => void): Promise<RetryPolicy> {
  const clock = new FakeClock();
  const policy = retry({
    clock,
    random: () => 0,
    maxAttempts: 3,
    budget: { maxBalance: 2, ratio: 0, minRetriesPerSecond: 0 },
  });
  subscribe(policy);
  const upstream = pipeline(policy, limiter({ clock }));
  const down = () => {
    throw new Error('upstream 500');
  };
  await upstream.execute(down).catch(() => undefined);
  await upstream.execute(down).catch(() => undefined);
  await upstream.execute(() => ({ status: 503 }));
  return policy;
}
