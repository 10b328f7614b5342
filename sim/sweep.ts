/**
 * `npm run sim:sweep -- --seeds 64 [words...] [--first 16] [--jobs 2] [--json file]`: runs every scenario (or
 * those whose name contains one of the words) on many seeds and prints, per scenario and per
 * criterion, the pass rate and the measured figure's min / median / max over the seeds.
 *
 * Seed k of a scenario is `seed(k) = scenario.seed ^ (0x9e3779b1 * k)` (k = 0 is the scenario's own
 * seed), so seeds do not depend on the set of scenarios run. `--first K` starts at seed K: seeds the
 * CI gate (k < 16) never ran, to check a change on seeds it was not chosen on. Runs go to `--jobs` worker
 * processes (default: the number of CPUs); each run is a pure function of its seed, so the
 * figures do not depend on the job count. Exit code 1 if any gated run failed.
 */
import { fork } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { fmt } from './engine/criteria';
import { formatTable } from './report/table';
import { acceptanceScenarios } from './scenarios/index';
import { KNOWN_LIBRARY_FAILURES, SWEEP_SEEDS } from './known-failures';
import { isGated, positiveIntegerFlag, sweepSeed, type SweepRun } from './sweep-seeds';

interface Job {
  readonly scenario: string;
  readonly seed: number;
  readonly k: number;
}

function summarize(runs: readonly SweepRun[]): string {
  const byScenario = new Map<string, SweepRun[]>();
  for (const r of runs) {
    const list = byScenario.get(r.scenario) ?? [];
    list.push(r);
    byScenario.set(r.scenario, list);
  }
  const rows: string[][] = [];
  for (const [scenario, list] of byScenario) {
    const passed = list.filter((r) => r.passed).length;
    rows.push([scenario, '(all criteria)', `${passed}/${list.length}`, '', '', '', '']);
    const names = list[0]!.criteria.map((c) => c.name);
    for (const name of names) {
      const values: number[] = [];
      let pass = 0;
      let bound = '';
      for (const r of list) {
        const c = r.criteria.find((x) => x.name === name);
        if (c === undefined) continue;
        values.push(c.measured);
        if (c.pass) pass++;
        bound = c.criterion;
      }
      const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
      const median = sorted.length === 0 ? NaN : sorted[(sorted.length - 1) >> 1]!;
      const worstSeed = list.find((r) => r.criteria.some((c) => c.name === name && !c.pass))?.seedHex ?? '';
      rows.push([
        '',
        name,
        `${pass}/${values.length}`,
        fmt(sorted[0] ?? NaN),
        fmt(median),
        fmt(sorted[sorted.length - 1] ?? NaN),
        `${bound}${worstSeed ? `  (fails e.g. ${worstSeed})` : ''}`,
      ]);
    }
  }
  return formatTable(['scenario', 'criterion', 'pass', 'min', 'median', 'max', 'bound'], rows);
}

/**
 * The CI gate (`--gate`, .ci/run): over SWEEP_SEEDS seeds every gated scenario passes on every
 * seed, except the known library problems of known-failures.ts, which must pass on at least the
 * seeds recorded there (a ratchet: a regression fails CI; an improvement asks for a new record).
 * Returns the exit code.
 */
