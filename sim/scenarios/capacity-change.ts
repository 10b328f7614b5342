import { atMost, holds, within } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  clientFor,
  serviceFor,
  pathSuffix,
  phasesOf,
  resultOf,
  settleTime,
  stats,
  throughputOf,
  type AdmissionPath,
  type Algorithm,
} from './common';
import { OVERLOAD_FACTOR, OVERLOAD_QUEUE_PER_SERVER } from './convergence';

/**
 * Scenario 2: capacity halves, then is restored (spec §10: "capacity halves -> limit
 * re-converges; recovery observed after the baseline resets").
 *
 * Model: the convergence upstream with C = 50 for 90 s, 25 for 90 s, 50 again for 90 s. Load: 2x
 * the full capacity's throughput throughout (4x while halved). Criteria: in each phase's last
 * quarter the limit's mean is within ±20% of that phase's C; the re-convergence times are
 * reported.
 */
export function capacityHalves(algorithm: Algorithm, path: AdmissionPath = 'execute', seed = 0x5eed0002): Scenario {
  const name = `capacity-halves-${algorithm}${pathSuffix(path)}`;
  const title = `Capacity 50 -> 25 -> 50 under overload (${algorithm}, ${path})`;
  const full = 50;
  const half = 25;
  const service = serviceFor(full);
  return {
    name,
    title,
    group: 2,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['full', 90], ['halved', 90], ['restored', 90]);
      const world = await runHalving(runSeed, phases, full, half, service, path, algorithm);

      const s = world.recorder.series;
      const fullSettled = lastQuarter(world, phases[0]!);
      const halvedSettled = lastQuarter(world, phases[1]!);
      const restoredSettled = lastQuarter(world, phases[2]!);
      const halvedAfterMs = settleTime(s.limit, s, phases[1]!.startMs, phases[1]!.endMs, 0.8 * half, 1.2 * half);
      const restoredAfterMs = settleTime(s.limit, s, phases[2]!.startMs, phases[2]!.endMs, 0.8 * full, 1.2 * full);
      const criteria = [
        within(`limit at capacity ${full} (mean of the phase's last 25%)`, fullSettled.mean, 0.8 * full, 1.2 * full),
        within(`limit after capacity halves to ${half}`, halvedSettled.mean, 0.8 * half, 1.2 * half),
        within(`limit after capacity is restored to ${full}`, restoredSettled.mean, 0.8 * full, 1.2 * full),
        holds('re-converged to the half within the phase and stayed', Number.isFinite(halvedAfterMs)),
        holds('recovered to the full capacity within the phase and stayed', Number.isFinite(restoredAfterMs)),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        fullLimit: fullSettled.mean,
        halvedLimit: halvedSettled.mean,
        restoredLimit: restoredSettled.mean,
        halvedAfterS: halvedAfterMs / 1000,
        restoredAfterS: restoredAfterMs / 1000,
      });
    },
  };
}

/** e2e:real's gunicorn workers before and during its phase change (scripts/e2e-real.ts). */
const WORKERS_FULL = 4;
const WORKERS_HALF = 2;
/** Issue 14 item 5: a phase change re-converges into [0.7, 2] x the new capacity within 10 s. */
const RECONVERGE_S = 10;

/**
 * Workers halve, then come back: gunicorn's 4 -> 2 -> 4 sync workers of e2e:real (SIGTTOU, SIGTTIN),
 * in the simulator. At capacities this small one call is a quarter of the capacity, and a window
 * lasts 2 s, so the budget of 10 s holds a handful of windows.
 *
 * Model: the convergence upstream with C = 4 for 45 s, 2 for 15 s, 4 for 15 s; service 20 ms
 * median (the endpoint's sleep). Load: Poisson at 2x the full capacity's throughput. Criteria
 * (issue 14 item 5, as e2e:real measures them): after each change the limit is inside
 * [0.7, 2] x the new C within 10 s and stays there to the end of the phase; over the full phase's
 * last 25% its mean is inside the same band. `backlog`: the upstream queues without bound instead,
 * as gunicorn's listen backlog does (workers-halve-backlog, adr/0118).
 */
