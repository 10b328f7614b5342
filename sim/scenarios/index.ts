import type { Scenario } from '../engine/scenario';
import { baselineShift } from './baseline-shift';
import { capacityHalves, workersHalve } from './capacity-change';
import { cliffRecovery } from './cliff-recovery';
import { coldStart } from './cold-start';
import type { Algorithm } from './common';
import { convergence } from './convergence';
import { demandStep } from './demand-step';
import { explicitOverload } from './explicit-overload';
import { latencyCliff } from './latency-cliff';
import { lowTraffic } from './low-traffic';
import { machineNoise } from './machine-noise';
import { manyClients } from './many-clients';
import { onOff } from './on-off';
import { productionCase } from './production';
import { randomRefusals } from './random-refusals';
import { retryStorm } from './retry-storm';
import { secretCapacity } from './secret-capacity';
import { sharedUpstream } from './shared-upstream';
import { streaming } from './streaming';
import { tailTimeouts } from './tail-timeouts';

export const CONVERGENCE_CAPACITIES = [10, 50, 150] as const;
export const COLD_START_CAPACITIES = [6, 20, 100] as const;
export const DEMAND_STEP_CAPACITIES = [6, 20] as const;
export const CLIFF_RECOVERY_CAPACITIES = [6, 20] as const;
/** (clients, capacity share per client): 2 to 50 clients, shares of 1 to 5 calls (issue 14). */
export const MANY_CLIENT_CELLS = [
  [2, 5],
  [10, 2],
  [10, 5],
  [50, 1],
  [50, 2],
] as const;
export const OVERLOAD_CAPS = [4, 20] as const;
/** Bursts with idle gaps: one client at each capacity, and a fleet of 10 sharing 20 (share 2). */
export const ON_OFF_CAPACITIES = [6, 20, 100] as const;

/** The scenarios every algorithm runs (the matrix): physics criteria, one limiter or many. */
function physics(algorithm: Algorithm): Scenario[] {
  return [
    ...CONVERGENCE_CAPACITIES.map((c) => convergence(c, algorithm)),
    capacityHalves(algorithm),
    latencyCliff(algorithm),
    ...CLIFF_RECOVERY_CAPACITIES.map((c) => cliffRecovery(c, algorithm)),
    baselineShift(algorithm),
    ...COLD_START_CAPACITIES.map((c) => coldStart(c, algorithm)),
    ...DEMAND_STEP_CAPACITIES.map((c) => demandStep(c, algorithm)),
    ...MANY_CLIENT_CELLS.map(([n, share]) => manyClients(n, share, algorithm)),
    machineNoise(algorithm),
    ...OVERLOAD_CAPS.map((k) => explicitOverload(k, algorithm)),
  ];
}

/**
 * The acceptance suite. Every scenario runs through `execute` with the default queue (the user's
 * path); the `-sync` and `-noqueue` variants beside some of them drive the low-level
 * `tryAcquire`/`settle` pair or turn the queue off. vegas (the default) is gated on all of them;
 * gradient2 on the cells its design allows (isGated in sim/sweep-seeds.ts says which and why); aimd is
 * reported.
 */
export function acceptanceScenarios(): Scenario[] {
  return [
    ...physics('vegas'),
    convergence(50, 'vegas', 'sync'),
    latencyCliff('vegas', 'sync'),
    baselineShift('vegas', 'execute', 1.3),
    // A 2x cliff's end: a fall under half the baseline, found by vegas's band (adr/0131).
    ...CLIFF_RECOVERY_CAPACITIES.map((c) => cliffRecovery(c, 'vegas', 0x5eed2c00 + c, 2)),
    // Near the offset where a descent stops just short of 0.6 of its start: a known library problem (adr/0115, adr/0120).
    baselineShift('vegas', 'execute', 1.15, 0x5eed0028),
    // An LLM API's concurrency cap: calls of a second, a 503 at once (adr/0126).
    explicitOverload(20, 'vegas', 0x5eed1100, 1_000),
    // Closed-loop users between C and 2 C from the start: the slow start's growth stops short of its limit (adr/0138, 0139).
    ...DEMAND_STEP_CAPACITIES.map((c) => demandStep(c, 'vegas', 0x5eed0e00 + c, 'closed')),
    // The same demand from users who think half a service time between calls (adr/0141).
    ...DEMAND_STEP_CAPACITIES.map((c) => demandStep(c, 'vegas', 0x5eed1e00 + c, 'thinking')),
    // The same users on a near-constant service (a sleep endpoint's): a lockstep cycle in which every call waits alike.
    ...DEMAND_STEP_CAPACITIES.map((c) => demandStep(c, 'vegas', 0x5eed2e00 + c, 'lockstep')),
    // Idle gaps between bursts: the idle rule's restart, alone and in a fleet that comes back together.
    ...ON_OFF_CAPACITIES.map((c) => onOff(c, 'vegas')),
    onOff(20, 'vegas', 10),
    productionCase(),
    streaming(),
    lowTraffic(),
    secretCapacity('vegas'),
    secretCapacity('vegas', false),
    secretCapacity('aimd', false),
    sharedUpstream('vegas'),
    tailTimeouts(),
    randomRefusals(),
    retryStorm(),
    workersHalve(),
    // The same with gunicorn's backlog: a latency jump instead of 429s when the workers halve (adr/0118).
    workersHalve(true),
    ...physics('gradient2'),
    ...physics('aimd'),
  ];
}

/** The matrix's key of a scenario: its base name and its algorithm, or undefined outside the matrix. */
let matrixBases: Set<string> | undefined;
export function matrixKey(name: string): { base: string; algorithm: Algorithm } | undefined {
  const match = /^(.*)-(vegas|gradient2|aimd)$/.exec(name);
  matrixBases ??= new Set(physics('vegas').map((s) => s.name.replace(/-vegas$/, '')));
  if (match === null || !matrixBases.has(match[1]!)) return undefined;
  return { base: match[1]!, algorithm: match[2] as Algorithm };
}
