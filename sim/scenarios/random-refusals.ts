import { atLeast, within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { lognormal } from '../models/distributions';
import { World } from '../models/world';
import { phase, phasesOf, resultOf, runUnderPoisson, stats, throughputOf, userClient } from './common';

/**
 * One bad replica (adr/0095): of the replicas behind a load balancer, one answers 429 at once, so a
 * steady 2% of our calls are refused whatever our concurrency. A refusal is a reduce signal; one
 * that comes at every limit tells nothing about this one, and a limiter that cuts on each would
 * shed most of its callers' traffic for a fault it cannot fix.
 *
 * Model: C = 20 servers, FIFO queue beyond, service lognormal(median 50 ms, sigma 0.3); 2% of
 * calls answered 429 in 1 ms before reaching a server. Load: open-loop Poisson at 2x the
 * throughput, through `execute` with a 2 s deadline, library defaults (vegas).
 *
 * Criteria over the last 60 s: the limit's time-average within [0.8, 1.5] C (machine-noise's band),
 * and goodput >= 0.85 of the throughput the other 98% can have.
 */
const CAPACITY = 20;
const SERVICE = lognormal(50, 0.3);
const REFUSED_SHARE = 0.02;

export function randomRefusals(seed = 0x5eed0013): Scenario {
  const name = 'random-refusals';
  const title = `2% of calls refused at random (one bad replica), capacity ${CAPACITY} (vegas)`;
  return {
    name,
    title,
    group: 16,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['start', 60], ['settled', 60]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: CAPACITY, service: SERVICE, refusalRate: REFUSED_SHARE },
        clients: (tools) => [userClient(tools, 0, {})],
      });
      const throughput = throughputOf(CAPACITY, SERVICE);
      await runUnderPoisson(world, 2 * throughput);
      const settled = phase(world.recorder.summarize(), 'settled');
      const s = world.recorder.series;
      const limit = stats(s.limit, s, settled.startMs, settled.endMs);
      const criteria = [
        within(`limit (mean of the last 60 s) / capacity ${CAPACITY}`, limit.mean / CAPACITY, 0.8, 1.5),
        atLeast(
          'goodput / upstream throughput for the calls not refused',
          settled.goodputPerSec / throughput,
          0.85 * (1 - REFUSED_SHARE),
        ),
      ];
      return resultOf(world, { name, title, algorithm: 'vegas' }, runSeed, criteria, {
        limitMean: limit.mean,
        limitMin: limit.min,
        limitMax: limit.max,
        upstreamInflightMean: settled.upstreamInflightMean,
      });
    },
  };
}
