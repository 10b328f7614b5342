/**
 * The benchmark cases. Every case is the same sequential loop, `for (const _ of iterations) { ... }`
 * inside one async function, and differs only in the body: the raw case is the baseline, so a
 * case's cost over raw is what the library adds to one awaited call.
 *
 * The same loop function is driven by mitata for time (its iterator yields once per call) and by
 * `bench/allocation.ts` for bytes (a reusable counter iterator that allocates nothing).
 */
import {
  bulkhead as cockatielBulkhead,
  circuitBreaker as cockatielBreaker,
  ConsecutiveBreaker,
  handleAll,
  timeout as cockatielTimeout,
  TimeoutStrategy,
  wrap,
} from 'cockatiel';
import CircuitBreaker from 'opossum';
import pLimit from 'p-limit';
import type { Observation } from '../src/index';
import type { Resilix } from './resilix';

export type CaseKind = 'raw' | 'resilix' | 'peer';

export interface BenchCase {
  /** Short stable id, used by `--filter` and in the results JSON. */
  readonly id: string;
  readonly label: string;
  readonly kind: CaseKind;
  /** For a resilix case: the peer case id it is compared with (the library a user would pick instead). */
  readonly peer?: string;
  /** Runs one call per item of `iterations`, each awaited before the next. */
  readonly loop: (iterations: Iterable<unknown>) => Promise<void>;
  /** A synchronous body (no await): only for the low-level pair, whose target is "0 bytes". */
  readonly sync?: boolean;
  /** Releases what the case holds (opossum's rolling-window intervals). */
  readonly close?: () => void;
}

/** The "upstream": an async function that answers at once. Every case calls this one function. */
export async function work(): Promise<number> {
  return 42;
}

/** The same upstream, for a caller that hands the call's signal on (as to `fetch`). */
export function workWithSignal(context: { readonly signal: AbortSignal }): Promise<number> {
  signalSink = context.signal; // a getter with an effect: V8 cannot drop the read
  return work();
}
// biome-ignore lint/correctness/noUnusedVariables: written, never read, on purpose (see workWithSignal)
let signalSink: AbortSignal | undefined;

/**
 * What a low-level caller passes to `permit.settle`. Built once and reused, as a caller that cares
 * about allocation would: a fresh `{ verdict, latencyMs }` literal per call is the caller's own
 * 40 to 56 bytes, not resilix's.
 */
const OK_1MS: Observation = { verdict: 'ok', latencyMs: 1 };

/** Large enough never to refuse or time out in a sequential loop. */
const MAX_CONCURRENT = 100;
const TIMEOUT_MS = 10_000;

