/**
 * The benchmark cases. Every sequential case is the same loop, `for (const _ of iterations) { ... }`
 * inside one async function, and differs only in the body: its baseline case (the raw `await fn()`,
 * or the raw fake fetch for the fetch cases) has the same loop with the bare call, so a case's cost
 * over its baseline is what the library adds to one awaited call.
 *
 * The same loop function is driven by mitata (its iterator yields once per call), by the
 * interleaved timer and by `bench/allocation.ts` for bytes (a reusable counter iterator that
 * allocates nothing).
 *
 * The in-flight cases (`buildInflightCases`) keep 100 calls in flight: 100 workers, each a
 * sequential loop like the above, run side by side; every policy admits 100 at once, so nothing
 * queues or is refused (a run that sees a refusal throws).
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
  /** The case whose cost is subtracted ("over raw"): `raw` unless said otherwise. */
  readonly baseline?: string;
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
let signalSink: AbortSignal | undefined;

/** An upstream that refuses: what a caller's catch costs, for the refused cases' baseline. */
const UPSTREAM_DOWN = new Error('upstream down');
async function failingWork(): Promise<number> {
  throw UPSTREAM_DOWN;
}
const ignore = (): undefined => undefined;

/**
 * A fetch that answers at once with one shared `Response` (200, no body): building a `Response`
 * costs microseconds on Node 20 and is the upstream's cost, not the wrapper's. It reads the signal
 * it is given, as fetch does.
 */
const RESPONSE = new Response(null, { status: 200 });
async function fakeFetch(_input: string | URL | Request, init?: RequestInit): Promise<Response> {
  fetchSignalSink = init?.signal;
  return RESPONSE;
}
let fetchSignalSink: AbortSignal | null | undefined;
/** Read, so that the sinks' writes are not dead stores. */
export const sinks = (): unknown[] => [signalSink, fetchSignalSink];
const URL_STRING = 'https://api.example.com/v1/items';

/**
 * What a low-level caller passes to `permit.settle`. Built once and reused, as a caller that cares
 * about allocation would: a fresh `{ verdict, latencyMs }` literal per call is the caller's own
 * 40 to 56 bytes, not resilix's.
 */
const OK_1MS: Observation = { verdict: 'ok', latencyMs: 1 };

/** Large enough never to refuse or time out in a sequential loop, or with 100 calls in flight. */
const MAX_CONCURRENT = 100;
const TIMEOUT_MS = 10_000;

/** What a policy or pipeline with per-call events has (optional: `--compare` may build a copy without). */
interface EventSource {
  onSettle?: (listener: (event: { readonly attempt?: number }) => void) => unknown;
  onRefuse?: (listener: (event: { readonly attempt?: number }) => void) => unknown;
}

/** cockatiel's README breaker; a SamplingBreaker (closer to resilix's failure-rate breaker) costs more. */
const newCockatielBreaker = () =>
  cockatielBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });

