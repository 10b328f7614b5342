/**
 * resilix -> Prometheus, with prom-client. A recipe to copy into your app (resilix itself depends
 * on nothing): read docs/telemetry.md first. It exports the same data as
 * examples/telemetry-otel.ts, under Prometheus names (naming guide: base units, `_total` on
 * counters, `_ratio` on ratios).
 *
 * - `registerResilixMetrics()`: gauges and counters read from `snapshot()` at scrape time
 *   (prom-client's `collect`), so resilix does no work between scrapes and nothing runs on a timer.
 * - `instrument()`: wraps an executor to count calls by attempt (original or retry) and outcome,
 *   refusals included, so a dashboard tells a retry storm from fresh demand (seed 003).
 * - `recordLatency()`: a histogram of every settled call's latency, by attempt and verdict, from
 *   the pipeline's own Observations (the numbers the limiter learns from).
 * - `recordRetries()`: retries by the verdict that caused them and give-ups by reason, from a
 *   `retry()` policy's `onRetry` and `onGiveUp` events; its snapshot series (active calls, the
 *   budget's balance and refusals) come with `registerResilixMetrics({ retries })`.
 *
 * Copy it into your app as it is: it imports `resilix` as your app does.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
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

/** Named policies: a fixed object, or a function read at every scrape (for a KeyRegistry's keys). */
export type Named<P> = Readonly<Record<string, P>> | (() => Iterable<readonly [string, P]>);

export interface PrometheusOptions {
  /** Where to register the metrics (a `new Registry()`, or prom-client's global `register`). */
  registry: Registry;
  /** Limiters by name; the name is the `limiter` label. */
  limiters?: Named<Limiter>;
  /** Breakers by name; the name is the `breaker` label. */
  breakers?: Named<CircuitBreaker>;
  /** Retry policies by the name of the executor they retry for; the name is the `executor` label. */
  retries?: Named<RetryPolicy>;
}

export const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];

/**
 * Histogram buckets in seconds: OpenTelemetry's advice for `http.client.request.duration` (HTTP
 * semantic conventions), so both recipes bucket alike; the OTel recipe uses the same list.
 */
export const LATENCY_BUCKETS_SECONDS: readonly number[] = [
  0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10,
];

function entriesOf<P>(named: Named<P> | undefined): Iterable<readonly [string, P]> {
  if (named === undefined) return [];
  return typeof named === 'function' ? named() : Object.entries(named);
}

const seconds = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : ms / 1_000);

/**
 * Gauges and counters with one label (`limiter` or `breaker`), one series per named policy, read
 * from its snapshot at scrape time. A counter's value is resilix's own running total: it is reset,
 * then set to the total. A policy that is gone (an evicted key) stops being reported.
 */
function seriesOf<P, S>(
  registers: Registry[],
  label: string,
  named: Named<P> | undefined,
  snapshotOf: (policy: P) => S,
) {
  const points = function* (read: (s: S) => number | undefined) {
    for (const [name, policy] of entriesOf(named)) {
      const value = read(snapshotOf(policy));
      if (value !== undefined) yield [{ [label]: name }, value] as const;
    }
  };
  return {
    gauge(name: string, help: string, read: (s: S) => number | undefined): void {
      new Gauge({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          this.reset();
          for (const [labels, value] of points(read)) this.set(labels, value);
        },
      });
    },
    counter(name: string, help: string, read: (s: S) => number): void {
      new Counter({
        name,
        help,
        labelNames: [label],
        registers,
        collect() {
          this.reset();
          for (const [labels, value] of points(read)) this.inc(labels, value);
        },
      });
    },
  };
}

/** Registers the resilix gauges and counters; every value is read when Prometheus scrapes. */
export function registerResilixMetrics(options: PrometheusOptions): void {
  const registers = [options.registry];

  const limiter = seriesOf(registers, 'limiter', options.limiters, (l: Limiter) => l.snapshot());
  limiter.gauge('resilix_limiter_limit', 'The adaptive concurrency limit now in force.', (s) => s.limit);
  limiter.gauge('resilix_limiter_inflight', 'Calls holding a limiter permit now.', (s) => s.inflight);
  limiter.gauge('resilix_limiter_queued', 'Calls waiting in the limiter queue now.', (s) => s.queued);
  limiter.gauge('resilix_limiter_baseline_seconds', 'The no-load latency the limiter compares against.', (s) =>
    seconds(s.baselineMs),
  );
  limiter.gauge(
    'resilix_limiter_latency_seconds',
    'The smoothed window latency (vegas: window mean; others: p90).',
    (s) => seconds(s.latencyMs),
  );
  limiter.counter('resilix_limiter_admitted_total', 'Calls admitted by the limiter.', (s) => s.admitted);
  limiter.counter('resilix_limiter_shed_total', 'Calls shed by the limiter (LimitExceededError).', (s) => s.shed);
  limiter.counter(
    'resilix_limiter_queue_timeouts_total',
    'Calls whose deadline passed while queued.',
    (s) => s.timedOutInQueue,
  );

  const breaker = seriesOf(registers, 'breaker', options.breakers, (b: CircuitBreaker) => b.snapshot());
  breaker.gauge(
    'resilix_breaker_failure_ratio',
    'Failures / calls in the breaker window (0 when empty).',
    (s) => s.failureRate,
  );
  breaker.gauge(
    'resilix_breaker_slow_call_ratio',
    'Slow calls / calls in the breaker window (0 when empty).',
    (s) => s.slowCallRate,
  );
  breaker.counter(
    'resilix_breaker_rejected_total',
    'Calls refused by an open breaker (BrokenCircuitError).',
    (s) => s.rejected,
  );

  const retry = seriesOf(registers, 'executor', options.retries, (r: RetryPolicy) => r.snapshot());
  retry.gauge(
    'resilix_retry_active',
    'Calls between their first attempt and their outcome now (running, or waiting to retry).',
    (s) => s.active,
  );
  retry.gauge('resilix_retry_budget_balance', 'Retries the retry budget would grant now.', (s) => s.budget?.balance);
  retry.counter(
    'resilix_retry_budget_refusals_total',
    'Retries the verdict asked for that the retry budget refused.',
    (s) => s.budgetRefusals,
  );

  // One-hot: a second label, so a series per state.
  const breakers = options.breakers;
  new Gauge({
    name: 'resilix_breaker_state',
    help: 'The circuit state: 1 for the current state, 0 for the others.',
    labelNames: ['breaker', 'state'],
    registers,
    collect() {
      this.reset();
      for (const [name, b] of entriesOf(breakers)) {
        const current = b.snapshot().state;
        for (const state of CIRCUIT_STATES) this.set({ breaker: name, state }, state === current ? 1 : 0);
      }
    },
  });
}

