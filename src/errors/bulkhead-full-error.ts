import { ResilixError, hasResilixCode, type ResilixErrorOptions } from './resilix-error';

/** The bulkhead's fixed ceiling was reached; the bulkhead has no queue, so it refused at once. */
export class BulkheadFullError extends ResilixError {
  override readonly name = 'BulkheadFullError';
  readonly code = 'ERR_RESILIX_BULKHEAD_FULL' as const;

  constructor(message = 'resilix: the bulkhead is full; the call was not made', options?: ResilixErrorOptions) {
    super(message, options);
    this.brand(this.code);
  }
}

export function isBulkheadFullError(error: unknown): error is BulkheadFullError {
  return hasResilixCode(error, 'ERR_RESILIX_BULKHEAD_FULL');
}
