import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  overloadFigures,
  phase,
  phasesOf,
  physicsCriteria,
  resultOf,
  serviceFor,
  throughputOf,
  userClient,
  type Algorithm,
} from './common';

/**
 * Cold start under overload (issue 14): a limiter that knows nothing meets an upstream already
 * offered 3x its capacity from t = 0, the way a freshly deployed service meets its traffic. A
 * baseline learnt from the first windows has whatever queue the start-up limit built in it; this
 * scenario measures whether the limiter still finds the capacity.
 *
 * Model: C servers with a FIFO queue beyond them (no 429s: the bound must come from the limiter),
 * service lognormal(sigma 0.3) with median 20 ms up to C = 20 and 100 ms at C = 100 (the same
 * calls per second, so a run costs what C = 20 costs). Load: open-loop Poisson at 3x the
 * upstream's throughput (C / mean service time), through `execute` with a 2 s deadline and the
 * default queue, library defaults otherwise.
 *
 * Criteria over the settled phase (60 s to 120 s), from physics: the upstream's mean in-flight
 * <= 1.5 C, its p90 latency for served calls <= 2x its no-load p90, goodput >= 0.85 of its
 * throughput.
 */
export function coldStart(capacity: number, algorithm: Algorithm, seed = 0x5eed0c00 + capacity): Scenario {
  const name = `cold-start-c${capacity}-${algorithm}`;
  const title = `Cold start into 3x overload, capacity ${capacity} (${algorithm})`;
  const service = serviceFor(capacity);
  return {
    name,
    title,
    group: 12,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['start', 60], ['settled', 60]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service },
        clients: (tools) => [userClient(tools, 0, { algorithm })],
      });
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [{ atMs: 0, perSecond: 3 * throughputOf(capacity, service) }],
        world.endMs,
      ).start();
      await world.run();
      const settled = phase(world.recorder.summarize(), 'settled');
      return resultOf(world, { name, title, algorithm }, runSeed, physicsCriteria(settled, capacity, service, 0.85), {
        capacity,
        ...overloadFigures(settled, capacity, service),
      });
    },
  };
}
