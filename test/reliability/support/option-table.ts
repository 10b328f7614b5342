import { breaker } from '../../../src/breaker/index';
import type { Executor } from '../../../src/core/call';
import { bulkhead } from '../../../src/bulkhead/bulkhead';
import { resilientFetch } from '../../../src/fetch/fetch';
import { limiter } from '../../../src/limiter/limiter';
import { pipeline } from '../../../src/pipeline/pipeline';
import { KeyRegistry } from '../../../src/registry/key-registry';
import { retryBudget } from '../../../src/retry/budget';
import { retry } from '../../../src/retry/retry';
import { timeout } from '../../../src/timeout/timeout';

/**
 * Every option of every public constructor, as data: its type, default and allowed range. The
 * cross-constructor bad-input test (bad-options.test.ts) derives its bad values from this table,
 * and docs/options.md is generated from it (with the real error message for one bad value), so
 * the docs cannot drift from what the code enforces.
 */

/** A numeric range. `below` is an exclusive upper bound; `infinite` admits +Infinity. */
export interface Range {
  min?: number;
  above?: number;
  max?: number;
  below?: number;
  integer?: boolean;
  infinite?: boolean;
}

export type OptionKind =
  | { type: 'number'; range: Range }
  | { type: 'function' }
  | { type: 'choice'; choices: readonly string[] }
  | { type: 'boolean' }
  | { type: 'clock' }
  | { type: 'executor' }
  | { type: 'queueing' }
  | { type: 'restore' }
  | { type: 'budget' };

export interface OptionRow {
  /** The constructor, as users call it. */
  readonly owner: string;
  /** The option's name as the error names it (`queueing.initialFactor` for a nested one). */
  readonly option: string;
  readonly kind: OptionKind;
  readonly required?: boolean;
  /** The default, as documented (provenance: the source comments and docs/tuning.md). */
  readonly defaultText: string;
  /** Builds options with this option set to `value` (nested options go where they belong). */
  readonly with: (value: unknown) => object;
}

export interface Constructor {
  readonly owner: string;
  readonly build: (options: unknown) => unknown;
  /** The least options the constructor accepts (its required ones). */
  readonly base: object;
  /** How a user calls it, for the heading in docs/options.md (default `owner()`). */
  readonly heading?: string;
}

const call = async () => 'ok';
const anExecutor = { execute: call } as unknown as Executor;

export const CONSTRUCTORS: Record<string, Constructor> = {
  breaker: { owner: 'breaker', build: (o) => breaker(o as never), base: {} },
  limiter: { owner: 'limiter', build: (o) => limiter(o as never), base: {} },
  bulkhead: { owner: 'bulkhead', build: (o) => bulkhead(o as never), base: { maxConcurrent: 4 } },
  timeout: { owner: 'timeout', build: (o) => timeout(o as never), base: { timeoutMs: 1_000 } },
  pipeline: { owner: 'pipeline', build: (o) => pipeline(bulkhead({ maxConcurrent: 1 }), o as never), base: {} },
  KeyRegistry: {
    owner: 'KeyRegistry',
    heading: 'new KeyRegistry(options)',
    build: (o) => new KeyRegistry(o as never),
    base: { create: () => anExecutor },
  },
  resilientFetch: { owner: 'resilientFetch', build: (o) => resilientFetch(anExecutor, o as never), base: {} },
  retry: { owner: 'retry', build: (o) => retry(o as never), base: {} },
  retryBudget: { owner: 'retryBudget', build: (o) => retryBudget(o as never), base: {} },
};

function row(owner: string, option: string, kind: OptionKind, defaultText: string, required = false): OptionRow {
  const base = CONSTRUCTORS[owner]!.base;
  const dot = option.indexOf('.');
  const with_ =
    dot < 0
      ? (value: unknown) => ({ ...base, [option]: value })
      : (value: unknown) => ({ ...base, [option.slice(0, dot)]: { [option.slice(dot + 1)]: value } });
  return { owner, option, kind, defaultText, required, with: with_ };
}

