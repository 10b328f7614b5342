import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRESSURE_SATURATION } from '../../src/limiter/algorithms/algorithm';
import { CONTROL_DEFAULTS, IDLE_WINDOWS } from '../../src/limiter/control-config';
import { ROUND_SAMPLES } from '../../src/limiter/control-loop';
import { DEFAULT_TUNING } from '../../src/limiter/control-tuning';
import { TAIL_NOISE_Z } from '../../src/limiter/timeout-tail';
import { LATENCY_SMOOTHING, LATENCY_WARMUP } from '../../src/limiter/window';
import { DEFAULT_MEDIAN_SIZE } from '../../src/stats/median-filter';
import {
  BREAKER_DEFAULTS,
  KeyRegistry,
  limiter,
  RETRY_BUDGET_DEFAULTS,
  RETRY_DEFAULTS,
  retry,
  retryBudget,
} from '../../src/index';

/**
 * docs/tuning.md holds every default in tables of `| kind | name | value | provenance |` rows: the
 * options of each policy (kind = the policy), the control loop's internal tuning (kind `tuning`:
 * every field of DEFAULT_TUNING) and the loop's fixed constants (kind `constant`). This test reads
 * those rows and checks them against the source in both directions: every default in the code has
 * a row with its value and a provenance, and every row names something the code still has.
 */
interface Row {
  readonly kind: string;
  readonly name: string;
  readonly value: string;
  readonly provenance: string;
  readonly line: string;
}

const KINDS = [
  'breaker',
  'limiter',
  'bulkhead',
  'timeout',
  'KeyRegistry',
  'resilientFetch',
  'retry',
  'retryBudget',
  'every policy',
  'tuning',
  'constant',
];
const ROW = new RegExp(`^\\| (${KINDS.join('|')}) \\|`);

const TUNING = readFileSync(resolve(__dirname, '../../docs/tuning.md'), 'utf8');
const ROWS: Row[] = TUNING.split('\n')
  .filter((line) => ROW.test(line))
  .map((line) => {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const [kind, name, value, ...rest] = cells;
    return {
      kind: kind!,
      name: name!.replace(/`/g, ''),
      value: value!.replace(/`/g, ''),
      provenance: rest.join('|').trim(),
      line,
    };
  });

function rowsOf(kind: string): Row[] {
  return ROWS.filter((r) => r.kind === kind);
}

function rowFor(kind: string, name: string): Row {
  const matching = ROWS.filter((r) => r.kind === kind && r.name === name);
  if (matching.length === 0) throw new Error(`docs/tuning.md has no row for ${kind} ${name}`);
  if (matching.length > 1) throw new Error(`docs/tuning.md has ${matching.length} rows for ${kind} ${name}`);
  return matching[0]!;
}

/**
 * A table cell as a value: `0.5`, `10_000`, `1 / 8` (a quotient, as the code writes it), `'vegas'`,
 * `true`, or a function's name (`defaultAlpha`). Throws on anything else.
 */
function literal(text: string): number | string | boolean {
  const quoted = /^'(.*)'$/.exec(text);
  if (quoted) return quoted[1]!;
  if (text === 'true' || text === 'false') return text === 'true';
  const quotient = /^([\d_.]+)\s*\/\s*([\d_.]+)$/.exec(text);
  if (quotient) return Number(quotient[1]!.replace(/_/g, '')) / Number(quotient[2]!.replace(/_/g, ''));
  const number = Number(text.replace(/_/g, ''));
  if (!Number.isNaN(number) && text.trim() !== '') return number;
  if (/^[A-Za-z_$][\w$]*$/.test(text)) return text;
  throw new Error(`docs/tuning.md: cannot read the value ${JSON.stringify(text)}`);
}

/** What the code's value reads as in the table: a function by its name. */
function asDocumented(value: unknown): number | string | boolean {
  if (typeof value === 'function') return value.name;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  throw new Error(`a default of type ${typeof value} cannot be stated in the table`);
}

function documented(kind: string, name: string): number | string | boolean {
  return literal(rowFor(kind, name).value);
}

/** Both directions: every default has a row stating the code's value, and `kind` has no row besides them and `others`. */
function expectRowsFor(kind: string, defaults: Record<string, unknown>, others: readonly string[] = []): void {
  for (const [name, value] of Object.entries(defaults)) expect(documented(kind, name), name).toBe(asDocumented(value));
  expect(
    rowsOf(kind)
      .map((r) => r.name)
      .sort(),
  ).toEqual([...Object.keys(defaults), ...others].sort());
}

/**
 * A provenance says where a number comes from: a named source, or "ours" with the reason (an ADR,
 * the spec, a measurement). One of these words must appear in it.
 */
const SOURCE =
  /\b(ours|RFC \d+|BBR|TCP|Netflix|Uber|failsafe-go|Envoy|resilience4j|Hystrix|opossum|Polly|gobreaker|cockatiel|AWS|Finagle|spec|adr\/\d{4}|ADR-\d+|web-standard)\b/i;

/**
 * The loop's fixed constants (not options, not tuning), by the name the table gives each. The band's
 * shape (ALPHA_POWER, BETA_RATIO) is the tuning's alphaPower and betaRatio, checked there.
 */
