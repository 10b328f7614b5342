import type { CallContext, CallFn, ExecuteOptions, Executor } from '../core/call';
import type { Classifier } from '../core/classify';
import { functionOption, knownOptions, optionsObject, requireNumber } from '../core/options';
import { isPolicy } from '../core/policy';
import { abortSignalOf } from '../core/run-call';
import { Pipeline } from '../pipeline/pipeline';
import { KeyRegistry } from '../registry/key-registry';
import { originKey } from '../registry/origin-key';

/** fetch's own signature: what `resilientFetch` takes (as `options.fetch`) and returns. */
export type FetchFunction = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/** Anything that runs calls under a key, one pipeline per key: a `KeyRegistry`, or your own. */
export interface KeyedExecutor {
  execute<T>(key: string, fn: CallFn<T>, options?: ExecuteOptions): Promise<T>;
}

/** Picks the registry key of one request, e.g. its origin, its host, or a tenant header. */
export type RequestKey = (input: string | URL | Request, init: RequestInit | undefined) => string;

export interface ResilientFetchOptions {
  /**
   * The fetch to call. Default: the global `fetch`, looked up at each call (so a test's stub, a
   * polyfill or the Workers runtime's own fetch is used). It is called as a plain function; for a
   * Workers service binding pass `(input, init) => env.API.fetch(input, init)`.
   */
  fetch?: FetchFunction | undefined;
  /**
   * The key of each request; giving it makes `target` a registry (`execute(key, fn, options)`).
   * A `KeyRegistry` needs none: it is keyed by `originKey` (`https://api.example.com:8443`), i.e.
   * one pipeline per upstream host.
   */
  key?: RequestKey | undefined;
  /**
   * Budget for each request up to its response headers, in ms, queueing included. Overrides the
   * pipeline's timeout policy; the body is not covered (see docs/fetch.md).
   */
  timeoutMs?: number | undefined;
  /** Classifies each response or error; default: `defaultClassify` (status codes, Retry-After). */
  classify?: Classifier | undefined;
}

/**
 * Wraps fetch in a resilix pipeline (or one pipeline per host through a `KeyRegistry`) and returns
 * a function with fetch's own signature: a drop-in replacement.
 *
 * - It resolves with the `Response` for every HTTP status, as fetch does; the status only decides
 *   what the policies learn (2xx-3xx ok, 429/503 overload with Retry-After, other 4xx answered,
 *   5xx failure). It rejects when fetch does (network error, abort) and when a policy refuses the
 *   call (`LimitExceededError`, `BrokenCircuitError`, `BulkheadFullError`, `TimeoutError`).
 * - The latency sample is the time to the response headers (the call marks there); the limiter
 *   slot is released there too. A streamed body is the caller's: see docs/streaming.md.
 * - The caller's `init.signal` (or a `Request`'s signal) cancels the call (verdict `cancelled`)
 *   and, after the headers, aborts reading the body; our deadline aborts fetch with a
 *   `TimeoutError` up to the headers, never the body.
 */
export function resilientFetch<V extends Executor>(
  target: Executor | KeyRegistry<V>,
  options?: ResilientFetchOptions,
): FetchFunction;
/** A keyed executor of your own needs `key`: only a `KeyRegistry` has a default one (`originKey`). */
export function resilientFetch(
  target: KeyedExecutor,
  options: ResilientFetchOptions & { readonly key: RequestKey },
): FetchFunction;
export function resilientFetch(target: Executor | KeyedExecutor, options?: ResilientFetchOptions): FetchFunction {
  const o = optionsObject<ResilientFetchOptions>('resilientFetch', options);
  knownOptions('resilientFetch', o, ['fetch', 'key', 'timeoutMs', 'classify']);
  if (typeof target !== 'object' || target === null || typeof target.execute !== 'function') {
    throw new TypeError(
      `resilix: resilientFetch needs a pipeline, a policy or a KeyRegistry as its first argument; received ${
        target === null ? 'null' : typeof target
      }`,
    );
  }
  const fetchImpl = functionOption<FetchFunction>('resilientFetch', 'fetch', o.fetch);
  const key = functionOption<RequestKey>('resilientFetch', 'key', o.key);
  const timeoutMs =
    o.timeoutMs === undefined
      ? undefined
      : requireNumber('resilientFetch', 'timeoutMs', o.timeoutMs, { above: 0, infinite: true });
  const classify = functionOption<Classifier>('resilientFetch', 'classify', o.classify);
  // One options object for every call without a caller signal: the common case allocates none.
  const shared: ExecuteOptions = Object.freeze({ timeoutMs, classify });
  const keyOf: RequestKey | undefined = key ?? (target instanceof KeyRegistry ? originKey : undefined);
  const replayable = mayRetry(target);

  return function fetchThroughResilix(input: string | URL | Request, init?: RequestInit): Promise<Response> {
    // fetch never throws synchronously (a bad URL, a getter of init's that throws: it rejects);
    // neither do we.
    try {
      // As fetch does, a present init.signal wins, null included (no signal); undefined is absent.
      const signal = init?.signal !== undefined ? init.signal : requestSignal(input);
      const executeOptions: ExecuteOptions =
        signal === undefined || signal === null ? shared : { signal, timeoutMs, classify };
      // A Request's body can be read once: where a retry may send it again, every attempt gets its
      // own clone and the caller's Request stays unread. Where none can, no clone: a clone tees the
      // body, and the unread original keeps what was sent (a 64 MB upload, for as long as the
      // caller holds the Request). Bodies in `init` are the caller's to make replayable (docs/retry.md).
      const replay = replayable && hasBody(input);
      const call = (ctx: CallContext): Promise<Response> =>
        send(fetchImpl, replay ? (input as Request).clone() : input, init, signal, ctx);
      if (keyOf === undefined) return (target as Executor).execute(call, executeOptions);
      return (target as KeyedExecutor).execute(keyOf(input, init), call, executeOptions);
    } catch (error) {
      return Promise.reject(error);
    }
  };
}

