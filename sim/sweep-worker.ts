/** A sweep worker (sim/sweep.ts): runs the jobs its parent sends, one at a time, and replies. */
import { acceptanceScenarios } from './scenarios/index';
import { formatSeed, type SweepRun } from './sweep-seeds';

// Shed and timed-out calls reject with typed errors; their stack traces are the sweep's largest
// cost and nobody reads them here.
Error.stackTraceLimit = 0;

const scenarios = new Map(acceptanceScenarios().map((s) => [s.name, s]));

process.on('message', (job: { scenario: string; seed: number; k: number }) => {
  const scenario = scenarios.get(job.scenario);
  if (scenario === undefined) throw new Error(`sweep: no scenario ${job.scenario}`);
  const cpu = process.cpuUsage();
  void scenario.run(job.seed).then((result) => {
    const used = process.cpuUsage(cpu);
    const run: SweepRun = {
      scenario: job.scenario,
      k: job.k,
      seed: job.seed,
      seedHex: formatSeed(job.seed),
      passed: result.passed,
      criteria: result.criteria,
      figures: result.figures,
      cpuMs: (used.user + used.system) / 1000,
    };
    process.send!(run);
  });
});
