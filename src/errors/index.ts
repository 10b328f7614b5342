export { ResilixError, isResilixError, type ResilixErrorCode, type ResilixErrorOptions } from './resilix-error';
export { BrokenCircuitError, isBrokenCircuitError } from './broken-circuit-error';
export { LimitExceededError, isLimitExceededError } from './limit-exceeded-error';
export { BulkheadFullError, isBulkheadFullError } from './bulkhead-full-error';
export { TimeoutError, isTimeoutError, type TimeoutErrorOptions } from './timeout-error';