export function buildCases(resilix: Resilix): BenchCase[] {
  const { breaker, bulkhead, limiter, pipeline, retry, timeout } = resilix;
  const cases: BenchCase[] = [];

  cases.push({
    id: 'raw',
    label: 'raw `await fn()`',
    kind: 'raw',
    loop: async (iterations) => {
      for (const _ of iterations) await work();
    },
  });

  // ---- resilix ---------------------------------------------------------------------------------

  // Every resilix policy with its defaults, except the two that have no default on purpose.
  const lowLevel = limiter();
  cases.push({
    id: 'resilix-low-level',
    label: 'resilix low-level `tryAcquire()` + `await fn()` + `settle()`',
    kind: 'resilix',
    peer: 'p-limit',
    loop: async (iterations) => {
      for (const _ of iterations) {
        const permit = lowLevel.tryAcquire()!;
        await work();
        permit.settle(OK_1MS);
      }
    },
  });

  const lowLevelSync = limiter();
  cases.push({
    id: 'resilix-low-level-sync',
    label: 'resilix low-level `tryAcquire()` + `settle()`, no await',
    kind: 'resilix',
    sync: true,
    loop: async (iterations) => {
      for (const _ of iterations) lowLevelSync.tryAcquire()!.settle(OK_1MS);
    },
  });

  const soloLimiter = limiter();
  cases.push({
    id: 'resilix-limiter',
    label: 'resilix `limiter.execute`',
    kind: 'resilix',
    peer: 'p-limit',
    loop: async (iterations) => {
      for (const _ of iterations) await soloLimiter.execute(work);
    },
  });

  const breakerLimiterBulkhead = pipeline(breaker(), limiter(), bulkhead({ maxConcurrent: MAX_CONCURRENT }));
  cases.push({
    id: 'resilix-breaker-limiter-bulkhead',
    label: 'resilix pipeline(breaker, limiter, bulkhead)',
    kind: 'resilix',
    peer: 'cockatiel-breaker-bulkhead',
    loop: async (iterations) => {
      for (const _ of iterations) await breakerLimiterBulkhead.execute(work);
    },
  });

  const full = pipeline(
    breaker(),
    limiter(),
    bulkhead({ maxConcurrent: MAX_CONCURRENT }),
    timeout({ timeoutMs: TIMEOUT_MS }),
  );
  cases.push({
    id: 'resilix-full',
    label: 'resilix pipeline(breaker, limiter, bulkhead, timeout)',
    kind: 'resilix',
    peer: 'cockatiel-full',
    loop: async (iterations) => {
      for (const _ of iterations) await full.execute(work);
    },
  });

  // The same pipeline with retry() outermost, when no retry happens: what the retry policy costs a
  // call that succeeds first time (issue 18: <= 50 ns over resilix-full). Its budget is on (the
  // default), so each call also pays the deposit.
  const withRetry = pipeline(
    retry(),
    breaker(),
    limiter(),
    bulkhead({ maxConcurrent: MAX_CONCURRENT }),
    timeout({ timeoutMs: TIMEOUT_MS }),
  );
  cases.push({
    id: 'resilix-retry-full',
    label: 'resilix pipeline(retry, breaker, limiter, bulkhead, timeout), no retry needed',
    kind: 'resilix',
    peer: 'cockatiel-full',
    loop: async (iterations) => {
      for (const _ of iterations) await withRetry.execute(work);
    },
  });

  // What a fetch call does: pass ctx.signal on. Reading it makes the AbortController that the
  // deadline aborts (made lazily: a call that never reads ctx.signal does not pay for one).
  cases.push({
    id: 'resilix-full-signal',
    label: 'resilix pipeline(breaker, limiter, bulkhead, timeout), fn reads `ctx.signal`',
    kind: 'resilix',
    peer: 'cockatiel-full',
    loop: async (iterations) => {
      for (const _ of iterations) await full.execute(workWithSignal);
    },
  });

  const breakerTimeout = pipeline(breaker(), timeout({ timeoutMs: TIMEOUT_MS }));
  cases.push({
    id: 'resilix-breaker-timeout',
    label: 'resilix pipeline(breaker, timeout)',
    kind: 'resilix',
    peer: 'opossum',
    loop: async (iterations) => {
      for (const _ of iterations) await breakerTimeout.execute(work);
    },
  });

  const soloBulkhead = bulkhead({ maxConcurrent: MAX_CONCURRENT });
  cases.push({
    id: 'resilix-bulkhead',
    label: 'resilix `bulkhead.execute`',
    kind: 'resilix',
    peer: 'cockatiel-bulkhead',
    loop: async (iterations) => {
      for (const _ of iterations) await soloBulkhead.execute(work);
    },
  });

  const soloTimeout = timeout({ timeoutMs: TIMEOUT_MS });
  cases.push({
    id: 'resilix-timeout',
    label: 'resilix `timeout.execute`',
    kind: 'resilix',
    loop: async (iterations) => {
      for (const _ of iterations) await soloTimeout.execute(work);
    },
  });

  // ---- peers -----------------------------------------------------------------------------------

  // cockatiel's README breaker; a SamplingBreaker (closer to resilix's failure-rate breaker) costs more.
  const newCockatielBreaker = () =>
    cockatielBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });

  const cBulkhead = cockatielBulkhead(MAX_CONCURRENT, 0);
  cases.push({
    id: 'cockatiel-bulkhead',
    label: 'cockatiel `bulkhead`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await cBulkhead.execute(work);
    },
  });

  // Aggressive: the caller hears at the deadline, as with resilix. resilix also aborts ctx.signal,
  // which is all Cooperative does, so the cooperative variant is measured as well.
  const cFull = wrap(
    newCockatielBreaker(),
    cockatielBulkhead(MAX_CONCURRENT, 0),
    cockatielTimeout(TIMEOUT_MS, TimeoutStrategy.Aggressive),
  );
  cases.push({
    id: 'cockatiel-full',
    label: 'cockatiel `wrap(circuitBreaker, bulkhead, timeout)`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await cFull.execute(work);
    },
  });

  const cFullCooperative = wrap(
    newCockatielBreaker(),
    cockatielBulkhead(MAX_CONCURRENT, 0),
    cockatielTimeout(TIMEOUT_MS, TimeoutStrategy.Cooperative),
  );
  cases.push({
    id: 'cockatiel-full-cooperative',
    label: 'cockatiel `wrap(circuitBreaker, bulkhead, timeout)`, cooperative',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await cFullCooperative.execute(work);
    },
  });

  const cBreakerBulkhead = wrap(newCockatielBreaker(), cockatielBulkhead(MAX_CONCURRENT, 0));
  cases.push({
    id: 'cockatiel-breaker-bulkhead',
    label: 'cockatiel `wrap(circuitBreaker, bulkhead)`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await cBreakerBulkhead.execute(work);
    },
  });

  // opossum's defaults (a 10 s timeout per fire, rolling stats), capacity to match the bulkhead.
  const opossum = new CircuitBreaker(work, { capacity: MAX_CONCURRENT, timeout: TIMEOUT_MS });
  cases.push({
    id: 'opossum',
    label: 'opossum `fire()`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await opossum.fire();
    },
    close: () => opossum.shutdown(),
  });

  const limit = pLimit(MAX_CONCURRENT);
  cases.push({
    id: 'p-limit',
    label: 'p-limit `limit(fn)`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await limit(work);
    },
  });

  return cases;
}