const num = (range: Range): OptionKind => ({ type: 'number', range });
const fn: OptionKind = { type: 'function' };
const clock: OptionKind = { type: 'clock' };

export const OPTION_TABLE: readonly OptionRow[] = [
  row('breaker', 'failureRateThreshold', num({ above: 0, max: 1 }), '0.5'),
  row('breaker', 'slowCallRateThreshold', num({ above: 0, max: 1 }), '0.5'),
  row('breaker', 'slowCallDurationMs', num({ above: 0, infinite: true }), '10000'),
  row('breaker', 'minSamples', num({ min: 1, integer: true }), '20'),
  row('breaker', 'lowTrafficMinSamples', num({ min: 1, integer: true }), 'min(5, minSamples)'),
  row('breaker', 'windowMs', num({ above: 0 }), '60000'),
  row('breaker', 'buckets', num({ min: 1, max: 1000, integer: true }), '10'),
  row('breaker', 'consecutiveFailures', num({ min: 1, integer: true, infinite: true }), '10'),
  row('breaker', 'openMs', num({ min: 0 }), '30000'),
  row('breaker', 'backoffMultiplier', num({ min: 1 }), '1'),
  row('breaker', 'maxOpenMs', num({ min: 0 }), 'max(300000, openMs)'),
  row('breaker', 'halfOpenProbes', num({ min: 1, integer: true }), '3'),
  row('breaker', 'clock', clock, 'performance.now'),
  row('breaker', 'wallClock', fn, 'Date.now'),
  row('breaker', 'classify', fn, 'defaultClassify'),
  row('breaker', 'restore', { type: 'restore' }, 'none'),

  row('limiter', 'algorithm', { type: 'choice', choices: ['vegas', 'gradient2', 'aimd', 'fixed'] }, "'vegas'"),
  row('limiter', 'initialLimit', num({ min: 1, integer: true }), '1 (where the slow start begins; raised to minLimit)'),
  row('limiter', 'minLimit', num({ min: 1, integer: true }), 'min(1, initialLimit)'),
  row('limiter', 'maxLimit', num({ min: 1, integer: true }), '200'),
  row('limiter', 'updateIntervalMs', num({ min: 0 }), '100'),
  row('limiter', 'minWindowMs', num({ min: 0 }), '2000'),
  row('limiter', 'maxWindowMs', num({ min: 0 }), 'max(30000, minWindowMs)'),
  row('limiter', 'minSamples', num({ min: 1, max: 1_000_000, integer: true }), '50'),
  row('limiter', 'quantile', num({ above: 0, below: 1 }), '0.9'),
  row('limiter', 'smoothing', num({ above: 0, max: 1 }), '0.2'),
  row('limiter', 'rttTolerance', num({ min: 1 }), '1.5'),
  row('limiter', 'backoffRatio', num({ above: 0, below: 1 }), '0.9'),
  row('limiter', 'alpha', fn, 'defaultAlpha: min(3 log10 max(L, 10), 0.85 x (L / 10)^0.6) requests'),
  row(
    'limiter',
    'beta',
    fn,
    'defaultBeta: 2 x defaultAlpha(L), not 2 x a custom `alpha`; pass `beta` whenever you pass `alpha`',
  ),
  row('limiter', 'failure', { type: 'choice', choices: ['hold', 'ignore', 'overload'] }, "'hold'"),
  row('limiter', 'queueing', { type: 'queueing' }, '{ initialFactor: 2, maxFactor: 3 }'),
  row('limiter', 'queueing.initialFactor', num({ min: 1 }), '2'),
  row('limiter', 'queueing.maxFactor', num({ min: 1 }), 'max(3, initialFactor + 1)'),
  row('limiter', 'queueOrder', { type: 'choice', choices: ['fifo', 'lifo'] }, "'lifo'"),
  row('limiter', 'random', fn, 'Math.random'),
  row('limiter', 'clock', clock, 'performance.now'),
  row('limiter', 'classify', fn, 'defaultClassify'),

  row('bulkhead', 'maxConcurrent', num({ min: 1, integer: true, infinite: true }), 'required', true),
  row('bulkhead', 'clock', clock, 'performance.now'),
  row('bulkhead', 'classify', fn, 'defaultClassify'),

  row('timeout', 'timeoutMs', num({ above: 0, infinite: true }), 'required', true),
  row('timeout', 'clock', clock, 'performance.now'),
  row('timeout', 'classify', fn, 'defaultClassify'),

  row('pipeline', 'classify', fn, 'defaultClassify'),

  row('KeyRegistry', 'create', fn, 'required', true),
  row('KeyRegistry', 'maxKeys', num({ min: 1, integer: true }), '1000'),
  row('KeyRegistry', 'overflow', { type: 'executor' }, 'none (TooManyKeysError)'),

  row('resilientFetch', 'fetch', fn, 'globalThis.fetch'),
  row('resilientFetch', 'key', fn, 'none (originKey for a KeyRegistry)'),
  row('resilientFetch', 'timeoutMs', num({ above: 0, infinite: true }), "the pipeline's timeout"),
  row('resilientFetch', 'classify', fn, 'defaultClassify'),

  row('retry', 'maxAttempts', num({ min: 1, integer: true }), '3'),
  row('retry', 'backoff', { type: 'choice', choices: ['exponential', 'decorrelated'] }, "'exponential'"),
  row('retry', 'baseDelayMs', num({ min: 0 }), '100'),
  row('retry', 'maxDelayMs', num({ min: 0 }), 'max(20000, baseDelayMs)'),
  row('retry', 'budget', { type: 'budget' }, 'a budget of its own (ratio 0.2, minRetriesPerSecond 10, maxBalance 100)'),
  row('retry', 'retryLimitExceeded', { type: 'boolean' }, 'false'),
  row('retry', 'shouldRetry', fn, 'none (failure, timeout and overload are retried)'),
  row('retry', 'classify', fn, 'defaultClassify'),
  row('retry', 'clock', clock, 'performance.now'),
  row('retry', 'random', fn, 'Math.random'),

  row('retryBudget', 'ratio', num({ min: 0 }), '0.2'),
  row('retryBudget', 'minRetriesPerSecond', num({ min: 0 }), '10'),
  row('retryBudget', 'maxBalance', num({ min: 1 }), '100'),
  row('retryBudget', 'clock', clock, "performance.now (must be the retry policies' clock)"),
];

