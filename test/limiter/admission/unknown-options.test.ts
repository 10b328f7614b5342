import { describe, expect, it } from 'vitest';
import { limiter } from '../../../src/limiter/index';

describe('limiter options', () => {
  it('refuses a misspelt option instead of silently using the default', () => {
    expect(() => limiter({ maxLimt: 50 } as never)).toThrowError(
      /limiter has no option "maxLimt"; did you mean "maxLimit"\?/,
    );
    expect(() => limiter({ queueOrdr: 'fifo' } as never)).toThrowError(/did you mean "queueOrder"/);
  });

  it('refuses a misspelt queueing sub-option with the same did-you-mean (issue 15, defect 7)', () => {
    expect(() => limiter({ queueing: { initialFactr: 5 } } as never)).toThrowError(
      new TypeError(
        'resilix: limiter has no option "queueing.initialFactr"; did you mean "queueing.initialFactor"? ' +
          'Known options: queueing.initialFactor, queueing.maxFactor',
      ),
    );
    expect(() => limiter({ queueing: { maxfactor: 4 } } as never)).toThrowError(/did you mean "queueing.maxFactor"/);
    expect(() => limiter({ queueing: { size: 4 } } as never)).toThrowError(
      /limiter has no option "queueing.size"\. Known options/,
    );
  });

  it('accepts every documented option together', () => {
    const l = limiter({
      algorithm: 'gradient2',
      initialLimit: 10,
      minLimit: 2,
      maxLimit: 40,
      updateIntervalMs: 100,
      minWindowMs: 1000,
      maxWindowMs: 10_000,
      minSamples: 20,
      quantile: 0.9,
      smoothing: 0.2,
      rttTolerance: 1.5,
      backoffRatio: 0.9,
      alpha: (limit: number) => Math.log10(limit),
      beta: (limit: number) => 2 * Math.log10(limit),
      failure: 'hold',
      queueing: { initialFactor: 2, maxFactor: 3 },
      queueOrder: 'fifo',
      random: () => 0.5,
      classify: () => undefined,
    });
    expect(l.limit).toBe(10);
  });

  it('no longer knows correlationWindow: the covariance reset it sized is gone (adr/0047)', () => {
    expect(() => limiter({ correlationWindow: 50 } as never)).toThrowError(/limiter has no option "correlationWindow"/);
  });
});
