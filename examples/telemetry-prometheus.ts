/**
 * resilix -> Prometheus, with prom-client. A recipe to copy into your app (resilix itself depends
 * on nothing): read docs/telemetry.md first.
 *
 * - The gauges are read from `snapshot()` at scrape time (prom-client's `collect`), so resilix does
 *   no work between scrapes and nothing runs on a timer.
 * - `instrument()` wraps an executor to count calls by attempt (original or retry) and outcome,
 *   so a dashboard tells a retry storm from fresh demand (seed 003).
 *
 * In your app: `import type { CircuitBreaker, Executor, Limiter } from 'resilix'`.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
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

/** Named policies: a fixed object, or a function read at every scrape (for a KeyRegistry's keys). */
export type Named<P> = Readonly<Record<string, P>> | (() => Iterable<readonly [string, P]>);

export interface PrometheusOptions {
  /** Where to register the metrics (a `new Registry()`, or prom-client's global `register`). */
  registry: Registry;
  /** Limiters by name; the name is the `limiter` label. */
  limiters?: Named<Limiter>;
  /** Breakers by name; the name is the `breaker` label. */
  breakers?: Named<CircuitBreaker>;
}

export const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];

function entriesOf<P>(named: Named<P> | undefined): Iterable<readonly [string, P]> {
  if (named === undefined) return [];
  return typeof named === 'function' ? named() : Object.entries(named);
}

/**
 * Registers the resilix gauges and counters. Every value is read from the policies' snapshots
 * when Prometheus scrapes.
 */
export function registerResilixMetrics(options: PrometheusOptions): void {
  const registers = [options.registry];
  const limiters = options.limiters;
  const breakers = options.breakers;

  const limiterGauge = (name: string, help: string, read: (s: ReturnType<Limiter['snapshot']>) => number | undefined) =>
    new Gauge({
      name,
      help,
      labelNames: ['limiter'],
      registers,
      collect() {
        this.reset(); // a limiter that is gone (an evicted key) stops being reported
        for (const [label, limiter] of entriesOf(limiters)) {
          const value = read(limiter.snapshot());
          if (value !== undefined) this.set({ limiter: label }, value);
        }
      },
    });

  limiterGauge('resilix_limiter_limit', 'The adaptive concurrency limit now in force.', (s) => s.limit);
  limiterGauge('resilix_limiter_inflight', 'Calls holding a limiter permit now.', (s) => s.inflight);
  limiterGauge('resilix_limiter_queued', 'Calls waiting in the limiter queue now.', (s) => s.queued);
  limiterGauge(
    'resilix_limiter_baseline_ms',
    'The no-load latency the limiter compares against, in ms.',
    (s) => s.baselineMs,
  );
  limiterGauge('resilix_limiter_latency_ms', 'The smoothed window latency (p90), in ms.', (s) => s.latencyMs);

  // Counters whose value is resilix's own running total: set at scrape time.
  const limiterCounter = (name: string, help: string, read: (s: ReturnType<Limiter['snapshot']>) => number) =>
    new Counter({
      name,
      help,
      labelNames: ['limiter'],
      registers,
      collect() {
        this.reset();
        for (const [label, limiter] of entriesOf(limiters)) this.inc({ limiter: label }, read(limiter.snapshot()));
      },
    });

  limiterCounter('resilix_limiter_admitted_total', 'Calls admitted by the limiter.', (s) => s.admitted);
  limiterCounter('resilix_limiter_shed_total', 'Calls shed by the limiter (LimitExceededError).', (s) => s.shed);
  limiterCounter(
    'resilix_limiter_queue_timeouts_total',
    'Calls whose deadline passed while queued.',
    (s) => s.timedOutInQueue,
  );

  new Gauge({
    name: 'resilix_breaker_state',
    help: 'The circuit state: 1 for the current state, 0 for the others.',
    labelNames: ['breaker', 'state'],
    registers,
    collect() {
      this.reset();
      for (const [label, breaker] of entriesOf(breakers)) {
        const current = breaker.state;
        for (const state of CIRCUIT_STATES) this.set({ breaker: label, state }, state === current ? 1 : 0);
      }
    },
  });

  new Gauge({
    name: 'resilix_breaker_failure_rate',
    help: 'Failures / calls in the breaker window (0 when empty).',
    labelNames: ['breaker'],
    registers,
    collect() {
      this.reset();
      for (const [label, breaker] of entriesOf(breakers)) this.set({ breaker: label }, breaker.snapshot().failureRate);
    },
  });

  new Counter({
    name: 'resilix_breaker_rejected_total',
    help: 'Calls refused by an open breaker (BrokenCircuitError).',
    labelNames: ['breaker'],
    registers,
    collect() {
      this.reset();
      for (const [label, breaker] of entriesOf(breakers)) this.inc({ breaker: label }, breaker.snapshot().rejected);
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

/** `original` for attempt 1 (or none given), `retry` for 2 and later. */
export function attemptKind(attempt: number | undefined): 'original' | 'retry' {
  return attempt === undefined || attempt <= 1 ? 'original' : 'retry';
}

/**
 * Wraps an executor (a pipeline, a policy) so every call counts in `resilix_calls_total` with
 * labels `{ executor, attempt: original|retry, outcome }`. Pass the attempt number in
 * `execute(fn, { attempt })` where you retry; resilix hands it to `ctx.attempt` and to the policies.
 */
export function instrument(executor: Executor, name: string, registry: Registry): Executor {
  const calls =
    (registry.getSingleMetric('resilix_calls_total') as Counter<'executor' | 'attempt' | 'outcome'> | undefined) ??
    new Counter({
      name: 'resilix_calls_total',
      help: 'Calls through resilix, by attempt (original or retry) and outcome.',
      labelNames: ['executor', 'attempt', 'outcome'],
      registers: [registry],
    });
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
