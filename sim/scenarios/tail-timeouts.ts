import { atLeast, lessThan } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { bimodal, lognormal } from '../models/distributions';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import { phase, phasesOf, resultOf, simLimiter, stats } from './common';

/**
 * Tail timeouts on a healthy upstream (the soak finding of adr/0037). The upstream has room to
 * spare: 50 servers, service lognormal(median 100 ms, sigma 0.3), offered 60% of its throughput.
 * 1% of calls, a normal p99 tail, take 2 s (lognormal median 2 000 ms, sigma 0.2), far past the
 * callers' 1 s deadline: they end as `timeout`, every window, at a rate that does not move with
 * load. Calls run through `execute` with timeoutMs 1 000 (the real user path; the permit is
 * released at the deadline, the upstream's doomed work goes on and holds its server).
 *
 * Demand: 300 calls/s x ~0.11 s of mean service is ~32 calls in flight for the healthy calls
 * (Little's law), plus ~3 calls held to their deadline; the upstream's 50 servers are never the
 * bottleneck, so latency stays at its no-load value and nothing is saturation evidence.
 *
 * Criteria (docs/simulation.md, "Tail timeouts"):
 *  - the limit does not walk down: its mean over the soak (the second half, 300-600 s) is at
 *    least 0.8 x its mean over the warm phase (60-300 s; the first minute is start-up), the same
 *    ±20% band the convergence scenarios allow for oscillation;
 *  - it stays at or above the offered concurrency (32: 300/s x the fast mode's mean service of
 *    0.105 s, plus the timed-out calls' share), so the healthy calls are never the ones refused;
 *  - shed rate (refused plus timed out in our queue) under 1% over the soak: the upstream is
 *    healthy, so anything the limiter turns away beyond noise is a false positive.
 */
const FAST = lognormal(100, 0.3);
const SLOW = lognormal(2_000, 0.2);
/** The p99 tail: 1% of calls. */
const SLOW_SHARE = 0.01;
const SERVICE = bimodal(FAST, SLOW, SLOW_SHARE);
const CAPACITY = 50;
/** Offered load, as a share of the upstream's throughput for the fast calls. */
const LOAD_SHARE = 0.6;
const DEADLINE_MS = 1_000;

export function tailTimeouts(seed = 0x5eed0011): Scenario {
  const name = 'tail-timeouts';
  const title = 'Healthy upstream at 60% load with a 1% tail past the deadline (vegas)';
  return {
    name,
    title,
    group: 11,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['start', 60], ['warm', 240], ['soak', 300]);
      const world = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 100,
        upstream: { servers: CAPACITY, service: SERVICE },
        clients: (tools) => {
          const l = simLimiter(tools, 0, {});
          return [{ executor: l, limiter: l, timeoutMs: DEADLINE_MS }];
        },
      });
      const rate = LOAD_SHARE * (CAPACITY / FAST.meanMs) * 1000;
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
      const summary = world.recorder.summarize();
      const warm = phase(summary, 'warm');
      const soak = phase(summary, 'soak');
      const warmLimit = stats(s.limit, s, warm.startMs, warm.endMs);
      const soakLimit = stats(s.limit, s, soak.startMs, soak.endMs);
      // Offered concurrency (Little's law): arrivals x the mean time a call holds a permit (the
      // fast calls' mean service, and the deadline for the slow ones).
      const offeredConcurrency = (rate * ((1 - SLOW_SHARE) * FAST.meanMs + SLOW_SHARE * DEADLINE_MS)) / 1000;
      const turnedAway = (soak.shed + soak.queuedTimeouts) / soak.arrivals;
      const criteria = [
        atLeast('limit (mean of the soak) / limit (mean of the warm phase)', soakLimit.mean / warmLimit.mean, 0.8),
        atLeast(
          `limit (lowest in the soak) vs offered concurrency ${offeredConcurrency.toFixed(1)}`,
          soakLimit.min,
          offeredConcurrency,
        ),
        lessThan('shed rate over the soak (refused + timed out queued)', turnedAway, 0.01),
      ];
      return resultOf(world, { name, title, algorithm: 'vegas' }, runSeed, criteria, {
        offeredConcurrency,
        warmLimitMean: warmLimit.mean,
        soakLimitMean: soakLimit.mean,
        soakLimitMin: soakLimit.min,
        soakShedRate: turnedAway,
        soakTimeoutShare: soak.timeouts / soak.arrivals,
        soakGoodputPerSec: soak.goodputPerSec,
        soakInflightMean: soak.inflightMean,
        soakUpstreamInflightMean: soak.upstreamInflightMean,
        servedP99Ms: soak.latencyP99Ms,
      });
    },
  };
}
