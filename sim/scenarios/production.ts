import { breaker } from '../../src/breaker/breaker';
import { pipeline } from '../../src/pipeline/pipeline';
import { atMost, holds } from '../engine/criteria';
import type { Scenario, ScenarioResult } from '../engine/scenario';
import { lognormal } from '../models/distributions';
import { PoissonArrivals } from '../models/load';
import { World } from '../models/world';
import type { LimiterOptions } from '../../src/limiter/limiter';
import { phase, phasesOf, resultOf, simLimiter } from './common';

/**
 * Scenario 3: the production case (spec §1, §10): the upstream's p50 goes from 0.35 s to 10.4 s
 * with a 0% error rate. A failure-rate breaker is blind to it; the slow-call condition reacts late
 * and all at once; the limiter must act (shrink its limit) before that condition would have opened.
 *
 * Model: an upstream that is slow on its own (10 000 servers: our concurrency does not cause the
 * slowdown), service lognormal(median 350 ms, sigma 0.5), every service time x29.7 from 120 s on
 * (median 10.4 s). Load: 20 calls/s Poisson, no caller deadline (no timeouts: 0% errors), through
 * `execute`. Two runs of the same seed:
 *  A. the breaker alone, with its defaults (slow call > 10 s, slow-call rate 50%, 20 samples,
 *     60 s window): when would its slow-call condition open?
 *  B. pipeline(breaker, limiter) with the library defaults (vegas): when does the limiter first
 *     shed?
 * Criteria: B's limit shrinks before A opens (both measured from the onset: the first shrink is
 * when the limiter acts; whether that sheds depends on demand); B sheds nothing while healthy
 * (shed rate <= 1%); and a control that must lose: C, a fixed limit of 20 in the same pipeline,
 * never shrinks, so it fails the first criterion (a scenario a fixed limit passes would not test
 * adaptation).
 */
const SERVICE = lognormal(350, 0.5);
const SLOWDOWN = 10_400 / 350;
const RATE = 20;

export function productionCase(seed = 0x5eed0003): Scenario {
  const name = 'production-slowdown';
  const title = 'Production case: p50 0.35 s -> 10.4 s at 0% errors, limiter vs breaker slow-call';
  return {
    name,
    title,
    group: 3,
    seed,
    async run(runSeed: number): Promise<ScenarioResult> {
      const phases = phasesOf(['healthy', 120], ['degraded', 300]);
      const onset = phases[1]!.startMs;
      let breakerOpenedAt = NaN;
      let pipelineBreakerOpenedAt = NaN;
      let firstShrinkAt = NaN;

      const alone = new World({
        seed: runSeed,
        phases,
        sampleEveryMs: 1000,
        upstream: { servers: 10_000, service: SERVICE },
        clients: (tools) => {
          const b = breaker({ clock: tools.clock });
          b.onOpen((change) => {
            if (breakerOpenedAt !== breakerOpenedAt) breakerOpenedAt = change.at;
          });
          return [{ executor: b }];
        },
      });
      /** pipeline(breaker, limiter): the first shrink of the limit after the onset is reported through `onShrink`. */
      const limitedWorld = (limiterOptions: LimiterOptions, onShrink: (at: number) => void): World =>
        new World({
          seed: runSeed,
          phases,
          sampleEveryMs: 1000,
          upstream: { servers: 10_000, service: SERVICE },
          clients: (tools) => {
            const b = breaker({ clock: tools.clock });
            b.onOpen((change) => {
              if (pipelineBreakerOpenedAt !== pipelineBreakerOpenedAt) pipelineBreakerOpenedAt = change.at;
            });
            const l = simLimiter(tools, 0, limiterOptions);
            l.onLimitChange((change) => {
              if (change.at >= onset && change.to < change.from) onShrink(change.at);
            });
            return [{ executor: pipeline(b, l), limiter: l }];
          },
        });
      const protectedWorld = limitedWorld({}, (at) => {
        if (firstShrinkAt !== firstShrinkAt) firstShrinkAt = at;
      });
      // The control that must lose: a fixed limit of 20 never shrinks, whatever the upstream does.
      let controlShrinkAt = NaN;
      const control = limitedWorld({ algorithm: 'fixed', initialLimit: 20, maxLimit: 20 }, (at) => {
        if (controlShrinkAt !== controlShrinkAt) controlShrinkAt = at;
      });
      for (const world of [alone, protectedWorld, control]) {
        world.simulator.at(onset, () => world.upstream.setServiceScale(SLOWDOWN));
        new PoissonArrivals(
          world.simulator,
          world.loadRandom(0),
          world.clients,
          0,
          [{ atMs: 0, perSecond: RATE }],
          world.endMs,
        ).start();
        await world.run();
      }

      const shrinkAfterS = (firstShrinkAt - onset) / 1000;
      const openAfterS = (breakerOpenedAt - onset) / 1000;
      const before = (at: number): boolean =>
        at === at && at >= onset && (breakerOpenedAt !== breakerOpenedAt || at < breakerOpenedAt);
      const healthy = phase(protectedWorld.recorder.summarize(), 'healthy');
      const degraded = phase(protectedWorld.recorder.summarize(), 'degraded');
      const aloneDegraded = phase(alone.recorder.summarize(), 'degraded');
      const criteria = [
        holds(
          `limiter shrinks (at +${fmtS(shrinkAfterS)}) before the breaker's slow-call condition opens (at +${fmtS(openAfterS)})`,
          before(firstShrinkAt),
        ),
        atMost('limiter shed rate while healthy', healthy.shedRate, 0.01),
        holds(
          'control (a fixed limit of 20) fails it: it never shrinks before the breaker opens',
          !before(controlShrinkAt),
        ),
      ];
      const shedAt = protectedWorld.clients.firstShedAt[0]!;
      return resultOf(
        protectedWorld,
        { name, title, algorithm: 'vegas' },
        runSeed,
        criteria,
        {
          limiterFirstShrinkAfterS: shrinkAfterS,
          limiterFirstShedAfterS: (shedAt - onset) / 1000,
          breakerAloneOpensAfterS: openAfterS,
          breakerInPipelineOpensAfterS: (pipelineBreakerOpenedAt - onset) / 1000,
          degradedShedRate: degraded.shedRate,
          degradedInflightMean: degraded.inflightMean,
          breakerAloneInflightMax: aloneDegraded.inflightMax,
          limiterInflightMax: degraded.inflightMax,
        },
        [
          { label: 'breaker alone', world: alone },
          { label: 'fixed 20', world: control },
        ],
      );
    },
  };
}

function fmtS(seconds: number): string {
  return Number.isFinite(seconds) ? `${seconds.toFixed(1)} s` : 'never';
}
