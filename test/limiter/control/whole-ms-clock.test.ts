import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { mulberry32 } from '../../helpers/mulberry32';
import { runScripted } from './support/scripted';

// A Workers clock reads whole milliseconds (docs/workers.md). An upstream of 8 servers at 0.08 ms (exponential,
// processor sharing past 8 in flight) answers 100 000 calls/s at capacity, and most of its calls read 0 ms: a
// window's p90 flips between 0 and 1 ms. Under minBaselineMs such ratios are clock ticks (adr/0036, adr/0125).
const SERVERS = 8;
const SERVICE_MS = 0.08;
const CAPACITY_PER_MS = SERVERS / SERVICE_MS;
const DURATION_MS = 40_000;

function run(algorithm: 'vegas' | 'gradient2', seed: number) {
  const controller = new LimitControlLoop(resolveControlConfig({ algorithm }));
  const random = mulberry32(seed);
  let late = 0;
  const result = runScripted({
    controller,
    durationMs: DURATION_MS,
    clients: 64,
    call: ({ now, inflight }) => {
      if (now >= DURATION_MS / 2) late++;
      const trueMs = -Math.log(1 - random()) * SERVICE_MS * Math.max(1, inflight / SERVERS);
      // The clock ticks at whole ms, at a random phase to the call's start.
      return { latencyMs: Math.floor(trueMs + random()) };
    },
  });
  // Goodput over the second half (calls started there), past the slow start.
  return { goodput: late / (DURATION_MS / 2) / CAPACITY_PER_MS, changes: result.changes };
}

describe('a whole-ms clock and a sub-ms upstream (Workers)', () => {
  it.each([1, 2, 3, 4])('gradient2 serves the capacity and reads no 0 -> 1 ms tick as a jump (seed %i)', (seed) => {
    const { goodput, changes } = run('gradient2', seed);
    // Before adr/0125: 0.36-0.98 over these seeds (0.50, 0.36, 0.98, 0.67), after a jump's drain on a tick.
    expect(goodput).toBeGreaterThan(0.9);
    const jumps = changes.filter((change) => change.reason === 'baseline-raised');
    expect(jumps).toEqual([]);
  });

  it('vegas the same (its band had the floor already: adr/0036)', () => {
    const { goodput, changes } = run('vegas', 1);
    expect(goodput).toBeGreaterThan(0.9);
    expect(changes.filter((change) => change.reason === 'baseline-raised')).toEqual([]);
  });
});
