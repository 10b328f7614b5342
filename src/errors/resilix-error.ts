import type { TooManyKeysError } from '../registry/too-many-keys-error';
import type { BrokenCircuitError } from './broken-circuit-error';
import type { BulkheadFullError } from './bulkhead-full-error';
import type { LimitExceededError } from './limit-exceeded-error';
import type { TimeoutError } from './timeout-error';

/**
 * The base of every error resilix throws on purpose. The brand is a registered symbol, so a
 * guard recognises an error made by another copy of the package (two versions in one bundle).
 */
const BRAND: unique symbol = Symbol.for('resilix.error.code') as never;

export type ResilixErrorCode =
  | 'ERR_RESILIX_CIRCUIT_OPEN'
  | 'ERR_RESILIX_LIMIT_EXCEEDED'
  | 'ERR_RESILIX_BULKHEAD_FULL'
  | 'ERR_RESILIX_TIMEOUT'
  | 'ERR_RESILIX_TOO_MANY_KEYS';

export interface ResilixErrorOptions {
  cause?: unknown;
  /** A hint for the caller (or an HTTP layer's Retry-After): when capacity may be back, in ms. */
  retryAfterMs?: number | undefined;
}

/**
 * Every error resilix throws, as a union discriminated by `code`: after `isResilixError(error)`,
 * `switch (error.code)` narrows to the subclass (`case 'ERR_RESILIX_TIMEOUT': error.timeoutMs`).
 */
export type AnyResilixError =
  | BrokenCircuitError
  | LimitExceededError
  | BulkheadFullError
  | TimeoutError
  | TooManyKeysError;

// Compile-time check: the union and the code list name the same errors (a new error needs both).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
// biome-ignore lint/correctness/noUnusedVariables: a compile-time assertion; it fails `tsc` when the union and the codes differ
type UnionCoversEveryCode = Holds<Same<AnyResilixError['code'], ResilixErrorCode>>;

export abstract class ResilixError extends Error {
  abstract readonly code: ResilixErrorCode;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options?: ResilixErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.retryAfterMs = options?.retryAfterMs;
  }

  /** @internal */
  protected brand(code: ResilixErrorCode): void {
    Object.defineProperty(this, BRAND, { value: code, enumerable: false });
  }
}

export function hasResilixCode(error: unknown, code: ResilixErrorCode): boolean {
  return typeof error === 'object' && error !== null && (error as { [BRAND]?: unknown })[BRAND] === code;
}

/**
 * True for any error resilix threw on purpose, from any copy of the package. Narrows to
 * `AnyResilixError`, so a `switch` on `code` then narrows to the subclass.
 */
export function isResilixError(error: unknown): error is AnyResilixError {
  return typeof error === 'object' && error !== null && typeof (error as { [BRAND]?: unknown })[BRAND] === 'string';
}
