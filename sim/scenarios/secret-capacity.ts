import { within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { lognormal } from '../models/distributions';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import { phasesOf, resultOf, settleTime, simLimiter, stats, type Algorithm } from './common';

/**
 * Scenario 7: the secret capacity of seed 002. The upstream handles 3 concurrent calls well; each
 * call that starts beyond 3 is slowed by 1.5x its base time per extra call (the seed's model:
 * latency = 20 ms * (1 + 1.5 * max(0, inflight - 3))), no queue, no errors.
 *
 * The spec's default minLimit of 4 sat above this capacity, so the scenario sets minLimit: 1 (as the
 * seed's AIMD does); the default is 1 too since adr/0045, and the scenario pins it whatever the default.
 *
 * The seed's controller calls a batch congested when its p50 passes 1.6x the base latency (32 ms).
 * Here that threshold is the caller's deadline: calls run through `execute` with timeoutMs 32, so a
 * call slowed past it is a `timeout`. That is the only signal error-driven AIMD can see (it ignores
 * latency, spec §4.3); Vegas gets the same deadline and also reads latency. As in the seed (a
 * sleep), the work cannot be cancelled: a late call holds its slot until it ends, so the limit
 * still bounds what the upstream holds. Queueing is off: the seed times the call from the moment it
 * holds a lane, so its threshold measures the upstream alone; with the limiter's queue on, wait
 * would eat the 32 ms budget and turn into timeouts the upstream did not cause (see the report).
 *
 * Load: open-loop Poisson at 2x the capacity's throughput (3 / 20 ms = 150/s -> 300/s).
 * Criterion: over the second half of the run the limit's time-average is 3 ±1 (one lane is the
 * controller's resolution at this size: the seed's own AIMD swings 2..4 around 3.0).
 */
const BASE = lognormal(20, 0.1);
const SECRET_CAPACITY = 3;
/** The seed's congestion threshold: 1.6 x BASE_LATENCY. */
const DEADLINE_MS = 32;

export function secretCapacity(algorithm: Algorithm, queueing = true, seed = 0x5eed0007): Scenario {
  const name = `secret-capacity-${algorithm}${queueing ? '' : '-noqueue'}`;
  const title = `Secret capacity 3 (seed 002), minLimit 1 (${algorithm}, ${queueing ? 'default queue' : 'no queue'})`;
  return {
    name,
    title,
    group: 7,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['overload', 120]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: SECRET_CAPACITY, service: BASE, penaltyPerExtra: 1.5 },
        clients: (tools) => {
          const l = simLimiter(
            tools,
            0,
            queueing ? { algorithm, minLimit: 1 } : { algorithm, minLimit: 1, queueing: false },
          );
          return [
            {
              executor: l,
              limiter: l,
              ...(algorithm === 'aimd' ? { timeoutMs: DEADLINE_MS } : {}),
              abortOnDeadline: false,
            },
          ];
        },
      });
      const rate = 2 * (SECRET_CAPACITY / BASE.meanMs) * 1000;
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [{ atMs: 0, perSecond: rate }],
        world.endMs,
      ).start();
      await world.run();

      const s = world.recorder.series;
      const settled = stats(s.limit, s, world.endMs / 2, world.endMs);
      const foundAfterMs = settleTime(s.limit, s, 0, world.endMs, SECRET_CAPACITY - 1, SECRET_CAPACITY + 1);
      const criteria = [within('limit (mean of the second half) vs secret capacity 3', settled.mean, 2, 4)];
      const p = world.recorder.summarize()[0]!;
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        settledLimit: settled.mean,
        settledMin: settled.min,
        settledMax: settled.max,
        foundAfterS: foundAfterMs / 1000,
        servedP50Ms: p.latencyP50Ms,
        goodputPerSec: p.goodputPerSec,
        timeouts: p.timeouts,
        queuedTimeouts: p.queuedTimeouts,
      });
    },
  };
}
