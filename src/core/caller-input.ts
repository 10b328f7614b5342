import type { ExecuteOptions } from './call';

/**
 * What the call runner reads from and says about the caller's own objects, off the hot path: the
 * caller's signal is not ours to trust (a getter may throw), and a bad option is named in the
 * error with what was received.
 */

/** `signal.aborted`, or false when reading it throws (the caller's signal is not ours to trust). */
export function readAborted(signal: AbortSignal): boolean {
  try {
    return signal.aborted === true;
  } catch {
    return false;
  }
}

/** A received value, for an error message: a string quoted, an object or function by its type. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'object' || typeof value === 'function') return typeof value;
  return String(value);
}

/** "an AbortController" (the easy slip: the controller instead of its signal), "a Foo", "5". */
export function describeSignal(value: unknown): string {
  if (typeof value !== 'object' && typeof value !== 'function') return describeValue(value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  const kind = typeof name === 'string' && name !== '' ? name : 'object';
  return `${/^[aeiou]/i.test(kind) ? 'an' : 'a'} ${kind}`;
}

/**
 * The error for execute options a call must refuse before it is admitted (the call runner's and
 * the retry policy's, which reads them before any attempt), or undefined when they are sound. An
 * aborted signal is sound: what to do with it is the caller's business. May throw where reading
 * the caller's object throws (a getter); both callers reject with that.
 */
export function executeOptionsError(options: ExecuteOptions | null | undefined): Error | undefined {
  if (options === undefined || options === null) return undefined;
  if (typeof options !== 'object') {
    return new TypeError(`resilix: execute options must be an object; received ${describeValue(options)}`);
  }
  const signal = options.signal;
  if (signal !== undefined && signal !== null) {
    // A cheap shape check, as fetch makes (any realm's AbortSignal passes): an object whose
    // `aborted` is a boolean and that takes and removes listeners.
    const aborted = typeof signal === 'object' ? (signal as { aborted?: unknown }).aborted : undefined;
    if (
      typeof aborted !== 'boolean' ||
      typeof signal.addEventListener !== 'function' ||
      typeof signal.removeEventListener !== 'function'
    ) {
      return new TypeError(
        `resilix: execute option "signal" must be an AbortSignal, undefined or null; received ${describeSignal(signal)}`,
      );
    }
  }
  const timeoutMs = options.timeoutMs;
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs <= 0)) {
    return new RangeError(
      `resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received ${describeValue(timeoutMs)}`,
    );
  }
  const attempt = options.attempt;
  if (attempt !== undefined && !(Number.isInteger(attempt) && attempt >= 1)) {
    const message = `resilix: execute option "attempt" must be an integer in [1, Infinity); received ${describeValue(attempt)}`;
    return typeof attempt === 'number' ? new RangeError(message) : new TypeError(message);
  }
  const classify = options.classify;
  if (classify !== undefined && typeof classify !== 'function') {
    return new TypeError(`resilix: execute option "classify" must be a function; received ${describeValue(classify)}`);
  }
  return undefined;
}
