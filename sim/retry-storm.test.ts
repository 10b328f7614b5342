/**
 * The retry-storm gate (issue 18, item 6): the scenario on 16 seeds. One passing seed proves
 * nothing (DESIGN.md §7). Seeds come from the scenario's own by a Weyl step of the golden-ratio
 * constant, `base ^ imul(0x9e3779b1, k)` for k = 0..15 (unsigned), so they are spread over the
 * 32-bit space and reproducible: `npx tsx sim/run.ts retry-storm --seed <seed>` replays one.
 *
 * Every measured figure is printed beside its criterion. The criteria about the retry policy and
 * its budget (naive amplification and collapse; resilix and budget-only attempts per first
 * attempt; the library's invariants) must pass on every seed. The criteria about the limiter in
 * the resilix world (its goodput and its re-convergence) are the too, but they judge the
 * limiter, which the retry policy does not change (the resilix world makes almost no retries: its
 * limiter sheds, and a shed is not retried). They failed on some seeds for a limiter problem that
 * reproduced without any retry (vegas dived to minLimit after an app-limited float); since the
 * v0.4 control loop (adr/0045) they pass on all 16 seeds, and the test below gates them.
 */
import { describe, expect, it } from 'vitest';
import { fmt } from './engine/criteria';
import { describeCriteria, describeFailure, formatSeed, type ScenarioResult } from './engine/scenario';
import { KNOWN_LIBRARY_FAILURES } from './known-failures';
import { LIMITER_CRITERION, retryStorm } from './scenarios/retry-storm';

const SEEDS = 16;
const scenario = retryStorm();
const seeds = Array.from({ length: SEEDS }, (_, k) => (scenario.seed ^ Math.imul(0x9e3779b1, k)) >>> 0);
const results = new Map<number, ScenarioResult>();

async function resultFor(seed: number): Promise<ScenarioResult> {
  let result = results.get(seed);
  if (result === undefined) {
    result = await scenario.run(seed);
    results.set(seed, result);
  }
  return result;
}

const isLimiterCriterion = (name: string): boolean => name.startsWith(LIMITER_CRITERION);

describe('retry storm: naive retries collapse the upstream; resilix retry and its budget do not (issue 18)', () => {
  it('derives 16 distinct seeds from the scenario seed', () => {
    expect(new Set(seeds).size).toBe(SEEDS);
    expect(seeds[0]).toBe(0x5eed0012);
    expect(seeds[1]).toBe((0x5eed0012 ^ 0x9e3779b1) >>> 0);
  });

  for (const seed of seeds) {
    it(`passes every retry and budget criterion with seed ${formatSeed(seed)}`, async () => {
      const result = await resultFor(seed);
      console.log(`${result.name} (seed ${result.seed}, ${result.calls} calls)\n${describeCriteria(result)}`);
      const gated = { ...result, criteria: result.criteria.filter((c) => !isLimiterCriterion(c.name)) };
      expect(gated.criteria.length).toBeGreaterThanOrEqual(6);
      expect(
        gated.criteria.every((c) => c.pass),
        describeFailure(gated),
      ).toBe(true);
    });
  }

  // Was a known library problem of the limiter (v0.3, fixed by adr/0045): after the healthy phase, where the
  // load is 80% of capacity, vegas's limit has grown app-limited to 84-95 (demand is ~32 in flight);
  // when capacity halves, the queue that limit admits makes it cut step after step, down to 4-7
  // (minLimit 4) on most seeds, and it takes 20-30 s to climb back. Goodput over the 60 s halved
  // phase is then 0.72-0.85 of capacity on 10 of 16 seeds (0.81-0.99 over its second half), the
  // settled limit 24-26 (band [16, 24]) on 5, and recovery after the restore under 95% on 4. The
  // same seed with `limiter()` alone and no retry shows the same dive (seed 0xc0da79a3: minimum
  // limit 4 without retry, 7 with it). Measured against src/ at the time of writing.
  // The limiter criteria must pass on at least the seeds known-failures.ts records for retry-storm,
  // all 16 while it lists none (adr/0089 lost one seed to a re-measure's low baseline; adr/0090
  // won it back; adr/0119 lost one to the same mechanism, k = 8; adr/0122's re-measure sized for its concurrency
  // won it back, and 96 of k = 0..95 pass).
  const required = KNOWN_LIBRARY_FAILURES['retry-storm']?.sweepPasses ?? SEEDS;
  it(`meets the limiter criteria on at least ${required} of ${SEEDS} seeds (known-failures.ts)`, async () => {
    const failing: string[] = [];
    let passing = 0;
    for (const seed of seeds) {
      const result = await resultFor(seed);
      const failed = result.criteria.filter((c) => isLimiterCriterion(c.name) && !c.pass);
      if (failed.length === 0) passing++;
      for (const c of failed) failing.push(`${result.seed} ${c.name}: ${fmt(c.measured)} (${c.criterion})`);
    }
    console.log(`limiter criteria failing (${SEEDS - passing} seeds):\n  ${failing.join('\n  ')}`);
    expect(passing).toBeGreaterThanOrEqual(required);
  });
});
