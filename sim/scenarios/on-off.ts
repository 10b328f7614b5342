import { atLeast, atMost, holds, type Criterion } from '../engine/criteria';
import { jainIndex } from '../engine/samples';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import type { Limiter } from '../../src/limiter/limiter';
import {
  latencyFigures,
  phase,
  phasesOf,
  physicsCriteria,
  resultOf,
  serviceFor,
  settleTime,
  throughputOf,
  userClient,
  type Algorithm,
} from './common';

/** Three bursts of 40 s; the first 10 s of each are reported, not judged, and burst 1 (a cold start) not at all. */
const BURSTS = 3;
const BURST_S = 40;
const BURST_START_S = 10;
/** Each gap is idle: over idleAfterMs (2 x maxWindowMs, 60 s by default; adr/0031). */
const GAP_S = 90;

/**
 * Bursts of overload with idle gaps between them: a batch job, a cron, traffic that comes in waves. Every gap is
 * idle, so each burst after the first meets the idle rule (adr/0031): the stale window and smoothing dropped, the
 * limit and the baseline kept (adr/0140; until then a slow start from that limit, which overshot to 4-5 C and drained
 * under it). No other scenario is built on an idle gap (low-traffic meets one by chance on some seeds).
 *
 * Model: C servers, FIFO queue beyond (no 429s), service lognormal(sigma 0.3) at the scenarios' median for C. Load:
 * open-loop Poisson at 3x the upstream's throughput for 40 s, then nothing for 90 s, three times; through `execute`
 * with a 2 s deadline, library defaults. The fleet variant (`-n<N>`) splits the load over N clients, each with its
 * own limiter, that go idle and come back together.
 *
 * Criteria for bursts 2 and 3, over each burst from 10 s in to its end: the physics criteria (upstream in-flight
 * <= 1.5 C, upstream p90 <= 2x no-load, goodput >= 0.85 of the throughput); one client: its limit <= 1.5 C from
 * 10 s in to the end; a fleet: Jain's index >= 0.9. And every client's baseline at the end within 1.25x of the
 * no-load mean (no burst learnt a queue).
 */
export function onOff(capacity: number, algorithm: Algorithm, clients = 1, seed = 0x5eed3000 + capacity): Scenario {
  const fleet = clients > 1;
  const name = `on-off-c${capacity}${fleet ? `-n${clients}` : ''}-${algorithm}`;
  const who = fleet ? `, ${clients} clients` : '';
  const title = `Bursts of 3x overload with idle gaps, capacity ${capacity}${who} (${algorithm})`;
  const service = serviceFor(capacity);
  return {
    name,
    title,
    group: 13,
    seed: (seed + (fleet ? clients * 16 : 0)) >>> 0,
    async run(runSeed: number): Promise<ScenarioResult> {
      const spec: Array<[string, number]> = [];
      for (let b = 1; b <= BURSTS; b++) {
        spec.push([`burst${b}-start`, BURST_START_S], [`burst${b}`, BURST_S - BURST_START_S]);
        if (b < BURSTS) spec.push([`gap${b}`, GAP_S]);
      }
      const phases = phasesOf(...spec);
      const all: Limiter[] = [];
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service },
        clients: (tools) =>
          Array.from({ length: clients }, (_, i) => {
            const client = userClient(tools, i, { algorithm });
            all.push(client.limiter);
            return client;
          }),
      });
      const throughput = throughputOf(capacity, service);
      // Load starts with each burst and stops with each gap.
      const steps = phases
        .filter((p) => p.name.endsWith('-start') || p.name.startsWith('gap'))
        .map((p) => ({ atMs: p.startMs, perSecond: p.name.startsWith('gap') ? 0 : (3 * throughput) / clients }));
      for (let i = 0; i < clients; i++) {
        new PoissonArrivals(world.simulator, world.loadRandom(i), world.clients, i, steps, world.endMs).start();
      }
      await world.run();
      const summary = world.recorder.summarize();
      const s = world.recorder.series;
      const criteria: Criterion[] = [];
      const figures: Record<string, number> = { capacity, clients };
      for (let b = 2; b <= BURSTS; b++) {
        const start = phase(summary, `burst${b}-start`);
        const judged = phase(summary, `burst${b}`);
        criteria.push(...physicsCriteria(judged, capacity, service, 0.85, `burst ${b}: `));
        if (fleet) {
          const jain = jainIndex(judged.servedByClient);
          criteria.push(atLeast(`burst ${b}: Jain's fairness index over the clients' goodput`, jain, 0.9));
          figures[`burst${b}Jain`] = jain;
        } else {
          const boundedAfterMs = settleTime(s.limit, s, start.startMs, judged.endMs, 0, 1.5 * capacity);
          criteria.push(holds(`burst ${b}: the limit is <= 1.5 C from 10 s in to the end`, boundedAfterMs <= 10_000));
          figures[`burst${b}BoundedAfterS`] = boundedAfterMs / 1000;
        }
        // The burst's first 10 s, reported: how the loop resumes from the limit the last burst left.
        figures[`burst${b}StartInflight`] = start.upstreamInflightMean / capacity;
        figures[`burst${b}StartInflightMax`] = start.upstreamInflightMax / capacity;
        figures[`burst${b}StartGoodput`] = start.goodputPerSec / throughput;
        figures[`burst${b}Limit`] = judged.limitMean / capacity;
      }
      // The highest client's baseline: a client that learnt a queue is the one a fleet's fairness pays for.
      const baselineEnd = Math.max(...all.map((l) => l.snapshot().baselineMs ?? Number.NaN)) / service.meanMs;
      criteria.push(atMost('baseline at the end / no-load mean (the highest client)', baselineEnd, 1.25));
      figures.baselineEnd = baselineEnd;
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        ...figures,
        ...latencyFigures(phase(summary, `burst${BURSTS}`), service),
      });
    },
  };
}