const CONSTANTS: Record<string, number> = {
  ROUND_SAMPLES,
  IDLE_WINDOWS,
  PRESSURE_SATURATION,
  LATENCY_SMOOTHING,
  LATENCY_WARMUP,
  DEFAULT_MEDIAN_SIZE,
  TAIL_NOISE_Z,
};

/** Retry rows for options without a number of their own in RETRY_DEFAULTS (the budget's are retryBudget rows). */
const RETRY_OTHER_ROWS = ['budget', 'shouldRetry', 'random'];

/** Limiter rows that are admission's, not the control loop's (checked against a fresh limiter below). */
const ADMISSION_ROWS = ['queueing.initialFactor', 'queueing.maxFactor', 'queueOrder', 'random'];

describe('docs/tuning.md, the defaults tables', () => {
  it('has a row, with the value the code uses, for every breaker default', () => {
    for (const [option, value] of Object.entries(BREAKER_DEFAULTS)) {
      expect(documented('breaker', option), option).toBe(value);
    }
  });

  it("has a row, with the value the code uses, for every default of the limiter's control loop", () => {
    for (const [option, value] of Object.entries(CONTROL_DEFAULTS)) {
      expect(documented('limiter', option), option).toBe(asDocumented(value));
    }
  });

  it('has no limiter row for an option the limiter no longer has', () => {
    const known = new Set([...Object.keys(CONTROL_DEFAULTS), ...ADMISSION_ROWS]);
    // Rows in plain words ("retry-hint drain window") describe fixed behaviour, not an option.
    const options = rowsOf('limiter').filter((r) => /^[a-z][\w.]*$/.test(r.name));
    expect(options.map((r) => r.name).filter((name) => !known.has(name))).toEqual([]);
  });

  it('has a row, with the shipped value, for every field of the control loop tuning (DEFAULT_TUNING)', () => {
    expectRowsFor('tuning', DEFAULT_TUNING);
  });

  it("has a row, with the code's value, for every fixed constant of the control loop it names", () => {
    expectRowsFor('constant', CONSTANTS);
  });

  it("states the limiter's queueing defaults as a fresh limiter reports them", () => {
    const snapshot = limiter().snapshot();
    expect(snapshot.queueing).not.toBe(false);
    const queueing = snapshot.queueing as { initialFactor: number; maxFactor: number };
    expect(documented('limiter', 'queueing.initialFactor')).toBe(queueing.initialFactor);
    expect(documented('limiter', 'queueing.maxFactor')).toBe(queueing.maxFactor);
    expect(documented('limiter', 'queueOrder')).toBe(snapshot.queueOrder);
  });

  it('states the limiter defaults a fresh limiter reports (limit and floor)', () => {
    const snapshot = limiter().snapshot();
    expect(documented('limiter', 'initialLimit')).toBe(snapshot.limit);
    expect(documented('limiter', 'minLimit')).toBe(snapshot.minLimit);
    expect(documented('limiter', 'maxLimit')).toBe(snapshot.maxLimit);
  });

  it('has a row, with the value the code uses, for every retry default, and none for an option it lacks', () => {
    expectRowsFor('retry', RETRY_DEFAULTS, RETRY_OTHER_ROWS);
  });

  it('has a row, with the value the code uses, for every retry budget default, and no other', () => {
    expectRowsFor('retryBudget', RETRY_BUDGET_DEFAULTS);
  });

  it('states the retry defaults as a fresh policy and a fresh budget report them', () => {
    const snapshot = retry().snapshot();
    for (const option of ['maxAttempts', 'backoff', 'baseDelayMs', 'maxDelayMs', 'retryLimitExceeded'] as const) {
      expect(documented('retry', option), option).toBe(snapshot[option]);
    }
    // A policy's own budget and a shared one start with the documented defaults.
    for (const budget of [snapshot.budget!, retryBudget().snapshot()]) {
      for (const option of ['ratio', 'minRetriesPerSecond', 'maxBalance'] as const) {
        expect(documented('retryBudget', option), option).toBe(budget[option]);
      }
    }
  });

  it('states the KeyRegistry cap as a fresh registry reports it', () => {
    expect(documented('KeyRegistry', 'maxKeys')).toBe(new KeyRegistry({ create: () => limiter() }).maxKeys);
  });

  it('gives every row a provenance that names its source, or says "ours"', () => {
    const bare = ROWS.filter((r) => r.provenance === '').map((r) => r.line);
    expect(bare).toEqual([]);
    const unsourced = ROWS.filter((r) => !SOURCE.test(r.provenance)).map((r) => r.line);
    expect(unsourced).toEqual([]);
    expect(ROWS.length).toBeGreaterThanOrEqual(
      Object.keys(BREAKER_DEFAULTS).length +
        Object.keys(CONTROL_DEFAULTS).length +
        Object.keys(RETRY_DEFAULTS).length +
        Object.keys(RETRY_BUDGET_DEFAULTS).length +
        Object.keys(DEFAULT_TUNING).length +
        Object.keys(CONSTANTS).length,
    );
  });
});
