import { atMost, within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  clientFor,
  latencyFigures,
  pathSuffix,
  phasesOf,
  resultOf,
  serviceFor,
  settleTime,
  stats,
  type AdmissionPath,
  type Algorithm,
} from './common';

/**
 * Scenario 1: convergence under sustained overload (spec §10: "converges on true capacity within
 * N windows and holds, oscillating no more than ±20%").
 *
 * Model: C servers, service time lognormal (median 20 ms, sigma 0.3: p90/p50 = 1.47, a healthy
 * API's spread), FIFO queue beyond C, 429 once C calls wait. Load: open-loop Poisson at 2x the upstream's throughput
 * (C / mean service time), for the whole run. The true capacity is C concurrent calls: past it
 * throughput is flat and latency only queues.
 *
 * Criteria, on the settled window (the last quarter of the run):
 *  - the limit's time-average is within ±20% of C;
 *  - it oscillates within ±20% of that average (its min and max);
 * and the time to converge (enter ±20% of C for good) is reported.
 */
export const OVERLOAD_FACTOR = 2;
/**
 * The upstream answers 429 once C calls wait behind its C servers (it holds twice its capacity):
 * its own admission control, and the only signal the error-driven AIMD can act on. A limiter that
 * tunes on latency should never reach it (the `overloads` figure shows whether it did).
 */
export const OVERLOAD_QUEUE_PER_SERVER = 1;

/**
 * The service time at a capacity: 20 ms up to C = 50; above, slower in proportion, so the calls per
 * second (C / service time) and with them the run's cost stay those of C = 50.
 */
export function convergenceService(capacity: number) {
  return serviceFor(capacity);
}

export function convergence(
  capacity: number,
  algorithm: Algorithm,
  path: AdmissionPath = 'execute',
  seed = 0x5eed0001 + capacity,
): Scenario {
  const name = `convergence-c${capacity}-${algorithm}${pathSuffix(path)}`;
  const title = `Convergence on capacity ${capacity} under 2x overload (${algorithm}, ${path})`;
  const service = convergenceService(capacity);
  return {
    name,
    title,
    group: 1,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['overload', 180]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service, overloadQueuePerServer: OVERLOAD_QUEUE_PER_SERVER },
        clients: (tools) => [clientFor(path, tools, 0, { algorithm })],
      });
      const throughput = (capacity / service.meanMs) * 1000;
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [{ atMs: 0, perSecond: OVERLOAD_FACTOR * throughput }],
        world.endMs,
      ).start();
      await world.run();

      const series = world.recorder.series;
      const endMs = world.endMs;
      const settledFrom = endMs * 0.75;
      const settled = stats(series.limit, series, settledFrom, endMs);
      const swing = Math.max(settled.max / settled.mean - 1, 1 - settled.min / settled.mean);
      const convergedAfterMs = settleTime(series.limit, series, 0, endMs, 0.8 * capacity, 1.2 * capacity);
      const criteria = [
        within(
          `settled limit (mean of last 25%) vs capacity ${capacity}`,
          settled.mean,
          0.8 * capacity,
          1.2 * capacity,
        ),
        atMost('oscillation around the settled mean (max |dev| / mean)', swing, 0.2),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        capacity,
        settledLimit: settled.mean,
        settledMin: settled.min,
        settledMax: settled.max,
        oscillation: swing,
        convergedAfterS: convergedAfterMs / 1000,
        upstreamQueueMean: world.recorder.summarize()[0]!.upstreamQueueMean,
        overloads: world.recorder.summarize()[0]!.overload,
        ...latencyFigures(world.recorder.summarize()[0]!, service),
      });
    },
  };
}
