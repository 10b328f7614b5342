import { describe, expect, it } from 'vitest';
import { chooseVariants, identicalRuns, VARIANTS } from './ablation';
import type { SweepRun } from './sweep-seeds';

const run = (scenario: string, k: number, figure: number): SweepRun => ({
  scenario,
  k,
  seed: k,
  seedHex: `0x${k.toString(16)}`,
  passed: true,
  criteria: [],
  figures: { limit: figure },
  cpuMs: Math.random(),
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

  it('counts as identical only runs whose every figure equals the reference run of the same scenario and seed', () => {
    const reference = [run('a', 0, 5), run('a', 1, 6), run('b', 0, 7)];
    // Same figures, other cpuMs: identical. Another figure, or the figures of another seed (b 1): not.
    const variant = [run('a', 0, 5), run('a', 1, 6.5), run('b', 0, 7), run('b', 1, 7)];
    expect(identicalRuns(reference, variant)).toBe(2);
    expect(identicalRuns(reference, reference)).toBe(3);
  });
});
