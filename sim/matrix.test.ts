/**
 * Scenario 10: scenarios 1, 2, 6 and 8 for each algorithm, tabulated. The spec's criteria gate the
 * default algorithm (vegas, in acceptance.test.ts). gradient2 and aimd are shipped alternatives
 * whose results are reported, not gated: here each of their runs must keep the library's own
 * invariants (no permit leaked, the limit inside its guardrails), and the table shows how each
 * fares against the same criteria.
 */
import { describe, expect, it } from 'vitest';
import { describeFailure, type ScenarioResult } from './engine/scenario';
import { matrixTable } from './report/matrix';
import { acceptanceScenarios, matrixKey } from './scenarios/index';

const cells = acceptanceScenarios().filter((s) => matrixKey(s.name) !== undefined);
const INVARIANT = /no permit leaked|within \[minLimit, maxLimit\]/;

describe('scenario 10: the algorithm matrix', () => {
  const results: ScenarioResult[] = [];

  for (const scenario of cells) {
    const { algorithm } = matrixKey(scenario.name)!;
    if (algorithm === 'vegas') continue;
    it(`${scenario.name} keeps the limiter's invariants (criteria tabulated)`, async () => {
      const result = await scenario.run(scenario.seed);
      results.push(result);
      const broken = result.criteria.filter((c) => INVARIANT.test(c.name) && !c.pass);
      expect(broken, describeFailure({ ...result, criteria: broken })).toEqual([]);
    });
  }

  it('tabulates gradient2 and aimd against the same criteria (npm run sim adds the vegas column)', () => {
    // The vegas cells are the acceptance runs of acceptance.test.ts; rerunning them here would
    // cost ~9 s of CI for a column that file already prints.
    const table = matrixTable(results);
    console.log(`Scenario 10: scenarios 1, 2, 6 and 8 for gradient2 and aimd\n${table}`);
    const others = cells.filter((s) => matrixKey(s.name)!.algorithm !== 'vegas');
    const bases = new Set(others.map((s) => matrixKey(s.name)!.base));
    expect(results.length).toBe(others.length);
    expect(table.split('\n').length).toBe(2 + bases.size);
  });
});
