export {
  ResilixError,
  isResilixError,
  type AnyResilixError,
  type ResilixErrorCode,
  type ResilixErrorOptions,
} from './resilix-error';
export { retryAfterHeader } from './retry-after';
export { BrokenCircuitError, isBrokenCircuitError } from './broken-circuit-error';
export { LimitExceededError, isLimitExceededError } from './limit-exceeded-error';
export { BulkheadFullError, isBulkheadFullError } from './bulkhead-full-error';
export { TimeoutError, isTimeoutError, type TimeoutErrorOptions } from './timeout-error';