/**
 * One request. fetch's promise resolves at the headers, and the call settles right there: the
 * latency sample ends at the upstream's answer, not when the body is drained (adr/0065, 0026).
 * Without a deadline nothing of ours can abort the request, so fetch gets the caller's `init` as
 * it is (its signal, or a Request's, or none): no AbortController, no copy of `init`.
 */
function send(
  fetchImpl: FetchFunction | undefined,
  input: string | URL | Request,
  init: RequestInit | undefined,
  callerSignal: AbortSignal | null | undefined,
  ctx: CallContext,
): Promise<Response> {
  const ours = abortSignalOf(ctx);
  let sent = init;
  if (ours !== undefined && ours !== callerSignal) {
    // Never mutate the caller's init: they may reuse it.
    const signal = requestSignalFor(ours, callerSignal);
    sent = init === undefined ? { signal } : withSignal(init, signal);
  }
  return fetchImpl === undefined ? fetch(input, sent) : fetchImpl(input, sent);
}

/** RequestInit's members (Fetch standard, and `duplex` and `priority` since): fetch reads each by name. */
const REQUEST_INIT_MEMBERS = [
  'method',
  'headers',
  'body',
  'referrer',
  'referrerPolicy',
  'mode',
  'credentials',
  'cache',
  'redirect',
  'integrity',
  'keepalive',
  'window',
  'duplex',
  'priority',
] as const;

/**
 * A copy of the caller's init with our signal. fetch reads init as a WebIDL dictionary, member by
 * member, so inherited members and getters count (a Request passed as init, an init made with
 * Object.create): a spread alone copies own enumerable properties and sent a POST as a bodiless
 * GET. The spread keeps the platform's extra members (undici's `dispatcher`, Workers' `cf`).
 */
function withSignal(init: RequestInit, signal: AbortSignal): RequestInit {
  // The common case, a plain object literal: it has no inherited members, and the spread is all.
  if (Object.getPrototypeOf(init) === Object.prototype) return { ...init, signal };
  const copy: Record<string, unknown> = { ...init };
  for (const member of REQUEST_INIT_MEMBERS) {
    if (!(member in copy)) {
      const value = (init as Record<string, unknown>)[member];
      if (value !== undefined) copy[member] = value;
    }
  }
  copy.signal = signal;
  return copy as RequestInit;
}

type AnySignal = (signals: AbortSignal[]) => AbortSignal;
const anySignal: AnySignal | undefined =
  typeof AbortSignal === 'function' && typeof (AbortSignal as { any?: unknown }).any === 'function'
    ? (AbortSignal as unknown as { any: AnySignal }).any.bind(AbortSignal)
    : undefined;

/**
 * The signal fetch gets, which also governs reading the body (adr/0014). ctx.signal carries our
 * deadline and the caller's abort until the headers arrive, and never aborts after (ADR-011), so
 * the body stays readable past the deadline. Without a deadline it is the caller's own signal,
 * which bounds the body too. With a deadline, the caller's signal must still bound the body, so
 * fetch gets both, joined with `AbortSignal.any` (held weakly by Node 24: a long-lived caller signal
 * does not collect one listener per request; Node 20 keeps one small entry per join: docs/fetch.md).
 * Where `AbortSignal.any` is missing (Node < 20.3) the caller's signal bounds the request only up to
 * the headers.
 */
function requestSignalFor(ours: AbortSignal, caller: AbortSignal | null | undefined): AbortSignal {
  if (caller === undefined || caller === null || caller === ours || anySignal === undefined) return ours;
  try {
    return anySignal([caller, ours]);
  } catch {
    // A signal from another realm, which AbortSignal.any refuses: ours still carries its abort.
    return ours;
  }
}

/**
 * Whether a call through the target may be attempted twice. A resilix pipeline or policy says (a retry policy
 * in it); anything else may: a KeyRegistry's values are made per key, and a custom executor may retry.
 */
function mayRetry(target: Executor | KeyedExecutor): boolean {
  if (target instanceof Pipeline) return target.policies.some((policy) => policy.kind === 'retry');
  if (isPolicy(target)) return target.kind === 'retry';
  return true;
}

/** Whether the input is a Request (by shape, any realm's) with a body to send. */
function hasBody(input: string | URL | Request): boolean {
  if (typeof input !== 'object' || input === null || input instanceof URL) return false;
  const request = input as Request;
  return request.body !== null && request.body !== undefined && typeof request.clone === 'function';
}

/** A `Request`'s own signal (fetch honours it when `init.signal` is absent), by shape, so any realm's Request counts. */
function requestSignal(input: string | URL | Request): AbortSignal | undefined {
  return typeof input === 'object' && input !== null && !(input instanceof URL) ? (input as Request).signal : undefined;
}
