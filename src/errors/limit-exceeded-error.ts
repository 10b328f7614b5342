import { ResilixError, hasResilixCode, type ResilixErrorOptions } from './resilix-error';

/** The adaptive limiter shed the call: its queue was past the rejection threshold. */
export class LimitExceededError extends ResilixError {
  override readonly name = 'LimitExceededError';
  readonly code = 'ERR_RESILIX_LIMIT_EXCEEDED' as const;

  constructor(
    message = 'resilix: the concurrency limit is exceeded; the call was shed',
    options?: ResilixErrorOptions,
  ) {
    super(message, options);
    this.brand(this.code);
  }
}

export function isLimitExceededError(error: unknown): error is LimitExceededError {
  return hasResilixCode(error, 'ERR_RESILIX_LIMIT_EXCEEDED');
}