export function workersHalve(backlog = false, seed = backlog ? 0x5eed0033 : 0x5eed0032): Scenario {
  const name = backlog ? 'workers-halve-backlog' : 'workers-halve';
  const title = backlog
    ? "Workers 4 -> 2 -> 4 under overload, gunicorn's backlog instead of 429s (vegas, execute)"
    : 'Workers 4 -> 2 -> 4 under overload (gunicorn phase change; vegas, execute)';
  // gunicorn queues what its workers cannot take in its listen backlog (2 048) and never answers 429: the queue
  // is unbounded at these loads. The convergence upstream's 429s past one queued call per server are the default.
  const queuePerServer = backlog ? Infinity : OVERLOAD_QUEUE_PER_SERVER;
  return {
    name,
    title,
    group: 2,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      // e2e:real's timings: 45 s, then 15 s at half, then 15 s back.
      const phases = phasesOf(['full', 45], ['halved', 15], ['restored', 15]);
      const service = serviceFor(WORKERS_FULL);
      const world = await runHalving(
        runSeed,
        phases,
        WORKERS_FULL,
        WORKERS_HALF,
        service,
        'execute',
        'vegas',
        queuePerServer,
      );

      const s = world.recorder.series;
      const band = (c: number): [number, number] => [0.7 * c, 2 * c];
      const settled = lastQuarter(world, phases[0]!);
      const afterS = (p: (typeof phases)[number], c: number): number =>
        settleTime(s.limit, s, p.startMs, p.endMs, ...band(c)) / 1000;
      const halvedAfterS = afterS(phases[1]!, WORKERS_HALF);
      const restoredAfterS = afterS(phases[2]!, WORKERS_FULL);
      const criteria = [
        within(`limit at ${WORKERS_FULL} workers (mean of the phase's last 25%)`, settled.mean, ...band(WORKERS_FULL)),
        atMost(`re-converged after ${WORKERS_FULL} -> ${WORKERS_HALF} workers, s`, halvedAfterS, RECONVERGE_S),
        atMost(`re-converged after ${WORKERS_HALF} -> ${WORKERS_FULL} workers, s`, restoredAfterS, RECONVERGE_S),
      ];
      return resultOf(world, { name, title, algorithm: 'vegas' }, runSeed, criteria, {
        fullLimit: settled.mean,
        halvedAfterS,
        restoredAfterS,
      });
    },
  };
}

/** The limit's statistics over a phase's last 25%: where both scenarios call it settled. */
function lastQuarter(world: World, phase: ReturnType<typeof phasesOf>[number]): ReturnType<typeof stats> {
  const s = world.recorder.series;
  return stats(s.limit, s, phase.startMs + 0.75 * (phase.endMs - phase.startMs), phase.endMs);
}

/**
 * The convergence upstream at `full` servers, `half` over the second phase and `full` again over
 * the third, under Poisson load at 2x the full capacity's throughput (4x while halved); one client.
 * `queuePerServer`: calls the upstream queues per server before it answers 429.
 */
async function runHalving(
  runSeed: number,
  phases: ReturnType<typeof phasesOf>,
  full: number,
  half: number,
  service: ReturnType<typeof serviceFor>,
  path: AdmissionPath,
  algorithm: Algorithm,
  queuePerServer = OVERLOAD_QUEUE_PER_SERVER,
): Promise<World> {
  const world = new World({
    seed: runSeed,
    phases,
    sampleEveryMs: 100,
    upstream: { servers: full, service, overloadQueuePerServer: queuePerServer },
    clients: (tools) => [clientFor(path, tools, 0, { algorithm })],
  });
  world.simulator.at(phases[1]!.startMs, () => world.upstream.setServers(half));
  world.simulator.at(phases[2]!.startMs, () => world.upstream.setServers(full));
  new PoissonArrivals(
    world.simulator,
    world.loadRandom(0),
    world.clients,
    0,
    [{ atMs: 0, perSecond: OVERLOAD_FACTOR * throughputOf(full, service) }],
    world.endMs,
  ).start();
  await world.run();
  return world;
}
