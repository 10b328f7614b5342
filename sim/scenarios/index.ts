import type { Scenario } from '../engine/scenario';
import { baselineShift } from './baseline-shift';
import { capacityHalves } from './capacity-change';
import { ALGORITHMS } from './common';
import { convergence } from './convergence';
import { latencyCliff } from './latency-cliff';
import { lowTraffic } from './low-traffic';
import { productionCase } from './production';
import { retryStorm } from './retry-storm';
import { secretCapacity } from './secret-capacity';
import { sharedUpstream } from './shared-upstream';
import { streaming } from './streaming';
import { tailTimeouts } from './tail-timeouts';

export const CONVERGENCE_CAPACITIES = [10, 50, 150] as const;

/**
 * The acceptance suite, in the order. Scenarios 1, 2, 6 and 8 run once per algorithm
 * (scenario 10: the matrix); the vegas runs are the acceptance runs of 1, 2, 6 and 8 (vegas is the
 * default algorithm).
 */
export function acceptanceScenarios(): Scenario[] {
  const matrix = (algorithm: (typeof ALGORITHMS)[number]): Scenario[] => [
    ...CONVERGENCE_CAPACITIES.map((c) => convergence(c, algorithm)),
    capacityHalves(algorithm),
    latencyCliff(algorithm),
    baselineShift(algorithm),
  ];
  return [
    ...matrix('vegas'),
    productionCase(),
    streaming(),
    lowTraffic(),
    secretCapacity('aimd'),
    secretCapacity('vegas'),
    sharedUpstream('vegas'),
    tailTimeouts(),
    retryStorm(),
    ...matrix('gradient2'),
    ...matrix('aimd'),
  ];
}

/** Scenarios of the matrix (issue scenario 10): which algorithm and which base scenario. */
export function matrixKey(name: string): { base: string; algorithm: string } | undefined {
  const match = /^(convergence-c\d+|capacity-halves|latency-cliff|baseline-shift)-(vegas|gradient2|aimd)$/.exec(name);
  return match === null ? undefined : { base: match[1]!, algorithm: match[2]! };
}
