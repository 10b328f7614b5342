/**
 * resilix -> OpenTelemetry metrics, through `@opentelemetry/api` only (your app brings the SDK and
 * the exporter). A recipe to copy into your app (resilix itself depends on nothing): read
 * docs/telemetry.md first. It exports the same data as examples/telemetry-prometheus.ts, under
 * OpenTelemetry names (semantic conventions: dotted names without units, the unit in `unit`,
 * seconds for durations, `1` for ratios, `{call}` for counts of calls).
 *
 * - `observeResilix()`: observable gauges and counters read `snapshot()` in one batch callback at
 *   collection time, so resilix does no work between collections and nothing runs on a timer.
 * - `instrument()`: wraps an executor to count calls by attempt (original or retry) and outcome.
 * - `recordLatency()`: a histogram of every settled call's latency, by attempt and verdict.
 * - `recordRetries()`: retries by verdict and give-ups by reason, from a `retry()` policy's events;
 *   its snapshot instruments (active calls, the budget's balance and refusals) come with
 *   `observeResilix(meter, { retries })`.
 *
 * Tested against `@opentelemetry/sdk-metrics` 2.x, which wants `@opentelemetry/api` >= 1.9 < 1.10.
 * Copy it into your app as it is: it imports `resilix` as your app does.
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
  type Listener,
  type Observation,
  type RetryPolicy,
  type Subscription,
} from 'resilix';

/** Named policies: a fixed object, or a function read at every collection (for a KeyRegistry's keys). */
export type Named<P> = Readonly<Record<string, P>> | (() => Iterable<readonly [string, P]>);

export interface OtelSources {
  /** Limiters by name; the name is the `resilix.limiter` attribute. */
  limiters?: Named<Limiter>;
  /** Breakers by name; the name is the `resilix.breaker` attribute. */
  breakers?: Named<CircuitBreaker>;
  /** Retry policies by the name of the executor they retry for; the name is the `resilix.executor` attribute. */
  retries?: Named<RetryPolicy>;
}

const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];

/**
 * Histogram buckets in seconds: OpenTelemetry's advice for `http.client.request.duration` (HTTP
 * semantic conventions); the Prometheus recipe uses the same list.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

function entriesOf<P>(named: Named<P> | undefined): Iterable<readonly [string, P]> {
  if (named === undefined) return [];
  return typeof named === 'function' ? named() : Object.entries(named);
}

/**
 * Creates the resilix instruments on `meter` and observes them in one batch callback. Returns a
 * function that stops observing (call it when the policies go away).
 */
