import { ResilixError, hasResilixCode, type ResilixErrorOptions } from './resilix-error';

export interface TimeoutErrorOptions extends ResilixErrorOptions {
  /** The deadline that passed, in ms from the start of the call. */
  timeoutMs: number;
  /** True when the deadline passed while the call waited in the limiter's queue. */
  queued?: boolean | undefined;
}

/** The call's deadline passed. When `queued` is true the upstream never saw the call. */
export class TimeoutError extends ResilixError {
  override readonly name = 'TimeoutError';
  readonly code = 'ERR_RESILIX_TIMEOUT' as const;
  readonly timeoutMs: number;
  readonly queued: boolean;

  constructor(options: TimeoutErrorOptions) {
    const queued = options.queued === true;
    super(
      queued
        ? `resilix: timed out after ${options.timeoutMs} ms while queued in the limiter; the upstream never saw the call`
        : `resilix: the call timed out after ${options.timeoutMs} ms`,
      options,
    );
    this.timeoutMs = options.timeoutMs;
    this.queued = queued;
    this.brand(this.code);
  }
}

export function isTimeoutError(error: unknown): error is TimeoutError {
  return hasResilixCode(error, 'ERR_RESILIX_TIMEOUT');
}
