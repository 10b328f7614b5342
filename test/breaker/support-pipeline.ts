import { breaker, type CircuitBreaker } from '../../src/breaker/breaker';
import type { BreakerOptions } from '../../src/breaker/options';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { pipeline, type Pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock } from '../helpers/fake-clock';

/** breaker -> bulkhead -> timeout on one fake clock (the limiter is another team's, still in progress). */
export function limiterFree(options: Omit<BreakerOptions, 'clock'> = {}): {
  clock: FakeClock;
  b: CircuitBreaker;
  p: Pipeline;
} {
  const clock = new FakeClock();
  const b = breaker({ ...options, clock });
  const p = pipeline(b, bulkhead({ clock, maxConcurrent: 10 }), timeout({ clock, timeoutMs: 5_000 }));
  return { clock, b, p };
}
