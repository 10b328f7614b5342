import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTROL_DEFAULTS } from '../../src/limiter/control-loop';
import { BREAKER_DEFAULTS, KeyRegistry, limiter } from '../../src/index';

/** The rows of the one defaults table in docs/tuning.md: `| policy | option | default | provenance |`. */
interface Row {
  readonly policy: string;
  readonly option: string;
  readonly value: string;
}

const TUNING = readFileSync(resolve(__dirname, '../../docs/tuning.md'), 'utf8');
const ROWS: Row[] = TUNING.split('\n')
  .filter((line) => /^\| (breaker|limiter|bulkhead|timeout|KeyRegistry|resilientFetch|every policy) \|/.test(line))
  .map((line) => {
    const [policy, option, value] = line
      .split('|')
      .slice(1)
      .map((cell) => cell.trim());
    return { policy: policy!, option: option!.replace(/`/g, ''), value: value!.replace(/`/g, '') };
  });

/** `0.5` -> 0.5, `10_000` -> 10000, `'vegas'` -> 'vegas'. */
function literal(text: string): number | string {
  const quoted = /^'(.*)'$/.exec(text);
  if (quoted) return quoted[1]!;
  const number = Number(text.replace(/_/g, ''));
  if (Number.isNaN(number)) throw new Error(`docs/tuning.md: cannot read the default ${JSON.stringify(text)}`);
  return number;
}

function documented(policy: string, option: string): number | string {
  const row = ROWS.find((r) => r.policy === policy && r.option === option);
  if (row === undefined) throw new Error(`docs/tuning.md has no row for ${policy} ${option}`);
  return literal(row.value);
}

describe('docs/tuning.md, the defaults table', () => {
  it('has a row, with the value the code uses, for every breaker default', () => {
    for (const [option, value] of Object.entries(BREAKER_DEFAULTS)) {
      expect(documented('breaker', option), option).toBe(value);
    }
  });

  it("has a row, with the value the code uses, for every default of the limiter's control loop", () => {
    for (const [option, value] of Object.entries(CONTROL_DEFAULTS)) {
      expect(documented('limiter', option), option).toBe(value);
    }
  });

  it("states the limiter's queueing defaults as a fresh limiter reports them", () => {
    const snapshot = limiter().snapshot();
    expect(snapshot.queueing).not.toBe(false);
    const queueing = snapshot.queueing as { initialFactor: number; maxFactor: number };
    expect(documented('limiter', 'queueing.initialFactor')).toBe(queueing.initialFactor);
    expect(documented('limiter', 'queueing.maxFactor')).toBe(queueing.maxFactor);
    expect(documented('limiter', 'queueOrder')).toBe(snapshot.queueOrder);
  });

  it('states the KeyRegistry cap as a fresh registry reports it', () => {
    expect(documented('KeyRegistry', 'maxKeys')).toBe(new KeyRegistry({ create: () => limiter() }).maxKeys);
  });

  it('gives every row a provenance', () => {
    const bare = TUNING.split('\n').filter(
      (line) =>
        /^\| (breaker|limiter|bulkhead|timeout|KeyRegistry|resilientFetch|every policy) \|/.test(line) &&
        /\|\s*\|\s*$/.test(line),
    );
    expect(bare).toEqual([]);
    expect(ROWS.length).toBeGreaterThanOrEqual(
      Object.keys(BREAKER_DEFAULTS).length + Object.keys(CONTROL_DEFAULTS).length,
    );
  });
});