/** Two options that must stay ordered: `low` above `high` is refused, the error naming both. */
export interface RelationRow {
  readonly owner: string;
  readonly low: string;
  readonly high: string;
  /** Options with `low` > `high`. */
  readonly options: object;
}

export const RELATIONS: readonly RelationRow[] = [
  {
    owner: 'breaker',
    low: 'lowTrafficMinSamples',
    high: 'minSamples',
    options: { lowTrafficMinSamples: 10, minSamples: 5 },
  },
  { owner: 'breaker', low: 'openMs', high: 'maxOpenMs', options: { openMs: 10_000, maxOpenMs: 5_000 } },
  { owner: 'limiter', low: 'minLimit', high: 'maxLimit', options: { minLimit: 10, maxLimit: 5 } },
  { owner: 'limiter', low: 'minLimit', high: 'initialLimit', options: { minLimit: 10, initialLimit: 5, maxLimit: 20 } },
  { owner: 'limiter', low: 'initialLimit', high: 'maxLimit', options: { initialLimit: 30, maxLimit: 20 } },
  { owner: 'limiter', low: 'minWindowMs', high: 'maxWindowMs', options: { minWindowMs: 5_000, maxWindowMs: 1_000 } },
  {
    owner: 'limiter',
    low: 'queueing.initialFactor',
    high: 'queueing.maxFactor',
    options: { queueing: { initialFactor: 4, maxFactor: 3 } },
  },
  { owner: 'retry', low: 'baseDelayMs', high: 'maxDelayMs', options: { baseDelayMs: 500, maxDelayMs: 100 } },
];

