import { atLeast, atMost } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { jainIndex, quantileOf } from '../engine/samples';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  serviceFor,
  clientFor,
  pathSuffix,
  phase,
  phasesOf,
  resultOf,
  type AdmissionPath,
  type Algorithm,
} from './common';

/**
 * Scenario 9: ten clients, each with its own limiter (no coordination: ten processes), sharing one
 * upstream of C = 100 servers with an unbounded queue (no 429s: the bound must come from the
 * limiters, not from the upstream refusing). Each client offers a tenth of 2x its throughput.
 *
 * Criteria over the settled phase (the last 60 s):
 *  - bounded: the p99 of the aggregate in-flight (sampled every 100 ms) <= 2C. Each Vegas client
 *    keeps alpha..beta calls queued (3..6 at a limit of 10), so 10 clients may queue up to ~60 on
 *    top of C; 2C says the upstream's queue never holds more than its own capacity in waiting calls,
 *    i.e. served latency stays within about twice the service time;
 *  - not by starving the upstream: aggregate goodput >= 90% of its throughput;
 *  - fair: Jain's index over the clients' goodput >= 0.9 (1 = equal shares).
 */
const CLIENTS = 10;
const CAPACITY = 100;
const service = serviceFor(CAPACITY);

export function sharedUpstream(algorithm: Algorithm, path: AdmissionPath = 'execute', seed = 0x5eed0009): Scenario {
  const name = `shared-upstream-${algorithm}${pathSuffix(path)}`;
  const title = `Ten clients, own limiters, one upstream of capacity ${CAPACITY} (${algorithm})`;
  return {
    name,
    title,
    group: 9,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['warmup', 60], ['settled', 60]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: CAPACITY, service },
        clients: (tools) => Array.from({ length: CLIENTS }, (_, i) => clientFor(path, tools, i, { algorithm })),
      });
      const throughput = (CAPACITY / service.meanMs) * 1000;
      for (let i = 0; i < CLIENTS; i++) {
        new PoissonArrivals(
          world.simulator,
          world.loadRandom(i),
          world.clients,
          i,
          [{ atMs: 0, perSecond: (2 * throughput) / CLIENTS }],
          world.endMs,
        ).start();
      }
      await world.run();

      const s = world.recorder.series;
      const settled = phase(world.recorder.summarize(), 'settled');
      const inflight: number[] = [];
      for (let i = 0; i < s.tMs.length; i++) if (s.tMs[i]! > settled.startMs) inflight.push(s.upstreamInflight[i]!);
      const inflightP99 = quantileOf(inflight, 0.99);
      const fairness = jainIndex(settled.servedByClient);
      const utilisation = settled.goodputPerSec / throughput;
      const criteria = [
        atMost(`aggregate in-flight p99 / capacity ${CAPACITY}`, inflightP99 / CAPACITY, 2),
        atLeast('aggregate goodput / upstream throughput', utilisation, 0.9),
        atLeast("Jain's fairness index over the clients' goodput", fairness, 0.9),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        capacity: CAPACITY,
        inflightMean: settled.upstreamInflightMean,
        inflightP99,
        inflightMax: settled.upstreamInflightMax,
        limitSum: settled.limitMean,
        jain: fairness,
        utilisation,
        servedP99Ms: settled.latencyP99Ms,
        minClientShare: Math.min(...settled.servedByClient) / (settled.served / CLIENTS),
        maxClientShare: Math.max(...settled.servedByClient) / (settled.served / CLIENTS),
      });
    },
  };
}
