import { ResilixError, hasResilixCode, type ResilixErrorOptions } from './resilix-error';

/** The breaker is open (or half-open with every probe slot taken): the call was not made. */
export class BrokenCircuitError extends ResilixError {
  override readonly name = 'BrokenCircuitError';
  readonly code = 'ERR_RESILIX_CIRCUIT_OPEN' as const;

  constructor(message = 'resilix: the circuit breaker is open; the call was not made', options?: ResilixErrorOptions) {
    super(message, options);
    this.brand(this.code);
  }
}

export function isBrokenCircuitError(error: unknown): error is BrokenCircuitError {
  return hasResilixCode(error, 'ERR_RESILIX_CIRCUIT_OPEN');
}
