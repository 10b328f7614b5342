/**
 * resilix -> OpenTelemetry metrics, through `@opentelemetry/api` only (your app brings the SDK and
 * the exporter). A recipe to copy into your app (resilix itself depends on nothing): read
 * docs/telemetry.md first.
 *
 * - Observable gauges and counters read `snapshot()` in one batch callback at collection time, so
 *   resilix does no work between collections and nothing runs on a timer.
 * - `instrument()` wraps an executor to count calls by attempt (original or retry) and outcome.
 *
 * In your app: `import type { CircuitBreaker, Executor, Limiter } from 'resilix'`.
 */
import type { Attributes, BatchObservableCallback, Meter, Observable } from '@opentelemetry/api';
import {
  isBrokenCircuitError,
  isBulkheadFullError,
  isLimitExceededError,
  isTimeoutError,
  type CallFn,
  type CircuitBreaker,
  type CircuitState,
  type ExecuteOptions,
  type Executor,
  type Limiter,
} from '../src/index';

/** Named policies: a fixed object, or a function read at every collection (for a KeyRegistry's keys). */
export type Named<P> = Readonly<Record<string, P>> | (() => Iterable<readonly [string, P]>);

export interface OtelSources {
  /** Limiters by name; the name is the `resilix.limiter` attribute. */
  limiters?: Named<Limiter>;
  /** Breakers by name; the name is the `resilix.breaker` attribute. */
  breakers?: Named<CircuitBreaker>;
}

const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];

function entriesOf<P>(named: Named<P> | undefined): Iterable<readonly [string, P]> {
  if (named === undefined) return [];
  return typeof named === 'function' ? named() : Object.entries(named);
}

/**
 * Creates the resilix instruments on `meter` and observes them in one batch callback. Returns a
 * function that stops observing (call it when the policies go away).
 */
export function observeResilix(meter: Meter, sources: OtelSources): () => void {
  const limit = meter.createObservableGauge('resilix.limiter.limit', {
    description: 'The adaptive concurrency limit now in force.',
    unit: '{call}',
  });
  const inflight = meter.createObservableGauge('resilix.limiter.inflight', {
    description: 'Calls holding a limiter permit now.',
    unit: '{call}',
  });
  const queued = meter.createObservableGauge('resilix.limiter.queued', {
    description: 'Calls waiting in the limiter queue now.',
    unit: '{call}',
  });
  const baseline = meter.createObservableGauge('resilix.limiter.baseline', {
    description: 'The no-load latency the limiter compares against.',
    unit: 'ms',
  });
  const shed = meter.createObservableCounter('resilix.limiter.shed', {
    description: 'Calls shed by the limiter (LimitExceededError).',
    unit: '{call}',
  });
  const state = meter.createObservableGauge('resilix.breaker.state', {
    description: 'The circuit state: 1 for the current state, 0 for the others.',
  });
  const rejected = meter.createObservableCounter('resilix.breaker.rejected', {
    description: 'Calls refused by an open breaker (BrokenCircuitError).',
    unit: '{call}',
  });
  const observables: Observable[] = [limit, inflight, queued, baseline, shed, state, rejected];

  const callback: BatchObservableCallback = (result) => {
    // One snapshot per policy per collection: the gauges of one limiter agree with each other.
    for (const [name, limiter] of entriesOf(sources.limiters)) {
      const s = limiter.snapshot();
      const attributes: Attributes = { 'resilix.limiter': name };
      result.observe(limit, s.limit, attributes);
      result.observe(inflight, s.inflight, attributes);
      result.observe(queued, s.queued, attributes);
      if (s.baselineMs !== undefined) result.observe(baseline, s.baselineMs, attributes);
      result.observe(shed, s.shed, attributes);
    }
    for (const [name, breaker] of entriesOf(sources.breakers)) {
      const s = breaker.snapshot();
      for (const candidate of CIRCUIT_STATES) {
        result.observe(state, candidate === s.state ? 1 : 0, {
          'resilix.breaker': name,
          'resilix.breaker.state': candidate,
        });
      }
      result.observe(rejected, s.rejected, { 'resilix.breaker': name });
    }
  };
  meter.addBatchObservableCallback(callback, observables);
  return () => meter.removeBatchObservableCallback(callback, observables);
}

/**
 * How a call ended: `resolved` (whatever it resolved with: a `Response` with status 503 is
 * `resolved`), one of our refusals, or `error` (the upstream's, or your code's).
 */
export type Outcome = 'resolved' | 'shed' | 'circuit_open' | 'bulkhead_full' | 'timeout' | 'cancelled' | 'error';

export function outcomeOf(error: unknown, signal?: AbortSignal): Outcome {
  if (isLimitExceededError(error)) return 'shed';
  if (isBrokenCircuitError(error)) return 'circuit_open';
  if (isBulkheadFullError(error)) return 'bulkhead_full';
  if (isTimeoutError(error)) return 'timeout';
  if (signal?.aborted === true) return 'cancelled';
  return 'error';
}

/**
 * Wraps an executor so every call counts in the `resilix.calls` counter with attributes
 * `resilix.executor`, `resilix.attempt` (the number: 1 original, 2+ retries),
 * `resilix.retry` (boolean) and `resilix.outcome`. Pass `{ attempt }` to `execute` where you retry.
 */
export function instrument(executor: Executor, name: string, meter: Meter): Executor {
  const calls = meter.createCounter('resilix.calls', {
    description: 'Calls through resilix, by attempt and outcome.',
    unit: '{call}',
  });
  return {
    execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
      const attempt = options?.attempt ?? 1;
      const base = { 'resilix.executor': name, 'resilix.attempt': attempt, 'resilix.retry': attempt > 1 };
      return executor.execute(fn, options).then(
        (value) => {
          calls.add(1, { ...base, 'resilix.outcome': 'resolved' });
          return value;
        },
        (error: unknown) => {
          calls.add(1, { ...base, 'resilix.outcome': outcomeOf(error, options?.signal) });
          throw error;
        },
      );
    },
  };
}