export function buildCases(resilix: Resilix): BenchCase[] {
  const { breaker, bulkhead, limiter, pipeline, retry, timeout, resilientFetch, KeyRegistry } = resilix;
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

  const soloBreaker = breaker();
  cases.push({
    id: 'resilix-breaker',
    label: 'resilix `breaker.execute`',
    kind: 'resilix',
    peer: 'cockatiel-breaker',
    loop: async (iterations) => {
      for (const _ of iterations) await soloBreaker.execute(work);
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

  // The same pipeline with a listener on every per-call event (settled and refused, on the
  // pipeline and on each policy): what the events cost once somebody listens. The listeners
  // read one field and keep nothing.
  const listened = pipeline(
    breaker(),
    limiter(),
    bulkhead({ maxConcurrent: MAX_CONCURRENT }),
    timeout({ timeoutMs: TIMEOUT_MS }),
  );
  let heard = 0;
  const hear = (event: { readonly attempt?: number }): void => {
    heard += event.attempt ?? 1;
  };
  for (const source of [listened, ...listened.policies] as unknown as EventSource[]) {
    source.onSettle?.(hear);
    source.onRefuse?.(hear);
  }
  // Built from a copy of src/ without per-call events (`--compare`): the case does not exist there.
  if (typeof (listened as unknown as EventSource).onRefuse === 'function')
    cases.push({
      id: 'resilix-full-listened',
      label: 'the same, a listener on every settle and refusal event',
      kind: 'resilix',
      peer: 'cockatiel-full',
      loop: async (iterations) => {
        for (const _ of iterations) await listened.execute(work);
        if (heard === 0) throw new Error('resilix-full-listened: no event was heard');
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

  // A refused call: an isolated breaker refuses every call at admission.
  const refusing = breaker();
  refusing.isolate();
  cases.push({
    id: 'resilix-breaker-refused',
    label: 'resilix `breaker.execute`, refused (isolated)',
    kind: 'resilix',
    baseline: 'raw-failing',
    peer: 'cockatiel-breaker-refused',
    loop: async (iterations) => {
      for (const _ of iterations) await refusing.execute(work).catch(ignore);
    },
  });
  const refusingListened = breaker();
  refusingListened.isolate();
  let refusals = 0;
  (refusingListened as unknown as EventSource).onRefuse?.((refusal) => {
    if ((refusal as { reason?: string }).reason === 'isolated') refusals++;
  });
  if (typeof (refusingListened as unknown as EventSource).onRefuse === 'function')
    cases.push({
      id: 'resilix-breaker-refused-listened',
      label: 'the same, with an `onRefuse` listener',
      kind: 'resilix',
      baseline: 'raw-failing',
      peer: 'cockatiel-breaker-refused',
      loop: async (iterations) => {
        for (const _ of iterations) await refusingListened.execute(work).catch(ignore);
        if (refusals === 0) throw new Error('resilix-breaker-refused-listened: no refusal was heard');
      },
    });

  // ---- resilientFetch over a fake fetch --------------------------------------------------------

  cases.push({
    id: 'raw-fetch',
    label: 'raw `await fetch(url)` (a fake fetch, one shared Response)',
    kind: 'raw',
    loop: async (iterations) => {
      for (const _ of iterations) await fakeFetch(URL_STRING);
    },
  });

  const fetchPipeline = resilientFetch(pipeline(breaker(), limiter()), { fetch: fakeFetch });
  cases.push({
    id: 'resilix-fetch',
    label: 'resilientFetch(pipeline(breaker, limiter)), no timeout policy',
    kind: 'resilix',
    baseline: 'raw-fetch',
    loop: async (iterations) => {
      for (const _ of iterations) await fetchPipeline(URL_STRING);
    },
  });

  const callerSignal = new AbortController().signal;
  const callerInit: RequestInit = { signal: callerSignal };
  cases.push({
    id: 'resilix-fetch-caller-signal',
    label: 'the same, the caller passes `init.signal`',
    kind: 'resilix',
    baseline: 'raw-fetch',
    loop: async (iterations) => {
      for (const _ of iterations) await fetchPipeline(URL_STRING, callerInit);
    },
  });

  const fetchRegistry = resilientFetch(new KeyRegistry({ create: () => pipeline(breaker(), limiter()) }), {
    fetch: fakeFetch,
  });
  cases.push({
    id: 'resilix-fetch-registry',
    label: 'resilientFetch(KeyRegistry of pipeline(breaker, limiter)), keyed by origin',
    kind: 'resilix',
    baseline: 'raw-fetch',
    loop: async (iterations) => {
      for (const _ of iterations) await fetchRegistry(URL_STRING);
    },
  });

  const fetchTimeout = resilientFetch(pipeline(breaker(), limiter(), timeout({ timeoutMs: TIMEOUT_MS })), {
    fetch: fakeFetch,
  });
  cases.push({
    id: 'resilix-fetch-timeout',
    label: 'resilientFetch(pipeline(breaker, limiter, timeout)): a deadline, so an AbortController',
    kind: 'resilix',
    baseline: 'raw-fetch',
    loop: async (iterations) => {
      for (const _ of iterations) await fetchTimeout(URL_STRING);
    },
  });

  // ---- peers -----------------------------------------------------------------------------------

  cases.push({
    id: 'raw-failing',
    label: 'raw `await fn().catch()`, fn rejects',
    kind: 'raw',
    loop: async (iterations) => {
      for (const _ of iterations) await failingWork().catch(ignore);
    },
  });

  const cBreaker = newCockatielBreaker();
  cases.push({
    id: 'cockatiel-breaker',
    label: 'cockatiel `circuitBreaker`',
    kind: 'peer',
    loop: async (iterations) => {
      for (const _ of iterations) await cBreaker.execute(work);
    },
  });

  const cRefusing = newCockatielBreaker();
  cRefusing.isolate();
  cases.push({
    id: 'cockatiel-breaker-refused',
    label: 'cockatiel `circuitBreaker`, refused (isolated)',
    kind: 'peer',
    baseline: 'raw-failing',
    loop: async (iterations) => {
      for (const _ of iterations) await cRefusing.execute(work).catch(ignore);
    },
  });

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

// ---- 100 calls in flight ---------------------------------------------------------------------

/** Calls in flight at once in the in-flight mode: what every policy below admits without queueing. */
export const IN_FLIGHT = 100;

export interface InflightCase {
  readonly id: string;
  readonly label: string;
  readonly kind: CaseKind;
  readonly peer?: string;
  /** Makes `calls` calls (a multiple of IN_FLIGHT) with IN_FLIGHT of them in flight at any time. */
  readonly run: (calls: number) => Promise<void>;
}

/** IN_FLIGHT workers side by side, each a sequential loop of `calls / IN_FLIGHT` awaited calls. */
function inflight(call: () => Promise<unknown>): (calls: number) => Promise<void> {
  const worker = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) await call();
  };
  return async (calls) => {
    const perWorker = Math.ceil(calls / IN_FLIGHT);
    const workers: Array<Promise<void>> = [];
    for (let w = 0; w < IN_FLIGHT; w++) workers.push(worker(perWorker));
    await Promise.all(workers);
  };
}

export function buildInflightCases(resilix: Resilix): InflightCase[] {
  const { breaker, bulkhead, limiter, pipeline, retry, timeout } = resilix;
  // A limiter that admits IN_FLIGHT calls at once, whatever its control loop concludes from the
  // zero-latency upstream (the default minLimit 4 and initialLimit 20 would queue most of them).
  const wideLimiter = () => limiter({ initialLimit: IN_FLIGHT, minLimit: IN_FLIGHT, maxLimit: 2 * IN_FLIGHT });
  const cases: InflightCase[] = [{ id: 'raw', label: 'raw `await fn()`', kind: 'raw', run: inflight(work) }];

  const soloLimiter = wideLimiter();
  cases.push({
    id: 'resilix-limiter',
    label: 'resilix `limiter.execute` (minLimit 100)',
    kind: 'resilix',
    peer: 'p-limit',
    run: inflight(() => soloLimiter.execute(work)),
  });
  const soloBreaker = breaker();
  cases.push({
    id: 'resilix-breaker',
    label: 'resilix `breaker.execute`',
    kind: 'resilix',
    peer: 'cockatiel-breaker',
    run: inflight(() => soloBreaker.execute(work)),
  });
  const soloBulkhead = bulkhead({ maxConcurrent: IN_FLIGHT });
  cases.push({
    id: 'resilix-bulkhead',
    label: 'resilix `bulkhead.execute` (maxConcurrent 100)',
    kind: 'resilix',
    peer: 'cockatiel-bulkhead',
    run: inflight(() => soloBulkhead.execute(work)),
  });
  const blb = pipeline(breaker(), wideLimiter(), bulkhead({ maxConcurrent: IN_FLIGHT }));
  cases.push({
    id: 'resilix-breaker-limiter-bulkhead',
    label: 'resilix pipeline(breaker, limiter, bulkhead)',
    kind: 'resilix',
    peer: 'cockatiel-breaker-bulkhead',
    run: inflight(() => blb.execute(work)),
  });
  const full = pipeline(
    breaker(),
    wideLimiter(),
    bulkhead({ maxConcurrent: IN_FLIGHT }),
    timeout({ timeoutMs: TIMEOUT_MS }),
  );
  cases.push({
    id: 'resilix-full',
    label: 'resilix pipeline(breaker, limiter, bulkhead, timeout)',
    kind: 'resilix',
    peer: 'cockatiel-full',
    run: inflight(() => full.execute(work)),
  });
  const withRetry = pipeline(
    retry(),
    breaker(),
    wideLimiter(),
    bulkhead({ maxConcurrent: IN_FLIGHT }),
    timeout({ timeoutMs: TIMEOUT_MS }),
  );
  cases.push({
    id: 'resilix-retry-full',
    label: 'resilix pipeline(retry, breaker, limiter, bulkhead, timeout), no retry needed',
    kind: 'resilix',
    peer: 'cockatiel-full',
    run: inflight(() => withRetry.execute(work)),
  });

  const limit = pLimit(IN_FLIGHT);
  cases.push({ id: 'p-limit', label: 'p-limit `limit(fn)` (100)', kind: 'peer', run: inflight(() => limit(work)) });
  const cBreaker = newCockatielBreaker();
  cases.push({
    id: 'cockatiel-breaker',
    label: 'cockatiel `circuitBreaker`',
    kind: 'peer',
    run: inflight(() => cBreaker.execute(work)),
  });
  const cBulkhead = cockatielBulkhead(IN_FLIGHT, 0);
  cases.push({
    id: 'cockatiel-bulkhead',
    label: 'cockatiel `bulkhead` (100)',
    kind: 'peer',
    run: inflight(() => cBulkhead.execute(work)),
  });
  const cBreakerBulkhead = wrap(newCockatielBreaker(), cockatielBulkhead(IN_FLIGHT, 0));
  cases.push({
    id: 'cockatiel-breaker-bulkhead',
    label: 'cockatiel `wrap(circuitBreaker, bulkhead)`',
    kind: 'peer',
    run: inflight(() => cBreakerBulkhead.execute(work)),
  });
  const cFull = wrap(
    newCockatielBreaker(),
    cockatielBulkhead(IN_FLIGHT, 0),
    cockatielTimeout(TIMEOUT_MS, TimeoutStrategy.Aggressive),
  );
  cases.push({
    id: 'cockatiel-full',
    label: 'cockatiel `wrap(circuitBreaker, bulkhead, timeout)`',
    kind: 'peer',
    run: inflight(() => cFull.execute(work)),
  });
  return cases;
}