export interface BadValue {
  readonly label: string;
  readonly value: unknown;
}

/** The bad values one option must refuse, derived from its kind and range. */
export function badValues(r: OptionRow): BadValue[] {
  const bad: BadValue[] = [];
  const k = r.kind;
  if (r.required) bad.push({ label: 'missing', value: undefined });
  switch (k.type) {
    case 'number': {
      const g = k.range;
      bad.push({ label: 'wrong type (string)', value: '5' }, { label: 'wrong type (null)', value: null });
      bad.push({ label: 'NaN', value: Number.NaN }, { label: '-Infinity', value: -Infinity });
      if (!g.infinite) bad.push({ label: 'Infinity', value: Infinity });
      if (g.min !== undefined) bad.push({ label: `below min (${g.min - 1})`, value: g.min - 1 });
      if (g.above !== undefined) bad.push({ label: `at the open bound (${g.above})`, value: g.above });
      if ((g.min ?? g.above ?? 0) >= 0) bad.push({ label: 'negative (-1)', value: -1 });
      if (g.max !== undefined) bad.push({ label: `above max (${g.max + 1})`, value: g.max + 1 });
      if (g.below !== undefined) bad.push({ label: `at the open bound (${g.below})`, value: g.below });
      if (g.integer) bad.push({ label: 'fraction', value: (g.min ?? 1) + 0.5 });
      break;
    }
    case 'function':
      bad.push({ label: 'wrong type (string)', value: 'fn' }, { label: 'wrong type (object)', value: {} });
      break;
    case 'choice':
      bad.push({ label: 'unknown name', value: 'nope' }, { label: 'wrong type (number)', value: 1 });
      break;
    case 'boolean':
      bad.push(
        { label: 'wrong type (string)', value: 'true' },
        { label: 'wrong type (number)', value: 1 },
        { label: 'wrong type (null)', value: null },
      );
      break;
    case 'clock':
      bad.push(
        { label: 'wrong type (string)', value: 'clock' },
        { label: 'no now()', value: {} },
        { label: 'setTimer without clearTimer', value: { now: () => 0, setTimer: () => 0 } },
      );
      break;
    case 'executor':
      bad.push({ label: 'wrong type (number)', value: 1 }, { label: 'no execute()', value: {} });
      break;
    case 'queueing':
      bad.push(
        { label: 'wrong type (string)', value: 'yes' },
        { label: 'null', value: null },
        { label: 'array', value: [2, 3] },
      );
      break;
    case 'restore':
      bad.push({ label: 'wrong type (string)', value: '{}' }, { label: 'not a saved state', value: { version: 99 } });
      break;
    case 'budget':
      // A retry policy and its budget must read one clock, so a budget (or budget options) on a clock
      // other than the policy's default one is refused as well as the wrong types.
      // Budget options are validated as retryBudget's, and named as the user wrote them (`budget.ratio`).
      bad.push(
        { label: 'wrong type (string)', value: 'yes' },
        { label: 'true (only false turns it off)', value: true },
        { label: 'null', value: null },
        { label: 'array', value: [] },
        { label: 'a RetryBudget on another clock', value: retryBudget({ clock: { now: () => 0 } }) },
        { label: 'budget options on another clock', value: { clock: { now: () => 0 } } },
        { label: 'budget options out of range (ratio -1)', value: { ratio: -1 } },
        { label: 'an unknown budget option', value: { ratoi: 0.2 } },
        { label: 'budget options with a clock that is not one', value: { clock: 'x' } },
      );
      break;
  }
  return bad;
}

