/**
 * `npm run sim`: runs the acceptance scenarios on virtual time, prints a progress line per
 * scenario, the criteria table and the algorithm matrix, writes docs/sim/results.json, renders the
 * plots into docs/sim/*.svg and refreshes the result blocks of docs/simulation.md.
 *
 *   npx tsx sim/run.ts                       everything (what CI's docs show)
 *   npx tsx sim/run.ts cliff secret          scenarios whose name contains a word
 *   npx tsx sim/run.ts low-traffic --seed 0x5eed0042   replay one scenario with another seed
 *   npx tsx sim/run.ts streaming --trace 10000         print the limiter's snapshot every 10 s
 *
 * Wall-clock time is read here, and only here, to report the simulator's speed; the engine and
 * the models never read it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { fmt } from './engine/criteria';
import { parseSeed } from './engine/random';
import { describeFailure, type ScenarioResult } from './engine/scenario';
import { World } from './models/world';
import { figures } from './report/figures';
import { matrixMarkdown, matrixTable } from './report/matrix';
import { renderSvg } from './report/plots';
import { criteriaMarkdown, criteriaTable } from './report/table';
import { KNOWN_LIBRARY_FAILURES, SWEEP_SEEDS } from './known-failures';
import { acceptanceScenarios, matrixKey } from './scenarios/index';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const docsDir = join(root, 'docs', 'sim');
const reportsDir = join(root, 'reports', 'sim');

interface Args {
  filters: string[];
  seed: number | undefined;
  traceMs: number | undefined;
  plots: boolean;
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { filters: [], seed: undefined, traceMs: undefined, plots: true };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--seed') args.seed = parseSeed(argv[++i] ?? '');
    else if (a === '--trace') args.traceMs = Number(argv[++i]);
    else if (a === '--no-plots') args.plots = false;
    else args.filters.push(a);
  }
  return args;
}

/** --trace: steps the world and prints each limiter's snapshot (a debugging aid, not a report). */
function installTrace(everyMs: number): void {
  World.prototype.run = async function traced(this: World): Promise<void> {
    const usesPromises = this.clients.clientOptions.some((c) => c.executor !== undefined);
    for (let t = everyMs; t <= this.endMs; t += everyMs) {
      if (usesPromises) await this.simulator.runAsync(t);
      else this.simulator.run(t);
      const limiter = this.clients.clientOptions[0]?.limiter as
        | { snapshot?: () => Record<string, unknown> }
        | undefined;
      const s = limiter?.snapshot?.() ?? {};
      const change = s.lastChange as { reason?: string } | undefined;
      console.log(
        `  t=${fmt(t / 1000)}s limit=${String(s.limit)} estimate=${fmt(s.estimate as number)} baseline=${fmt(s.baselineMs as number)} ` +
          `latency=${fmt(s.latencyMs as number)} windows=${String(s.windows)} last=${change?.reason ?? '-'} ` +
          `inflight=${this.clients.inflight} queued=${String(s.queued ?? 0)} upstream=${this.upstream.inflight}/${this.upstream.capacity}`,
      );
    }
  };
}

/**
 * Replaces the block between `<!-- sim:KIND NAME -->` and the next `<!-- /sim:KIND -->` in a
 * markdown file (KEY is "KIND" or "KIND NAME").
 */
