import type { Classifier } from './classify';

/** What `fn` receives for one call. */
export interface CallContext {
  /**
   * Aborts when the caller's signal aborts (with the caller's reason) or when the call's deadline
   * passes (with a `TimeoutError`). It never aborts after the call succeeded, so a fetch body can
   * still be read. Created on first read: a call that never reads it pays nothing for it.
   */
  readonly signal: AbortSignal;
  /**
   * Marks the moment the upstream answered (first byte, first token). The limiter tunes on the
   * time to the first mark; a stream that does not mark tunes on its whole duration and mis-tunes.
   */
  mark(): void;
  /** The caller's attempt number: 1 for an original call, 2+ for retries (telemetry). */
  readonly attempt: number;
}

export type CallFn<T> = (context: CallContext) => T | PromiseLike<T>;

/**
 * Every field may be given as `undefined`, which means absent (adr/0081): a wrapper that forwards
 * optional values (a retry attempt, `resilientFetch`) builds one object shape with no spreads.
 */
export interface ExecuteOptions {
  /**
   * The caller's signal; aborting it cancels the call (verdict `cancelled`). At run time `null` is
   * accepted as no signal, as fetch's `RequestInit` takes it (the type stays `AbortSignal` so that
   * code reading these options need not handle `null`). Anything else that is not an AbortSignal
   * rejects the call with a `TypeError` (a common slip: the `AbortController` instead of its
   * `signal`).
   */
  signal?: AbortSignal | undefined;
  /**
   * The call's budget in ms, queueing included: time spent waiting in the limiter's queue is taken
   * from it. Overrides the timeout policy's default; works without a timeout policy too.
   */
  timeoutMs?: number | undefined;
  /** 1 for an original call, 2+ for retries; passed to `ctx.attempt` and the Observation. */
  attempt?: number | undefined;
  /** Classifies this call's outcome; overrides the pipeline's or policy's classifier. */
  classify?: Classifier | undefined;
}

/** Anything that runs calls: every policy, and a pipeline of them. */
export interface Executor {
  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T>;
}
