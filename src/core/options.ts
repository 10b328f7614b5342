/**
 * Option validation, run once at construction (config is data: failsafe-go's shape). Every error
 * names the policy, the option, the allowed range and the value received (DESIGN.md §2.7).
 */

export interface NumberRule {
  /** Smallest allowed value (inclusive unless `above` is set). */
  min?: number;
  /** The value must be strictly greater than this. */
  above?: number;
  /** Largest allowed value (inclusive unless `below` is set). */
  max?: number;
  /** The value must be strictly less than this. */
  below?: number;
  integer?: boolean;
  /** Allow +Infinity (for "no limit" options). */
  infinite?: boolean;
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === undefined || value === null) {
    return String(value);
  }
  return typeof value;
}

function describeRule(rule: NumberRule): string {
  const kind = rule.integer ? 'an integer' : 'a number';
  const low = rule.above !== undefined ? `(${rule.above}` : `[${rule.min ?? '-Infinity'}`;
  const high = rule.infinite
    ? 'Infinity]'
    : rule.below !== undefined
      ? `${rule.below})`
      : rule.max !== undefined
        ? `${rule.max}]`
        : 'Infinity)';
  return `${kind} in ${low}, ${high}`;
}

export function numberOption(owner: string, name: string, value: unknown, fallback: number, rule: NumberRule): number {
  if (value === undefined) return fallback;
  return requireNumber(owner, name, value, rule);
}

export function requireNumber(owner: string, name: string, value: unknown, rule: NumberRule): number {
  const expected = describeRule(rule);
  if (typeof value !== 'number') {
    throw new TypeError(`resilix: ${owner} option "${name}" must be ${expected}; received ${describeValue(value)}`);
  }
  const outOfRange =
    Number.isNaN(value) ||
    (value === Infinity && !rule.infinite) ||
    value === -Infinity ||
    (rule.integer === true && Number.isFinite(value) && !Number.isInteger(value)) ||
    (rule.min !== undefined && value < rule.min) ||
    (rule.above !== undefined && value <= rule.above) ||
    (rule.max !== undefined && value > rule.max) ||
    (rule.below !== undefined && value >= rule.below);
  if (outOfRange) {
    throw new RangeError(`resilix: ${owner} option "${name}" must be ${expected}; received ${describeValue(value)}`);
  }
  return value;
}

export function booleanOption(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new TypeError(`resilix: ${owner} option "${name}" must be a boolean; received ${describeValue(value)}`);
  }
  return value;
}

export function functionOption<F extends (...args: never[]) => unknown>(
  owner: string,
  name: string,
  value: unknown,
): F | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'function') {
    throw new TypeError(`resilix: ${owner} option "${name}" must be a function; received ${describeValue(value)}`);
  }
  return value as F;
}

export function choiceOption<T extends string>(
  owner: string,
  name: string,
  value: unknown,
  fallback: T,
  choices: readonly T[],
): T {
  if (value === undefined) return fallback;
  if (typeof value !== 'string' || !(choices as readonly string[]).includes(value)) {
    const list = choices.map((c) => `"${c}"`).join(', ');
    const err = `resilix: ${owner} option "${name}" must be one of ${list}; received ${describeValue(value)}`;
    throw typeof value === 'string' ? new RangeError(err) : new TypeError(err);
  }
  return value as T;
}

/** Options must be a plain object (or absent); anything else is a caller's mistake worth naming. */
export function optionsObject<T extends object>(owner: string, value: unknown): Partial<T> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(`resilix: ${owner} options must be an object; received ${describeValue(value)}`);
  }
  return value as Partial<T>;
}

/** min <= max across two options, named in the error. */
export function orderedOptions(owner: string, lowName: string, low: number, highName: string, high: number): void {
  if (low > high) {
    throw new RangeError(`resilix: ${owner} option "${lowName}" (${low}) must not exceed "${highName}" (${high})`);
  }
}

/**
 * Refuses option names a policy does not know: a misspelt `maxConcurent` would otherwise be
 * silently ignored and the default used, which is the kind of mistake that surfaces only under
 * load. Suggests the nearest known name. `path` names a nested options object (`'queueing.'`):
 * its names are reported with it, as `"queueing.initialFactor"`.
 */
export function knownOptions(owner: string, options: object, known: readonly string[], path = ''): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const nearest = nearestName(name, known);
    throw new TypeError(
      `resilix: ${owner} has no option "${path}${name}"` +
        (nearest === undefined ? '.' : `; did you mean "${path}${nearest}"?`) +
        ` Known options: ${known.map((k) => path + k).join(', ')}`,
    );
  }
}

function nearestName(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3; // suggest only names within two edits
  for (const candidate of known) {
    const d = editDistance(name.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j]!;
      row[j] = Math.min(above + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length]!;
}

/**
 * `shared` when `value` holds the same value in each of `shared`'s fields (Object.is), else `value`:
 * every instance built with the default options then keeps one frozen object instead of its own
 * copy (a KeyRegistry key holds no config of its own; ADR-0029, ADR-0086).
 */
export function sharedWhenEqual<T extends object>(value: T, shared: T): T {
  const v = value as Record<string, unknown>;
  const d = shared as Record<string, unknown>;
  for (const key of Object.keys(d)) if (!Object.is(v[key], d[key])) return value;
  return shared;
}
