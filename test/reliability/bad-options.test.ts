import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { limiter } from '../../src/limiter/limiter';
import {
  badValues,
  CONSTRUCTORS,
  errorFor,
  goodValue,
  OPTION_TABLE,
  RELATIONS,
  renderOptionsDoc,
} from './support/option-table';

/**
 * Issue 11, bad input: every option of every public constructor refuses a wrong type, NaN,
 * Infinity (where not allowed), a negative, zero where not allowed, a fraction where an integer
 * is needed, and min > max, with a TypeError or RangeError naming the constructor and the option.
 * The table (support/option-table.ts) is the same one docs/options.md is generated from.
 */

const cases = OPTION_TABLE.flatMap((r) => badValues(r).map((b) => ({ row: r, bad: b })));

describe('every public constructor refuses every bad option with a typed error naming it', () => {
  it.each(cases.map((c) => [`${c.row.owner} ${c.row.option}: ${c.bad.label}`, c] as const))(
    '%s',
    (_name, { row, bad }) => {
      const error = errorFor(row, bad.value);
      expect(error, `accepted ${String(bad.value)}`).toBeDefined();
      expect(error instanceof TypeError || error instanceof RangeError).toBe(true);
      // The owner as a whole word: `resilix: retryBudget` does not name `retry`.
      expect(error!.message).toMatch(new RegExp(`resilix: ${row.owner}\\b`));
      // An option that takes an object may name the nested field at fault (`budget.clock`).
      const named =
        row.option === 'restore' || row.option === 'budget'
          ? new RegExp(`option "${row.option}(\\.\\w+)?"`)
          : `"${row.option}"`;
      if (typeof named === 'string') expect(error!.message).toContain(named);
      else expect(error!.message).toMatch(named);
    },
  );

  it.each(OPTION_TABLE.map((r) => [`${r.owner} ${r.option}`, r] as const))(
    'accepts a good value for %s',
    (_name, row) => {
      expect(errorFor(row, goodValue(row))).toBeUndefined();
    },
  );

  it.each(RELATIONS.map((r) => [`${r.owner}: ${r.low} > ${r.high}`, r] as const))(
    'refuses %s, naming both options',
    (_n, rel) => {
      let error: unknown;
      try {
        CONSTRUCTORS[rel.owner]!.build(rel.options);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RangeError);
      expect((error as Error).message).toContain(`"${rel.low}"`);
      expect((error as Error).message).toContain(`"${rel.high}"`);
    },
  );

  it('refuses an options argument that is not an object, in every constructor', () => {
    for (const c of Object.values(CONSTRUCTORS)) {
      if (c.owner === 'pipeline') continue; // a trailing non-object is read as a policy argument
      for (const bad of ['x', 42, [], null]) {
        expect(() => c.build(bad), `${c.owner}(${JSON.stringify(bad)})`).toThrow(TypeError);
      }
    }
  });

  it('covers every option the constructors declare (the table is complete)', () => {
    const owners = new Set(OPTION_TABLE.map((r) => r.owner));
    expect([...owners].sort()).toEqual(Object.keys(CONSTRUCTORS).sort());
    // 16 breaker, 22 limiter, 3 bulkhead, 3 timeout, 1 pipeline, 3 KeyRegistry, 4 resilientFetch,
    // 10 retry, 4 retryBudget
    expect(OPTION_TABLE.length).toBe(66);
    // Each constructor lists the options it knows when it refuses an unknown one: the table must have
    // exactly those (nested options such as `queueing.initialFactor` are rows of their own).
    for (const c of Object.values(CONSTRUCTORS)) {
      let message = '';
      try {
        c.build({ ...c.base, notAnOption: 1 });
      } catch (error) {
        message = (error as Error).message;
      }
      const known = /Known options: (.*)$/.exec(message)?.[1]?.split(', ') ?? [];
      const rows = OPTION_TABLE.filter((r) => r.owner === c.owner && !r.option.includes('.')).map((r) => r.option);
      expect(rows.sort(), c.owner).toEqual(known.sort());
    }
  });

  it('refuses a bad limit in limiter.resize with a typed error', () => {
    const l = limiter({ minLimit: 2, maxLimit: 10 });
    expect(() => l.resize(Number.NaN)).toThrow(RangeError);
    expect(() => l.resize(0)).toThrow(RangeError);
    expect(() => l.resize(-3)).toThrow(RangeError);
    expect(() => l.resize(Infinity)).toThrow(RangeError);
    expect(() => l.resize('5' as never)).toThrow(TypeError);
    expect(l.limit).toBe(2); // initialLimit follows minLimit (a slow start begins there)
  });
});

describe('docs/options.md', () => {
  it('is generated from this table and current', () => {
    const url = new URL('../../docs/options.md', import.meta.url);
    const rendered = renderOptionsDoc();
    if (process.env.WRITE_DOCS === '1') writeFileSync(url, rendered);
    expect(readFileSync(url, 'utf8')).toBe(rendered);
  });
});
