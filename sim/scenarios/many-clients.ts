import { atLeast } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { jainIndex } from '../engine/samples';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  latencyFigures,
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
 * Many clients, one upstream (issue 14): N independent processes, each with its own limiter and
 * no coordination, share an upstream of capacity C = N x share, at 3x its throughput in all. Each
 * client's queue estimate counts only its own calls, so each client's band adds to every other's:
 * a band of a few requests per client is a queue of N x that at the upstream.
 *
 * Model: C servers, FIFO queue beyond (no 429s), service lognormal(sigma 0.3) with median 20 ms up
 * to C = 20, 50 ms up to 50, 100 ms above (similar calls per second across cells). Each client
 * offers 3x its share of the throughput, open-loop Poisson, through `execute` with a 2 s deadline
 * and library defaults; all start at t = 0.
 *
 * Criteria over the last 60 s: the aggregate upstream in-flight (mean) <= 1.5 C, the upstream p90
 * <= 2x no-load, aggregate goodput >= 0.85 of the throughput, Jain's index over the clients'
 * goodput >= 0.9.
 */
export function manyClients(clients: number, share: number, algorithm: Algorithm, seed = 0x5eed0e00): Scenario {
  const capacity = clients * share;
  const name = `many-clients-n${clients}-s${share}-${algorithm}`;
  const title = `${clients} clients, own limiters, share ${share} of capacity ${capacity} each (${algorithm})`;
  const service = serviceFor(capacity);
  return {
    name,
    title,
    group: 14,
    seed: (seed + clients * 16 + share) >>> 0,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['start', 60], ['settled', 60]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service },
        clients: (tools) => Array.from({ length: clients }, (_, i) => userClient(tools, i, { algorithm })),
      });
      const throughput = throughputOf(capacity, service);
      for (let i = 0; i < clients; i++) {
        new PoissonArrivals(
          world.simulator,
          world.loadRandom(i),
          world.clients,
          i,
          [{ atMs: 0, perSecond: (3 * throughput) / clients }],
          world.endMs,
        ).start();
      }
      await world.run();
      const settled = phase(world.recorder.summarize(), 'settled');
      const jain = jainIndex(settled.servedByClient);
      const criteria = [
        ...physicsCriteria(settled, capacity, service, 0.85),
        atLeast("Jain's fairness index over the clients' goodput", jain, 0.9),
      ];
      const perClient = settled.served / clients;
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        clients,
        share,
        capacity,
        limitSum: settled.limitMean,
        upstreamInflightMean: settled.upstreamInflightMean,
        jain,
        minClientShare: Math.min(...settled.servedByClient) / perClient,
        maxClientShare: Math.max(...settled.servedByClient) / perClient,
        ...latencyFigures(settled, service),
      });
    },
  };
}