/** A value the option accepts, for the sanity half of the test. */
export function goodValue(r: OptionRow): unknown {
  // Values that must also respect an ordered partner's default (initialLimit <= maxLimit 200, ...).
  const ordered: Record<string, number> = {
    initialLimit: 20,
    maxWindowMs: 30_000,
    'queueing.maxFactor': 3,
    maxDelayMs: 20_000,
  };
  if (r.option in ordered) return ordered[r.option];
  const k = r.kind;
  switch (k.type) {
    case 'number': {
      const g = k.range;
      if (g.max !== undefined) return g.max;
      if (g.below !== undefined) return g.below / 2;
      return (g.min ?? (g.above ?? 0) + 1) + (r.option === 'maxOpenMs' ? 300_000 : 0);
    }
    case 'function':
      return r.owner === 'KeyRegistry' ? () => anExecutor : () => undefined;
    case 'choice':
      return k.choices[0];
    case 'boolean':
      return true;
    case 'clock':
      return { now: () => 0 };
    case 'executor':
      return anExecutor;
    case 'queueing':
      return false;
    case 'restore':
      return breaker().toJSON();
    case 'budget':
      return retryBudget(); // shared, on the platform clock the policy reads too
  }
}

export function describeRange(r: OptionRow): string {
  const k = r.kind;
  switch (k.type) {
    case 'number': {
      const g = k.range;
      const kind = g.integer ? 'integer' : 'number';
      const low = g.above !== undefined ? `(${g.above}` : `[${g.min ?? '-Infinity'}`;
      const high = g.infinite
        ? 'Infinity]'
        : g.max !== undefined
          ? `${g.max}]`
          : g.below !== undefined
            ? `${g.below})`
            : 'Infinity)';
      return `${kind} in ${low}, ${high}`;
    }
    case 'function':
      return 'function';
    case 'choice':
      return k.choices.map((c) => `'${c}'`).join(' \\| ');
    case 'clock':
      return '{ now(), setTimer?, clearTimer? } (both timer functions or neither)';
    case 'executor':
      return 'an object with execute()';
    case 'queueing':
      return 'false, true, or { initialFactor, maxFactor }';
    case 'restore':
      return 'the object breaker.toJSON() returned';
    case 'boolean':
      return 'boolean';
    case 'budget':
      return 'a RetryBudget on the same clock, { ratio?, minRetriesPerSecond?, maxBalance?, clock? } (the same clock), or false';
  }
}

/** The error a bad value gets, or undefined if it was (wrongly) accepted. */
export function errorFor(r: OptionRow, value: unknown): Error | undefined {
  try {
    CONSTRUCTORS[r.owner]!.build(
      r.required && value === undefined ? CONSTRUCTORS[r.owner]!.base && withoutOption(r) : r.with(value),
    );
  } catch (error) {
    return error as Error;
  }
  return undefined;
}

function withoutOption(r: OptionRow): object {
  const copy: Record<string, unknown> = { ...CONSTRUCTORS[r.owner]!.base };
  delete copy[r.option];
  return copy;
}