/**
 * How a call ended, as a label: `resolved` (whatever it resolved with: a `Response` with status
 * 503 is `resolved`), one of our refusals, or `error` (the upstream's, or your code's).
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

/** The metric already in `registry` under `name`, or a new one: a second wrapper shares the first one's series. */
function registered<M>(registry: Registry, name: string, create: () => M): M {
  return (registry.getSingleMetric(name) as M | undefined) ?? create();
}

/**
 * Wraps an executor (a pipeline, a policy) so every call counts in `resilix_calls_total` with
 * labels `{ executor, attempt: original|retry, outcome }`. Pass the attempt number in
 * `execute(fn, { attempt })` where you retry; resilix hands it to `ctx.attempt` and to the policies.
 */
export function instrument(executor: Executor, name: string, registry: Registry): Executor {
  const calls = registered(
    registry,
    'resilix_calls_total',
    () =>
      new Counter({
        name: 'resilix_calls_total',
        help: 'Calls through resilix, by attempt (original or retry) and outcome.',
        labelNames: ['executor', 'attempt', 'outcome'] as const,
        registers: [registry],
      }),
  );
  return {
    execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
      const attempt = attemptKind(options?.attempt);
      return executor.execute(fn, options).then(
        (value) => {
          calls.inc({ executor: name, attempt, outcome: 'resolved' });
          return value;
        },
        (error: unknown) => {
          calls.inc({ executor: name, attempt, outcome: outcomeOf(error, options?.signal) });
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
 * Records every call `source` settles in `resilix_call_latency_seconds{executor, attempt,
 * verdict}`: the Observation's `latencyMs` (to `ctx.mark()` if the call marked, else to the end),
 * which is what the limiter tunes on. Refused calls never ran and are not in it: count them with
 * `instrument()`. Returns the subscription; dispose it when the pipeline goes away.
 */
export function recordLatency(source: SettleSource, name: string, registry: Registry): Subscription {
  const latency = registered(
    registry,
    'resilix_call_latency_seconds',
    () =>
      new Histogram({
        name: 'resilix_call_latency_seconds',
        help: 'Latency of settled calls (to the first mark), by attempt and verdict.',
        labelNames: ['executor', 'attempt', 'verdict'] as const,
        buckets: [...LATENCY_BUCKETS_SECONDS],
        registers: [registry],
      }),
  );
  // The Observation is valid only during the listener: read it, keep nothing.
  return source.onSettle((o) => {
    latency.observe({ executor: name, attempt: attemptKind(o.attempt), verdict: o.verdict }, o.latencyMs / 1_000);
  });
}

/**
 * Counts a `retry()` policy's retries in `resilix_retries_total{executor, verdict}` (the verdict of
 * the attempt that was retried) and the retries it did not make in
 * `resilix_retry_giveups_total{executor, reason}` (`maxAttempts`, `budget`, `deadline`,
 * `retryAfter`), from its events. Returns a function that stops counting.
 */
export function recordRetries(policy: RetryPolicy, name: string, registry: Registry): () => void {
  const retries = registered(
    registry,
    'resilix_retries_total',
    () =>
      new Counter({
        name: 'resilix_retries_total',
        help: 'Retries started, by the verdict of the attempt they retry.',
        labelNames: ['executor', 'verdict'] as const,
        registers: [registry],
      }),
  );
  const giveUps = registered(
    registry,
    'resilix_retry_giveups_total',
    () =>
      new Counter({
        name: 'resilix_retry_giveups_total',
        help: 'Retries the verdict asked for and that were not made, by reason.',
        labelNames: ['executor', 'reason'] as const,
        registers: [registry],
      }),
  );
  const onRetry = policy.onRetry((e) => retries.inc({ executor: name, verdict: e.verdict }));
  const onGiveUp = policy.onGiveUp((e) => giveUps.inc({ executor: name, reason: e.reason }));
  return () => {
    onRetry.dispose();
    onGiveUp.dispose();
  };
}
