import { resolveClock, type Clock } from '../../src/core/clock';
import type { Observation } from '../../src/core/observation';
import type { Policy } from '../../src/core/policy';
import { type BreakerPort, runCall } from '../../src/internal';

/**
 * A breaker-position policy that admits everything and records every Observation it is given:
 * lets a test see exactly what the outermost policy learns from each call.
 */
export function spyPolicy(clock?: Clock): Policy & { observations: Observation[]; admitted: number } {
  const resolved = resolveClock(clock, 'spy');
  const observations: Observation[] = [];
  const spy = {
    kind: 'breaker' as const,
    clock: resolved,
    observations,
    admitted: 0,
    port: undefined as unknown as BreakerPort,
    execute<T>(fn: Parameters<Policy['execute']>[0], options?: Parameters<Policy['execute']>[1]): Promise<T> {
      return runCall(
        {
          clock: resolved,
          breaker: spy.port,
          limiter: undefined,
          bulkhead: undefined,
          timeout: undefined,
          classify: undefined,
          observation: undefined,
          observationInUse: false,
        },
        fn as never,
        options,
      );
    },
    snapshot: () => ({ kind: 'spy', observations: observations.length }),
  };
  spy.port = {
    admit: () => {
      spy.admitted++;
      return 0;
    },
    rejection: () => new Error('spy never refuses'),
    settle: (_ticket: number, observation: Observation) => {
      observations.push({ ...observation }); // the runner reuses one Observation object: copy to keep it
    },
  };
  return spy;
}