function gate(runs: readonly SweepRun[], seeds: number): number {
  if (seeds !== SWEEP_SEEDS) {
    console.log(`--gate needs --seeds ${SWEEP_SEEDS} (the seeds known-failures.ts records); got ${seeds}`);
    return 2;
  }
  const passes = new Map<string, number>();
  for (const r of runs) {
    if (!isGated(r.scenario)) continue;
    passes.set(r.scenario, (passes.get(r.scenario) ?? 0) + (r.passed ? 1 : 0));
  }
  let failures = 0;
  for (const [scenario, passed] of passes) {
    const known = KNOWN_LIBRARY_FAILURES[scenario];
    const required = known?.sweepPasses ?? seeds;
    const verdict = passed < required ? 'FAIL' : 'ok  ';
    if (passed < required) failures++;
    const note =
      known === undefined
        ? ''
        : passed > required
          ? ` (known problem; better than the recorded ${required}: raise sweepPasses in sim/known-failures.ts)`
          : ` (known problem, recorded ${required}: ${known.problem})`;
    console.log(`${verdict} ${scenario}: ${passed}/${seeds} seeds pass (criterion >= ${required})${note}`);
  }
  for (const name of Object.keys(KNOWN_LIBRARY_FAILURES)) {
    if (!passes.has(name)) {
      console.log(`FAIL known-failures.ts names ${name}, which the sweep did not run`);
      failures++;
    }
  }
  console.log(failures === 0 ? 'sweep gate: pass' : `sweep gate: ${failures} scenarios below their criterion`);
  return failures === 0 ? 0 : 1;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      seeds: { type: 'string', default: '16' },
      jobs: { type: 'string', default: String(availableParallelism()) },
      json: { type: 'string' },
      all: { type: 'boolean', default: false },
      gate: { type: 'boolean', default: false },
      first: { type: 'string', default: '0' },
    },
    allowPositionals: true,
  });
  const seeds = positiveIntegerFlag('seeds', values.seeds);
  const jobs = positiveIntegerFlag('jobs', values.jobs);
  const first = values.first === '0' ? 0 : positiveIntegerFlag('first', values.first);
  if (values.gate && first !== 0) {
    console.error('--gate runs the recorded seeds k = 0..15: it takes no --first');
    process.exit(2);
  }
  const all = acceptanceScenarios();
  const selected = (
    positionals.length === 0
      ? all
      : // A word that names a scenario exactly selects that one; any other selects every name containing it.
        all.filter((s) => positionals.some((w) => (all.some((x) => x.name === w) ? s.name === w : s.name.includes(w))))
  ).filter((s) => values.all || positionals.length > 0 || isGated(s.name));
  if (selected.length === 0) {
    console.error(`no scenario matches ${positionals.join(', ')}; scenarios: ${all.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const queue: Job[] = [];
  for (const s of selected)
    for (let k = first; k < first + seeds; k++) queue.push({ scenario: s.name, seed: sweepSeed(s.seed, k), k });
  const total = queue.length;
  const runs: SweepRun[] = [];
  const started = performance.now();
  const workerPath = fileURLToPath(new URL('./sweep-worker.ts', import.meta.url));
  await Promise.all(
    Array.from({ length: Math.min(jobs, total) }, async () => {
      // A larger young generation: the execute path allocates per call, and scavenges were ~35% of
      // a run's CPU with the default 16 MB semi-space (128 MB: ~30% less CPU per run).
      const child = fork(workerPath, [], {
        execArgv: ['--import', 'tsx', '--max-semi-space-size=128'],
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      });
      try {
        for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
          const run = await new Promise<SweepRun>((resolve, reject) => {
            const onExit = (code: number | null) =>
              reject(new Error(`sweep worker exited (${code}) running ${job.scenario}`));
            child.once('exit', onExit);
            child.once('message', (m) => {
              child.off('exit', onExit);
              resolve(m as SweepRun);
            });
            child.send(job);
          });
          runs.push(run);
          if (!run.passed && isGated(run.scenario)) {
            const failed = run.criteria
              .filter((c) => !c.pass)
              .map((c) => `${c.name}: ${fmt(c.measured)} (${c.criterion})`);
            console.log(`FAIL ${run.scenario} seed ${run.seedHex}: ${failed.join('; ')}`);
          }
          if (process.stderr.isTTY) process.stderr.write(`\r${runs.length}/${total} runs`);
        }
      } finally {
        child.disconnect();
      }
    }),
  );
  if (process.stderr.isTTY) process.stderr.write('\n');
  const order = new Map(selected.map((s, i) => [s.name, i]));
  runs.sort((a, b) => order.get(a.scenario)! - order.get(b.scenario)! || a.k - b.k);
  console.log(summarize(runs));
  console.log(`\n${total} runs in ${((performance.now() - started) / 1000).toFixed(1)} s with ${jobs} jobs`);
  if (values.json !== undefined) writeFileSync(values.json, `${JSON.stringify(runs, null, 1)}\n`);
  if (values.gate) {
    process.exitCode = gate(runs, seeds);
    return;
  }
  const failed = runs.filter((r) => !r.passed && isGated(r.scenario));
  if (failed.length > 0) {
    console.log(`${failed.length} gated runs failed`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
