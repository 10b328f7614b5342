import { atLeast, atMost } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import {
  latencyFigures,
  phasesOf,
  resultOf,
  serviceFor,
  serviceOf,
  stats,
  throughputOf,
  userClient,
  type Algorithm,
} from './common';

/**
 * Explicit overload (issue 20): an upstream that serves at most K calls at once and answers every
 * call beyond K with a 503 in 1.5 ms (nginx `limit_conn`), no queue. Its latency never rises, so
 * the only signal is the overload verdict; and every slot the limit holds above K spins, refused
 * in 1.5 ms and refilled from the queue at once, so even a limit of K + 1 is mostly refusals.
 *
 * Model: K servers, service lognormal(median 20 ms, sigma 0.3), `overloadQueuePerServer: 0` (a
 * call that finds K busy is refused at once), refusals after 1.5 ms. Load: open-loop Poisson at 2x
 * the throughput, through `execute` with a 2 s deadline, library defaults.
 *
 * Criteria from 10 s on (40 s with `serviceMs`): the share of the calls that reached the upstream
 * and were answered with overload <= 10%, and goodput >= 0.9 of the cap's throughput.
 *
 * With `serviceMs` (an LLM API's concurrency cap: calls of a second or more, a 429 at once), the
 * service has that median, the run is 40 s of start and 120 s settled, and callers wait up to 10 s
 * (the 2 s default is two services). A window that closed on the refusals before one service time
 * counted almost no completions, and the overload cut went to one call (adr/0126).
 */
export function explicitOverload(
  cap: number,
  algorithm: Algorithm,
  seed = 0x5eed1000 + cap,
  serviceMs?: number,
): Scenario {
  const slow = serviceMs !== undefined;
  const name = `explicit-overload-k${cap}${slow ? `-${serviceMs}ms` : ''}-${algorithm}`;
  const title = `Connection cap ${cap} answering 503 in 1.5 ms${slow ? `, service ${serviceMs} ms` : ''} (${algorithm})`;
  const service = slow ? serviceOf(serviceMs) : serviceFor(cap);
  return {
    name,
    title,
    group: 16,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = slow ? phasesOf(['start', 40], ['settled', 120]) : phasesOf(['start', 10], ['settled', 80]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: cap, service, overloadQueuePerServer: 0, fastAnswerMs: 1.5 },
        clients: (tools) => [userClient(tools, 0, { algorithm }, slow ? { timeoutMs: 10_000 } : {})],
      });
      const throughput = throughputOf(cap, service);
      new PoissonArrivals(
        world.simulator,
        world.loadRandom(0),
        world.clients,
        0,
        [{ atMs: 0, perSecond: 2 * throughput }],
        world.endMs,
      ).start();
      await world.run();
      const settled = world.recorder.summarize()[1]!;
      const reached =
        settled.served + settled.overload + settled.failures + (settled.timeouts - settled.queuedTimeouts);
      const overloadShare = reached > 0 ? settled.overload / reached : Number.NaN;
      const s = world.recorder.series;
      const limit = stats(s.limit, s, settled.startMs, settled.endMs);
      const criteria = [
        atMost(`share of calls reaching the upstream answered 503 (from ${slow ? 40 : 10} s on)`, overloadShare, 0.1),
        atLeast(`goodput / the cap's throughput`, settled.goodputPerSec / throughput, 0.9),
      ];
      return resultOf(world, { name, title, algorithm }, runSeed, criteria, {
        cap,
        limitMean: limit.mean,
        limitMin: limit.min,
        limitMax: limit.max,
        overloadShare,
        overloadsPerSecond: settled.overload / ((settled.endMs - settled.startMs) / 1000),
        ...latencyFigures(settled, service),
      });
    },
  };
}
