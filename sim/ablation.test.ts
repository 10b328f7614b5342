import { describe, expect, it } from 'vitest';
import { chooseVariants, identicalRuns, VARIANTS } from './ablation';
import { atMost } from './engine/criteria';
import type { SweepRun } from './sweep-seeds';

/** A run with one figure and one criterion; `cpuMs` differs from run to run, as it does on a machine. */
let cpuMs = 0;
const run = (scenario: string, k: number, figure: number, measured = 1): SweepRun => ({
  scenario,
  k,
  seed: k,
  seedHex: `0x${k.toString(16)}`,
  passed: true,
  criteria: [atMost('in-flight / capacity', measured, 1.5)],
  figures: { limit: figure },
  cpuMs: ++cpuMs,
});

describe('the ablation study', () => {
  it('runs the shipped tuning and the variants named, in table order', () => {
    const chosen = chooseVariants(['noiseZ x2', 'no drain']).map((v) => v.name);
    expect(chosen).toEqual(['shipped', 'no drain', 'noiseZ x2']);
    expect(chooseVariants([])).toBe(VARIANTS);
  });

  it('refuses a name that is no variant, rather than leave its row out', () => {
    expect(() => chooseVariants(['no drain', 'noiseZ x3'])).toThrow(
      /no variant is named "noiseZ x3"; the variants: shipped, /,
    );
  });

  it('counts as identical only runs whose every criterion and figure equal the same scenario and seed', () => {
    const reference = [run('a', 0, 5), run('a', 1, 6), run('b', 0, 7), run('b', 2, 7)];
    const variant = [
      run('a', 0, 5), // identical (only cpuMs differs)
      run('a', 1, 6.5), // another figure
      run('b', 0, 7),
      run('b', 1, 7), // no reference run of this seed, though b 0's figures match
      run('b', 2, 7, 1.2), // another measure of a criterion
    ];
    expect(identicalRuns(reference, variant)).toBe(2);
    expect(identicalRuns(reference, reference)).toBe(4);
  });
});
