import { holds, within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  serviceFor,
  clientFor,
  pathSuffix,
  phasesOf,
  resultOf,
  settleTime,
  stats,
  type AdmissionPath,
  type Algorithm,
} from './common';
import { OVERLOAD_QUEUE_PER_SERVER } from './convergence';

/**
 * Scenario 8: a permanent baseline shift at unchanged capacity: 3x (a deploy, a region failover),
 * or a small one (`factor` 1.3: a slower build, a busier machine). Spec §5.3: a minimum-based
 * baseline never recovers and clamps forever; the limiter must take the slower upstream as the new
 * normal. A small shift is the harder case: below raiseRatio it reads as queue (adr/0114).
 *
 * Model: C = 50 servers; service time lognormal(20 ms) for 90 s, then `factor` x slower for good.
 * Load: 1.5x the pre-shift throughput (so overload both before and after). The true capacity stays
 * 50 concurrent calls. Criteria: the limit converges to 50 ±20% before the shift, and returns to
 * 50 ±20% after it (mean of the last quarter), within the run; the time is reported.
 */
export function baselineShift(
  algorithm: Algorithm,
  path: AdmissionPath = 'execute',
  factor = 3,
  seed = factor === 3 ? 0x5eed0008 : 0x5eed0018,
): Scenario {
  const shift = factor === 3 ? '' : `-${factor}x`;
  const name = `baseline-shift${shift}-${algorithm}${pathSuffix(path)}`;
  const title = `Permanent ${factor}x baseline shift at capacity 50 (${algorithm}, ${path})`;
  const capacity = 50;
  const service = serviceFor(capacity);
  return {
    name,
    title,
    group: 8,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['before', 90], ['shifted', 240]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service, overloadQueuePerServer: OVERLOAD_QUEUE_PER_SERVER },
        clients: (tools) => [clientFor(path, tools, 0, { algorithm })],
      });
      world.simulator.at(phases[1]!.startMs, () => world.upstream.setServiceScale(factor));
      const throughput = (capacity / service.meanMs) * 1000;
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [{ atMs: 0, perSecond: 1.5 * throughput }],
        world.endMs,
      ).start();
      await world.run();

      const s = world.recorder.series;
      const before = phases[0]!;
      const after = phases[1]!;
      const beforeSettled = stats(s.limit, s, before.startMs + 0.75 * (before.endMs - before.startMs), before.endMs);
      const afterSettled = stats(s.limit, s, after.startMs + 0.75 * (after.endMs - after.startMs), after.endMs);
      const afterLowest = stats(s.limit, s, after.startMs, after.endMs).min;
      const returnedAfterMs = settleTime(s.limit, s, after.startMs, after.endMs, 0.8 * capacity, 1.2 * capacity);
      const criteria = [
        within(`limit before the shift vs capacity ${capacity}`, beforeSettled.mean, 0.8 * capacity, 1.2 * capacity),
        within(
          `limit after the ${factor}x shift vs capacity ${capacity} (mean of last 25%)`,
          afterSettled.mean,
          0.8 * capacity,
          1.2 * capacity,
        ),
        holds('returned to capacity ±20% within the phase and stayed', Number.isFinite(returnedAfterMs)),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        beforeLimit: beforeSettled.mean,
        afterLimit: afterSettled.mean,
        lowestAfterShift: afterLowest,
        returnedAfterS: returnedAfterMs / 1000,
      });
    },
  };
}
