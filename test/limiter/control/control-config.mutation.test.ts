import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';

/** Edges of the control options that mutation testing found unpinned (docs/testing.md). */
describe('the control options: open-unit values', () => {
  it('keeps an explicit quantile and backoffRatio inside (0, 1)', () => {
    expect(resolveControlConfig({ quantile: 0.5, backoffRatio: 0.8 })).toMatchObject({
      quantile: 0.5,
      backoffRatio: 0.8,
    });
  });
});
