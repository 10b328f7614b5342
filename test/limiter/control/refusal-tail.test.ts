import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { type ControlTuning, DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { runScripted } from './support/scripted';

/**
 * One bad replica of fifty answers 503 at once: 2% of calls are refused whatever our concurrency
 * (adr/0095). Capacity 20 (50 ms to 20 in flight, then a queue), 64 closed-loop callers, 120 s.
 * Returns the admitted limit sampled every 100 ms over the last 60 s.
 */
function limitsWithRefusals(share: number, seed: number, tuning: ControlTuning = DEFAULT_TUNING): number[] {
  const controller = new LimitControlLoop(resolveControlConfig({}), tuning);
  let x = seed;
  const random = () => {
    x = (x * 1_103_515_245 + 12_345) % 2_147_483_648;
    return x / 2_147_483_648;
  };
  const { changes } = runScripted({
    controller,
    durationMs: 120_000,
    clients: 64,
    call: ({ inflight }) =>
      random() < share
        ? { latencyMs: 1, verdict: 'overload' }
        : { latencyMs: 50 * Math.max(1, inflight / 20) * (0.8 + 0.4 * random()) },
  });
  const limits: number[] = [];
  for (let at = 60_000; at < 120_000; at += 100) {
    const last = changes.filter((change) => change.at <= at).at(-1);
    limits.push(last === undefined ? 1 : last.to);
  }
  return limits;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];

describe('refusals that come whatever our concurrency are learnt, like the timeout tail (adr/0095)', () => {
  it.each([0.001, 0.01, 0.02])(
    'keeps the limit at the capacity of 20 with %s of calls refused at random, on 8 seeds',
    (share) => {
      const medians = SEEDS.map((seed) => median(limitsWithRefusals(share, seed)));
      for (const m of medians) expect(m).toBeGreaterThanOrEqual(16);
      for (const m of medians) expect(m).toBeLessThanOrEqual(30);
    },
  );

  it('without it (refusalTail false), 1% of random refusals hold the limit at a fraction of the capacity', () => {
    const medians = SEEDS.map((seed) =>
      median(limitsWithRefusals(0.01, seed, { ...DEFAULT_TUNING, refusalTail: false })),
    );
    for (const m of medians) expect(m).toBeLessThan(12);
  });
});