export function observeResilix(meter: Meter, sources: OtelSources): () => void {
  const gauge = (name: string, description: string, unit: string) =>
    meter.createObservableGauge(name, unit === '' ? { description } : { description, unit });
  const counter = (name: string, description: string, unit = '{call}') =>
    meter.createObservableCounter(name, { description, unit });

  const limit = gauge('resilix.limiter.limit', 'The adaptive concurrency limit now in force.', '{call}');
  const inflight = gauge('resilix.limiter.inflight', 'Calls holding a limiter permit now.', '{call}');
  const queued = gauge('resilix.limiter.queued', 'Calls waiting in the limiter queue now.', '{call}');
  const baseline = gauge('resilix.limiter.baseline', 'The no-load latency the limiter compares against.', 's');
  const latency = gauge(
    'resilix.limiter.latency',
    'The smoothed window latency (vegas: window mean; others: p90).',
    's',
  );
  const admitted = counter('resilix.limiter.admitted', 'Calls admitted by the limiter.');
  const shed = counter('resilix.limiter.shed', 'Calls shed by the limiter (LimitExceededError).');
  const queueTimeouts = counter('resilix.limiter.queue_timeouts', 'Calls whose deadline passed while queued.');
  const state = gauge('resilix.breaker.state', 'The circuit state: 1 for the current state, 0 for the others.', '');
  const failureRatio = gauge(
    'resilix.breaker.failure_ratio',
    'Failures / calls in the breaker window (0 when empty).',
    '1',
  );
  const slowCallRatio = gauge(
    'resilix.breaker.slow_call_ratio',
    'Slow calls / calls in the breaker window (0 when empty).',
    '1',
  );
  const rejected = counter('resilix.breaker.rejected', 'Calls refused by an open breaker (BrokenCircuitError).');
  const retryActive = gauge(
    'resilix.retry.active',
    'Calls between their first attempt and their outcome now (running, or waiting to retry).',
    '{call}',
  );
  const budgetBalance = gauge('resilix.retry.budget.balance', 'Retries the retry budget would grant now.', '{retry}');
  const budgetRefusals = counter(
    'resilix.retry.budget.refusals',
    'Retries the verdict asked for that the retry budget refused.',
    '{retry}',
  );
  const observables: Observable[] = [
    limit,
    inflight,
    queued,
    baseline,
    latency,
    admitted,
    shed,
    queueTimeouts,
    state,
    failureRatio,
    slowCallRatio,
    rejected,
    retryActive,
    budgetBalance,
    budgetRefusals,
  ];

  const callback: BatchObservableCallback = (result) => {
    // One snapshot per policy per collection: the numbers of one limiter agree with each other.
    for (const [name, limiter] of entriesOf(sources.limiters)) {
      const s = limiter.snapshot();
      const attributes: Attributes = { 'resilix.limiter': name };
      result.observe(limit, s.limit, attributes);
      result.observe(inflight, s.inflight, attributes);
      result.observe(queued, s.queued, attributes);
      if (s.baselineMs !== undefined) result.observe(baseline, s.baselineMs / 1_000, attributes);
      if (s.latencyMs !== undefined) result.observe(latency, s.latencyMs / 1_000, attributes);
      result.observe(admitted, s.admitted, attributes);
      result.observe(shed, s.shed, attributes);
      result.observe(queueTimeouts, s.timedOutInQueue, attributes);
    }
    for (const [name, breaker] of entriesOf(sources.breakers)) {
      const s = breaker.snapshot();
      const attributes: Attributes = { 'resilix.breaker': name };
      for (const candidate of CIRCUIT_STATES) {
        result.observe(state, candidate === s.state ? 1 : 0, { ...attributes, 'resilix.breaker.state': candidate });
      }
      result.observe(failureRatio, s.failureRate, attributes);
      result.observe(slowCallRatio, s.slowCallRate, attributes);
      result.observe(rejected, s.rejected, attributes);
    }
    for (const [name, retry] of entriesOf(sources.retries)) {
      const s = retry.snapshot();
      const attributes: Attributes = { 'resilix.executor': name };
      result.observe(retryActive, s.active, attributes);
      if (s.budget !== undefined) result.observe(budgetBalance, s.budget.balance, attributes);
      result.observe(budgetRefusals, s.budgetRefusals, attributes);
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

/** `original` for attempt 1 (or none given), `retry` for 2 and later: `Observation.attempt`'s meaning. */
export function attemptKind(attempt: number | undefined): 'original' | 'retry' {
  return attempt === undefined || attempt <= 1 ? 'original' : 'retry';
}

/**
 * Wraps an executor so every call counts in the `resilix.calls` counter with attributes
 * `resilix.executor`, `resilix.attempt` (`original` or `retry`) and `resilix.outcome`. Pass
 * `{ attempt }` to `execute` where you retry.
 */
export function instrument(executor: Executor, name: string, meter: Meter): Executor {
  const calls = meter.createCounter('resilix.calls', {
    description: 'Calls through resilix, by attempt (original or retry) and outcome.',
    unit: '{call}',
  });
  return {
    execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
      const attributes = { 'resilix.executor': name, 'resilix.attempt': attemptKind(options?.attempt) };
      return executor.execute(fn, options).then(
        (value) => {
          calls.add(1, { ...attributes, 'resilix.outcome': 'resolved' });
          return value;
        },
        (error: unknown) => {
          calls.add(1, { ...attributes, 'resilix.outcome': outcomeOf(error, options?.signal) });
          throw error;
        },
      );
    },
  };
}

/** Anything that reports its settled calls: a `pipeline()`. */
export interface SettleSource {
  onSettle(listener: Listener<Observation>): Subscription;
}

/**
 * Records every call `source` settles in the `resilix.call.latency` histogram (unit `s`) with
 * attributes `resilix.executor`, `resilix.attempt` and `resilix.verdict`: the Observation's
 * `latencyMs` (to `ctx.mark()` if the call marked), which is what the limiter tunes on. Refused
 * calls never ran and are not in it. Returns the subscription; dispose it when the pipeline goes.
 */
export function recordLatency(source: SettleSource, name: string, meter: Meter): Subscription {
  const histogram = meter.createHistogram('resilix.call.latency', {
    description: 'Latency of settled calls (to the first mark), by attempt and verdict.',
    unit: 's',
    advice: { explicitBucketBoundaries: [...LATENCY_BUCKETS_SECONDS] },
  });
  // The Observation is valid only during the listener: read it, keep nothing.
  return source.onSettle((o) => {
    histogram.record(o.latencyMs / 1_000, {
      'resilix.executor': name,
      'resilix.attempt': attemptKind(o.attempt),
      'resilix.verdict': o.verdict,
    });
  });
}

/**
 * Counts a `retry()` policy's retries in `resilix.retries` (unit `{retry}`, attributes
 * `resilix.executor` and `resilix.verdict`: the verdict of the attempt that was retried) and the
 * retries it did not make in `resilix.retry.giveups` (unit `{call}`, attributes `resilix.executor`
 * and `resilix.retry.reason`), from its events. Returns a function that stops counting.
 */
export function recordRetries(policy: RetryPolicy, name: string, meter: Meter): () => void {
  const retries = meter.createCounter('resilix.retries', {
    description: 'Retries started, by the verdict of the attempt they retry.',
    unit: '{retry}',
  });
  const giveUps = meter.createCounter('resilix.retry.giveups', {
    description: 'Retries the verdict asked for and that were not made, by reason.',
    unit: '{call}',
  });
  const onRetry = policy.onRetry((e) => retries.add(1, { 'resilix.executor': name, 'resilix.verdict': e.verdict }));
  const onGiveUp = policy.onGiveUp((e) =>
    giveUps.add(1, { 'resilix.executor': name, 'resilix.retry.reason': e.reason }),
  );
  return () => {
    onRetry.dispose();
    onGiveUp.dispose();
  };
}
