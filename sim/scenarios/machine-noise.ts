import { atLeast, within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { lognormal } from '../models/distributions';
import { World } from '../models/world';
import {
  latencyFigures,
  phase,
  phasesOf,
  resultOf,
  runUnderPoisson,
  stats,
  throughputOf,
  userClient,
  type Algorithm,
} from './common';

/**
 * A real machine's noise (issue 14): a heavy-tailed upstream and a client whose own event loop
 * stalls now and then (garbage collection, a CPU-bound handler), so latency samples carry noise
 * that has nothing to do with the upstream's queue.
 *
 * Model: C = 20 servers, FIFO queue beyond, service lognormal(median 20 ms, sigma 0.8): p90 / p50 =
 * 2.8, p99 / p50 = 6.4. The client stalls for uniform(5, 50) ms at exponential gaps of mean 1 s
 * (every answer and arrival during a stall waits for its end). Load: open-loop Poisson at 2x the
 * throughput, through `execute` with a 2 s deadline, library defaults.
 *
 * Criteria over the last 60 s: the limit's time-average within [0.8, 1.5] C, and goodput >= 0.85
 * of the throughput.
 */
const CAPACITY = 20;
const SERVICE = lognormal(20, 0.8);

export function machineNoise(algorithm: Algorithm, seed = 0x5eed0f00): Scenario {
  const name = `machine-noise-${algorithm}`;
  const title = `Heavy-tailed latency and client stalls of 5-50 ms, capacity ${CAPACITY} (${algorithm})`;
  return {
    name,
    title,
    group: 15,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['start', 60], ['settled', 60]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: CAPACITY, service: SERVICE },
        clients: (tools) => [userClient(tools, 0, { algorithm }, { stall: { meanGapMs: 1_000, minMs: 5, maxMs: 50 } })],
      });
      const throughput = throughputOf(CAPACITY, SERVICE);
      await runUnderPoisson(world, 2 * throughput);
      const settled = phase(world.recorder.summarize(), 'settled');
      const s = world.recorder.series;
      const limit = stats(s.limit, s, settled.startMs, settled.endMs);
      const criteria = [
        within(`limit (mean of the last 60 s) / capacity ${CAPACITY}`, limit.mean / CAPACITY, 0.8, 1.5),
        atLeast('goodput / upstream throughput', settled.goodputPerSec / throughput, 0.85),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        limitMean: limit.mean,
        limitMin: limit.min,
        limitMax: limit.max,
        upstreamInflightMean: settled.upstreamInflightMean,
        stalls: world.clients.stalls,
        ...latencyFigures(settled, SERVICE),
      });
    },
  };
}