/** docs/options.md, generated from the table (the test checks the file is current). */
export function renderOptionsDoc(): string {
  const lines: string[] = [
    '# Options: types, defaults, ranges and the errors for bad values',
    '',
    '<!-- Generated from test/reliability/support/option-table.ts by',
    '     `WRITE_DOCS=1 npx vitest run test/reliability/bad-options.test.ts`; the test fails when this file is stale. -->',
    '',
    'Every option of every public constructor is validated once, at construction. A value of the wrong',
    'type, or an unknown name (with a did-you-mean), throws a `TypeError`; a number out of range (NaN, an',
    'infinity where none is allowed, a negative, zero where zero is not allowed, a fraction where an',
    'integer is needed) throws a `RangeError`. Every message names the constructor, the option, the',
    'allowed range and the value received. Omitting an optional option (or passing `undefined`) takes',
    'the default. Custom `alpha` and `beta` functions are only checked to be functions then: a band that',
    'makes no sense (negative, not finite, or beta under alpha) shows later, as the reason `invalid-band`',
    "in the limiter's `lastChange`, and vegas holds the limit every window it lasts.",
    '',
    'Provenance of every default: docs/tuning.md (its tables are checked against the code) and the source comments.',
    '',
  ];
  for (const owner of Object.keys(CONSTRUCTORS)) {
    lines.push(
      `## ${CONSTRUCTORS[owner]!.heading ?? `${owner}()`}`,
      '',
      '| option | type and allowed range | default | example error for a bad value |',
      '|---|---|---|---|',
    );
    for (const r of OPTION_TABLE.filter((x) => x.owner === owner)) {
      // The most telling bad value: a number out of range, else the first bad value.
      const all = badValues(r);
      const sample = all.find((b) => /bound|below|above|negative/.test(b.label)) ?? all[0]!;
      const error = errorFor(r, sample.value);
      const message = error === undefined ? '(accepted!)' : `${error.name}: ${error.message}`;
      lines.push(
        `| \`${r.option}\` | ${describeRange(r)} | ${r.required ? '**required**' : r.defaultText} | \`${message.replace(/\|/g, '\\|')}\` |`,
      );
    }
    const relations = RELATIONS.filter((x) => x.owner === owner);
    if (relations.length > 0) {
      lines.push('', 'Options that must stay ordered:', '');
      for (const rel of relations) {
        let message = '(accepted!)';
        try {
          CONSTRUCTORS[owner]!.build(rel.options);
        } catch (error) {
          message = `${(error as Error).name}: ${(error as Error).message}`;
        }
        lines.push(`- \`${rel.low}\` <= \`${rel.high}\`: \`${message}\``);
      }
    }
    lines.push('');
  }
  lines.push(
    '## The `clock` option, in every policy',
    '',
    '`{ now(), setTimer?, clearTimer? }`: `now()` is monotonic time in ms, from any finite origin (negative',
    'readings work). resilix never lets the time it reads run backwards: **a clock that steps back freezes',
    'time until it catches up** (deadlines, breaker open periods and limiter windows wait for it). A',
    'reading that is not a finite number (NaN, Infinity, not a number), or a `now()` that throws, repeats',
    'the last good reading; a throw is also reported (to `reportError`, else `console.error`). Before the',
    'first good reading, a bad one reads as 0.',
    '',
    '## execute(fn, options)',
    '',
    'Checked on every call, cheaply; a bad value rejects the call (execute never throws synchronously) and',
    'the call is not admitted.',
    '',
    '| option | type and allowed range | default | error for a bad value |',
    '|---|---|---|---|',
    '| `signal` | an `AbortSignal`, `undefined` or `null` (no signal, as in fetch) | none | `TypeError: resilix: execute option "signal" must be an AbortSignal, undefined or null; received an AbortController` |',
    '| `timeoutMs` | number in (0, Infinity]; `Infinity` is no deadline | the timeout policy\'s, else none | `RangeError: resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received 0` |',
    '| `attempt` | integer in [1, Infinity) | 1 | `RangeError: resilix: execute option "attempt" must be an integer in [1, Infinity); received 0` |',
    '| `classify` | function | the policy\'s or pipeline\'s | `TypeError: resilix: execute option "classify" must be a function; received "x"` |',
    '',
    'A deadline longer than a platform timer holds (2^31 - 1 ms, about 24.8 days), from `timeoutMs` here or',
    'in `timeout()`, is armed in steps of at most 2^31 - 1 ms and fires when it says, not after ~1 ms',
    '(adr/0013-deadlines-longer-than-a-timer.md).',
    '',
    '## Methods that take numbers',
    '',
    '- `limiter.resize(limit)`: a number in [1, Infinity), rounded down to whole calls and clamped into [minLimit, maxLimit]; otherwise a `RangeError` (a number) or `TypeError` (anything else).',
    '- `execute(fn, { timeoutMs })`: a number in (0, Infinity]; otherwise the call is rejected with a `RangeError` (it does not throw synchronously).',
    '',
  );
  return lines.join('\n');
}
