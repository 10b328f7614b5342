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
