/**
 * The acceptance suite (issue 7; spec §10): every scenario runs the real library on virtual time
 * with its fixed seed, and asserts its numeric criteria. A failure names the scenario, the seed and
 * the command that replays it. Measured values are printed beside their criteria.
 */
import { describe, expect, it } from 'vitest';
import { describeCriteria, describeFailure, type Scenario } from './engine/scenario';
import { acceptanceScenarios, matrixKey } from './scenarios/index';
import { KNOWN_LIBRARY_FAILURES, SWEEP_SEEDS } from './known-failures';

/** Scenario 10's non-default cells (gradient2, aimd) run in matrix.test.ts. */
const scenarios = acceptanceScenarios().filter((s) => {
  const key = matrixKey(s.name);
  return key === undefined || key.algorithm === 'vegas';
});

const INVARIANT = /no permit leaked|within \[minLimit, maxLimit\]/;

async function runAndCheck(scenario: Scenario, known: boolean): Promise<void> {
  const result = await scenario.run(scenario.seed);
  console.log(`${result.name} (seed ${result.seed}, ${result.calls} calls)\n${describeCriteria(result)}`);
  if (!known) {
    expect(result.passed, describeFailure(result)).toBe(true);
    return;
  }
  // A known library problem: the sweep in .ci/run gates its pass count over 16 seeds (a ratchet,
  // sim/known-failures.ts); here its invariants must hold on the committed seed.
  const broken = result.criteria.filter((c) => INVARIANT.test(c.name) && !c.pass);
  expect(broken, describeFailure({ ...result, criteria: broken })).toEqual([]);
}

describe('acceptance scenarios (spec §10, issue 7)', () => {
  for (const scenario of scenarios) {
    const known = KNOWN_LIBRARY_FAILURES[scenario.name];
    if (known !== undefined) {
      it(`${scenario.name}: ${scenario.title} [known library problem, passes ${known.sweepPasses}/${SWEEP_SEEDS} seeds: ${known.problem}]`, () =>
        runAndCheck(scenario, true));
    } else {
      it(`${scenario.name}: ${scenario.title}`, () => runAndCheck(scenario, false));
    }
  }
});