function replaceBlock(text: string, key: string, body: string): string {
  const open = `<!-- sim:${key} -->`;
  const close = `<!-- /sim:${key.split(' ')[0]} -->`;
  const start = text.indexOf(open);
  const end = start < 0 ? -1 : text.indexOf(close, start);
  if (start < 0 || end < start) return text;
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

/** What goes into docs/sim/results.json: everything but the time series (those go to reports/). */
function summary(result: ScenarioResult): object {
  return {
    name: result.name,
    title: result.title,
    seed: result.seed,
    algorithm: result.algorithm,
    passed: result.passed,
    criteria: result.criteria,
    figures: result.figures,
    phases: result.phases,
    comparisons: result.comparisons.map((c) => ({ label: c.label, phases: c.phases })),
    calls: result.calls,
    events: result.events,
    simulatedMs: result.simulatedMs,
  };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.traceMs !== undefined) installTrace(args.traceMs);
  const all = acceptanceScenarios();
  const selected = args.filters.length === 0 ? all : all.filter((s) => args.filters.some((f) => s.name.includes(f)));
  if (selected.length === 0) {
    console.error(`no scenario matches ${args.filters.join(', ')}; scenarios: ${all.map((s) => s.name).join(', ')}`);
    process.exit(2);
  }
  const fullSuite = selected.length === all.length && args.seed === undefined;
  const results: ScenarioResult[] = [];
  let totalCalls = 0;
  let totalMs = 0;
  let totalCpuMs = 0;
  const speed: { name: string; calls: number; wallMs: number; cpuMs: number }[] = [];
  const width = String(selected.length).length;
  for (const [index, scenario] of selected.entries()) {
    const seed = args.seed ?? scenario.seed;
    const started = performance.now();
    const cpuStarted = process.cpuUsage();
    const result = await scenario.run(seed);
    const wallMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuStarted);
    // CPU time as well as wall time: on a shared machine the wall clock measures the neighbours.
    const cpuMs = (cpu.user + cpu.system) / 1000;
    results.push(result);
    totalCalls += result.calls;
    totalMs += wallMs;
    totalCpuMs += cpuMs;
    speed.push({ name: result.name, calls: result.calls, wallMs, cpuMs });
    const failed = result.criteria.filter((c) => !c.pass).length;
    console.log(
      `[${String(index + 1).padStart(width)}/${selected.length}] ${result.name.padEnd(28)} seed ${result.seed}  ` +
        `${(result.calls / 1e6).toFixed(2).padStart(5)}M calls  ${(wallMs / 1000).toFixed(2).padStart(5)} s  ` +
        `${(((result.calls / cpuMs) * 1000) / 1e6).toFixed(2)}M calls/cpu-s  ${failed === 0 ? 'pass' : `FAIL (${failed}/${result.criteria.length})`}`,
    );
  }

  console.log(`\n${criteriaTable(results)}`);
  if (results.some((r) => r.name.endsWith('-gradient2') || r.name.endsWith('-aimd'))) {
    console.log(`\nScenario 10: scenarios 1, 2, 6 and 8 for each algorithm\n${matrixTable(results)}`);
  }
  const speedLine =
    `${(totalCalls / 1e6).toFixed(2)}M simulated calls in ${(totalCpuMs / 1000).toFixed(1)} s of CPU ` +
    `(${(totalMs / 1000).toFixed(1)} s wall): ${(((totalCalls / totalCpuMs) * 1000) / 1e6).toFixed(2)}M calls per CPU-second overall`;
  console.log(`\n${speedLine}`);

  mkdirSync(reportsDir, { recursive: true });
  writeFileSync(join(reportsDir, 'results-full.json'), `${JSON.stringify(results)}\n`);
  writeFileSync(
    join(reportsDir, 'speed.json'),
    `${JSON.stringify({ totalCalls, totalMs, totalCpuMs, speed }, null, 2)}\n`,
  );
  if (fullSuite) {
    mkdirSync(docsDir, { recursive: true });
    writeFileSync(join(docsDir, 'results.json'), `${JSON.stringify(results.map(summary), null, 2)}\n`);
    if (args.plots) {
      for (const figure of figures(results)) {
        writeFileSync(join(docsDir, figure.file), await renderSvg(figure.spec));
        console.log(`wrote docs/sim/${figure.file}`);
      }
    }
    const docPath = join(root, 'docs', 'simulation.md');
    let doc = readFileSync(docPath, 'utf8');
    for (const r of results) doc = replaceBlock(doc, `results ${r.name}`, criteriaMarkdown(r));
    doc = replaceBlock(doc, 'matrix', matrixMarkdown(results));
    doc = replaceBlock(doc, 'speed', `${speedLine} (${process.arch}, Node ${process.version}).`);
    doc = replaceBlock(
      doc,
      'known',
      Object.entries(KNOWN_LIBRARY_FAILURES)
        .map(
          ([name, k]) =>
            `- **${name}** (passes ${k.sweepPasses}/${SWEEP_SEEDS} sweep seeds): ${k.problem}. ${k.measured}`,
        )
        .join('\n'),
    );
    writeFileSync(docPath, doc);
    console.log('wrote docs/sim/results.json and refreshed docs/simulation.md');
  }
  // The exit code follows the CI gate (adr/0052): gated scenarios must pass unless listed in
  // known-failures.ts (whose pass counts over 16 seeds `npm run sim:sweep -- --gate` checks);
  // listed ones and the matrix's gradient2 and aimd runs must keep the invariants.
  const gated = (r: ScenarioResult): boolean => (matrixKey(r.name)?.algorithm ?? 'vegas') === 'vegas';
  const invariantBroken = (r: ScenarioResult): boolean =>
    r.criteria.some((c) => !c.pass && /no permit leaked|within \[minLimit, maxLimit\]/.test(c.name));
  const unexpected = results.filter((r) =>
    gated(r) && KNOWN_LIBRARY_FAILURES[r.name] === undefined ? !r.passed : invariantBroken(r),
  );
  const known = results.filter((r) => gated(r) && !r.passed && KNOWN_LIBRARY_FAILURES[r.name] !== undefined);
  if (known.length > 0)
    console.log(`\nknown library problems (sim/known-failures.ts): ${known.map((r) => r.name).join(', ')}`);
  if (unexpected.length > 0) {
    console.log(`\n${unexpected.map((r) => describeFailure(r)).join('\n')}`);
    process.exitCode = 1;
  }
}

await main();
