/**
 * Construction-time option checks shared by the stats primitives. Each throws a RangeError
 * naming the owner, the option, the value and the allowed range (DESIGN.md 2.7: errors are
 * loud and typed). Called once per constructor, never on the hot path.
 */

export function requireQuantile(owner: string, option: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value >= 1) {
    throw new RangeError(`${owner}: ${option} must be a finite number strictly between 0 and 1, got ${String(value)}`);
  }
  return value;
}

export function requireIntegerInRange(owner: string, option: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new RangeError(`${owner}: ${option} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}
