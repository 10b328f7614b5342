import { breaker, limiter, type CircuitBreaker, type Limiter } from '../../src/index';
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
