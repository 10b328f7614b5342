import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  BrokenCircuitError,
  BulkheadFullError,
  isResilixError,
  LimitExceededError,
  TimeoutError,
  TooManyKeysError,
  type AnyResilixError,
  type PolicySnapshot,
  breaker,
  bulkhead,
  limiter,
  pipeline,
  timeout,
} from '../../src/index';

/** What a caller's `switch (error.code)` can read once the code narrowed the error to its class. */
function describeRefusal(error: unknown): string {
  if (!isResilixError(error)) return 'not ours';
  switch (error.code) {
    case 'ERR_RESILIX_TIMEOUT':
      expectTypeOf(error).toEqualTypeOf<TimeoutError>();
      return `timeout ${error.timeoutMs} ms${error.queued ? ' (queued)' : ''}`;
    case 'ERR_RESILIX_TOO_MANY_KEYS':
      expectTypeOf(error).toEqualTypeOf<TooManyKeysError>();
      return `registry full at ${error.maxKeys} keys`;
    case 'ERR_RESILIX_LIMIT_EXCEEDED':
      expectTypeOf(error).toEqualTypeOf<LimitExceededError>();
      return 'shed';
    case 'ERR_RESILIX_CIRCUIT_OPEN':
      expectTypeOf(error).toEqualTypeOf<BrokenCircuitError>();
      return 'open';
    case 'ERR_RESILIX_BULKHEAD_FULL':
      expectTypeOf(error).toEqualTypeOf<BulkheadFullError>();
      return 'full';
    default:
      // Every code is handled: the union is exhaustive.
      expectTypeOf(error).toBeNever();
      return 'unreachable';
  }
}

describe('ResilixError.code narrows to the subclass', () => {
  it('reads the fields of each subclass after a switch on code', () => {
    expect(
      [
        new TimeoutError({ timeoutMs: 250, queued: true }),
        new TooManyKeysError({ maxKeys: 3, key: 'k' }),
        new LimitExceededError(),
        new BrokenCircuitError(),
        new BulkheadFullError(),
        new Error('plain'),
      ].map(describeRefusal),
    ).toEqual(['timeout 250 ms (queued)', 'registry full at 3 keys', 'shed', 'open', 'full', 'not ours']);
  });

  it('types isResilixError as the union of the five errors', () => {
    expectTypeOf<AnyResilixError['code']>().toEqualTypeOf<
      | 'ERR_RESILIX_CIRCUIT_OPEN'
      | 'ERR_RESILIX_LIMIT_EXCEEDED'
      | 'ERR_RESILIX_BULKHEAD_FULL'
      | 'ERR_RESILIX_TIMEOUT'
      | 'ERR_RESILIX_TOO_MANY_KEYS'
    >();
    expect(isResilixError(new TimeoutError({ timeoutMs: 1 }))).toBe(true);
  });
});

describe('PipelineSnapshot.policies', () => {
  it('is a union of the policy snapshots, narrowed by kind', () => {
    const snapshot = pipeline(
      breaker(),
      limiter({ initialLimit: 7 }),
      bulkhead({ maxConcurrent: 3 }),
      timeout({ timeoutMs: 9 }),
    ).snapshot();
    expectTypeOf(snapshot.policies).toEqualTypeOf<readonly PolicySnapshot[]>();
    const read = snapshot.policies.map((s) => {
      switch (s.kind) {
        case 'breaker':
          return `${s.kind} ${s.state}`;
        case 'limiter':
          return `${s.kind} ${s.limit}`;
        case 'bulkhead':
          return `${s.kind} ${s.maxConcurrent}`;
        case 'timeout':
          return `${s.kind} ${s.timeoutMs}`;
        case 'retry':
          return `${s.kind} ${s.maxAttempts}`;
        default: {
          const unnamed: never = s; // fails to compile if a kind is missing above
          return unnamed;
        }
      }
    });
    expect(read).toEqual(['breaker closed', 'limiter 7', 'bulkhead 3', 'timeout 9']);
  });
});
