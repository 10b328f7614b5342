import { atMost, holds } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { constant, lognormal } from '../models/distributions';
import { ClosedLoopUsers, PoissonArrivals } from '../models/load';
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

/** The closed-loop variant's users, a multiple of the capacity: past it, and under twice it (adr/0138). */
const CLOSED_USERS_PER_CAPACITY = 1.5;
/**
 * The thinking variant's users and their think time, a share of the service's median: 2 C users who each wait half a
 * service time between an answer and their next call keep about 2 C x 1 / 1.5 = 1.33 C calls in flight, past the
 * capacity and under twice it, and their in-flight moves as users think (adr/0141).
 */
const THINKING_USERS_PER_CAPACITY = 2;
const THINK_SHARE_OF_SERVICE = 0.5;
/**
 * The lockstep variant's service spread: a sleep endpoint's, as e2e:real measures them (sigma = ln(p90 / p50) / 1.28:
 * php-fpm 0.003, gunicorn 0.03, the demo 0.05). Users who think a constant time on a near-constant service fall into
 * a cycle in which every call waits alike, whatever the calls ahead of it (adr/0142).
 */
const LOCKSTEP_SIGMA = 0.02;

/**
 * A demand step (issue 14): 10% of capacity for two minutes, then 3x. Demand rising from
 * app-limited to overloaded moves in-flight and goodput up together, which a covariance rule can
 * mistake for "the upstream got slower"; the baseline learnt at low load is right and must stay.
 *
 * Model: C servers, FIFO queue beyond (no 429s), service lognormal(median 20 ms, sigma 0.3).
 * Load: open-loop Poisson at 0.1x the upstream's throughput for 120 s, then 3x for 90 s, through
 * `execute` with a 2 s deadline, library defaults.
 *
 * Criteria: within 20 s of the step the limit is <= 1.5 C and stays there to the end; the
 * baseline at the end is within 1.25x of the baseline before the step (it did not learn the
 * loaded latency); and the physics criteria over the last 60 s (in-flight <= 1.5 C, upstream p90
 * <= 2x no-load, goodput >= 0.85).
 *
 * The `closed` variant (demand-step-closed) replaces the light phase with 1.5 C closed-loop users, who call again
 * 1 ms after each answer: demand past the capacity and under twice it, which stops the slow start's growth short of
 * its limit, so its baseline window measures their queue unless it is measured again at the tested limit (adr/0138,
 * adr/0139, adr/0143). It also asks the baseline before the step to be within 1.25x of the no-load mean. The
 * `thinking` variant (demand-step-thinking) has 2 C users who think half a service time between calls: the same
 * demand, unsteady (adr/0141). The `lockstep` variant (demand-step-lockstep) is the thinking one on a near-constant
 * service (LOCKSTEP_SIGMA), as on e2e:real's sleep endpoints, where the callers wait alike (adr/0142).
 */
export function demandStep(
  capacity: number,
  algorithm: Algorithm,
  seed = 0x5eed0d00 + capacity,
  from: 'light' | 'closed' | 'thinking' | 'lockstep' = 'light',
): Scenario {
  const closed = from !== 'light';
  const thinking = from === 'thinking' || from === 'lockstep';
  const name = `demand-step${closed ? `-${from}` : ''}-c${capacity}-${algorithm}`;
  const healthy = serviceFor(capacity);
  const service = from === 'lockstep' ? lognormal(healthy.medianMs, LOCKSTEP_SIGMA) : healthy;
  const usersPerCapacity = thinking ? THINKING_USERS_PER_CAPACITY : CLOSED_USERS_PER_CAPACITY;
  const thinkMs = thinking ? THINK_SHARE_OF_SERVICE * service.medianMs : 1;
  const title = closed
    ? `Demand step ${usersPerCapacity} C closed-loop users (${thinkMs} ms think) -> 3x capacity ${capacity} (${algorithm})`
    : `Demand step 0.1x -> 3x capacity ${capacity} (${algorithm})`;
  return {
    name,
    title,
    group: 13,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['light', 120], ['step', 30], ['settled', 60]);
      let limiter: Limiter | undefined;
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: capacity, service },
        clients: (tools) => {
          const client = userClient(tools, 0, { algorithm });
          limiter = client.limiter;
          return [client];
        },
      });
      const throughput = throughputOf(capacity, service);
      const stepAtMs = phases[1]!.startMs;
      let baselineBefore = Number.NaN;
      world.simulator.at(stepAtMs, () => {
        baselineBefore = limiter!.snapshot().baselineMs ?? Number.NaN;
      });
      if (closed) {
        // Users that call back at once, or after thinking: demand past the capacity and under twice it.
        const users = Math.round(usersPerCapacity * capacity);
        // Until the step (they share the client's call tags with the arrivals after it).
        new ClosedLoopUsers(
          world.simulator,
          world.loadRandom(1),
          world.clients,
          0,
          users,
          constant(thinkMs),
          stepAtMs,
        ).start();
      }
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [
          { atMs: 0, perSecond: closed ? 0 : 0.1 * throughput },
          { atMs: stepAtMs, perSecond: 3 * throughput },
        ],
        world.endMs,
      ).start();
      await world.run();
      const baselineAfter = limiter!.snapshot().baselineMs ?? Number.NaN;
      const s = world.recorder.series;
      const boundedAfterMs = settleTime(s.limit, s, stepAtMs, world.endMs, 0, 1.5 * capacity);
      const settled = phase(world.recorder.summarize(), 'settled');
      const criteria = [
        holds('the limit is <= 1.5 C by 20 s after the step and stays there', boundedAfterMs <= 20_000),
        atMost('baseline at the end / baseline before the step', baselineAfter / baselineBefore, 1.25),
        // Closed loop: the first baseline is the no-load latency, not the queue of the users past the capacity.
        ...(closed ? [atMost('baseline before the step / no-load mean', baselineBefore / service.meanMs, 1.25)] : []),
        ...physicsCriteria(settled, capacity, service, 0.85),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        capacity,
        boundedAfterS: boundedAfterMs / 1000,
        baselineBeforeMs: baselineBefore,
        baselineAfterMs: baselineAfter,
        limitLight: phase(world.recorder.summarize(), 'light').limitMean,
        limitSettled: settled.limitMean,
        ...latencyFigures(settled, service),
      });
    },
  };
}
