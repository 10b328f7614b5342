/**
 * `npm run sim:ablation -- [--seeds 2] [--jobs 2] [--gated] [--out docs/ablation.md] [--dir runs/] [variant names...]`:
 * the ablation study of the control loop (adr/0045). Each variant turns one mechanism of the
 * shipped tuning (src/limiter/control-tuning.ts) off, or moves one of its main constants to half
 * or twice its value; every variant runs the same scenarios on the same seeds as the shipped tuning, through
 * `npm run sim:sweep` with `SIM_TUNING` set (sim/tuning.ts). A mechanism earns its place when
 * turning it off fails runs the shipped tuning passes.
 *
 * `--gated` runs every gated scenario (the CI sweep's set) instead of the 14 of ABLATION_SCENARIOS.
 *
 * Prints a table (and writes it to `--out`): per variant, the gated runs passed, the difference
 * from the shipped tuning, the scenarios it loses and gains, and its runs identical to the shipped
 * tuning's (every criterion's measure and every figure equal).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_TUNING, type ControlTuning } from '../src/limiter/control-tuning';
import { positiveIntegerFlag, type SweepRun } from './sweep-seeds';

interface Variant {
  readonly name: string;
  /** The mechanism or constant, and what the variant does to it. */
  readonly what: string;
  readonly tuning: Partial<ControlTuning>;
}

/** One scenario per behaviour the loop must get right; each runs the default path (vegas, execute). */
export const ABLATION_SCENARIOS = [
  'cold-start-c6-vegas',
  'cold-start-c100-vegas',
  'convergence-c10-vegas',
  'convergence-c50-vegas',
  'capacity-halves-vegas',
  'latency-cliff-vegas',
  'baseline-shift-vegas',
  'demand-step-c20-vegas',
  'many-clients-n10-s2-vegas',
  'machine-noise-vegas',
  'explicit-overload-k4-vegas',
  'production-slowdown',
  'streaming-mark',
  'tail-timeouts',
  'random-refusals',
] as const;

const half = (key: keyof ControlTuning): Variant => ({
  name: `${key} x0.5`,
  what: `${key} ${String(DEFAULT_TUNING[key])} -> ${Number(DEFAULT_TUNING[key]) / 2}`,
  tuning: { [key]: Number(DEFAULT_TUNING[key]) / 2 },
});
const double = (key: keyof ControlTuning): Variant => ({
  name: `${key} x2`,
  what: `${key} ${String(DEFAULT_TUNING[key])} -> ${Number(DEFAULT_TUNING[key]) * 2}`,
  tuning: { [key]: Number(DEFAULT_TUNING[key]) * 2 },
});
const off = (name: string, what: string, tuning: Partial<ControlTuning>): Variant => ({ name, what, tuning });

/** The variants: every mechanism off, and the main constants halved or doubled. */
export const VARIANTS: readonly Variant[] = [
  off('shipped', 'the shipped tuning (reference)', {}),
  off('no slow start', 'startupGain 0: start in congestion avoidance at initialLimit', { startupGain: 0 }),
  off(
    'no noise bound',
    'startupNoiseZ 0: the slow-start exit tests the 1/8 threshold only (and every re-measure takes baselineSamples, adr/0122)',
    { startupNoiseZ: 0 },
  ),
  double('startupThreshold'),
  off('no confirmation', 'confirmRounds 0: the first risen round ends the slow start', { confirmRounds: 0 }),
  off('no idle exit', 'startupIdleRounds 0: an app-limited slow start never ends on its own', { startupIdleRounds: 0 }),
  off('no drain', 'drainOnExit false: keep the limit the slow start reached', { drainOnExit: false }),
  off('full drain', 'drainGain 1: drain to the served concurrency, no margin to empty the queue', { drainGain: 1 }),
  half('drainGain'),
  half('baselineSamples'),
  double('baselineSamples'),
  off('fixed re-measure', 'remeasureForLimit false: every re-measure takes baselineSamples, whatever the concurrency', {
    remeasureForLimit: false,
  }),
  off(
    'short first baseline',
    'firstBaselineSamples 400 -> 100: the first baseline window as short as a re-measure (it also caps the re-measure, adr/0122)',
    {
      firstBaselineSamples: 100,
    },
  ),
  off('no proportional cut', 'excessQueueGain 0: shrink by one step past beta', { excessQueueGain: 0 }),
  off('no no-queue jump', 'noQueueJump false: grow by one step with no queue at all', { noQueueJump: false }),
  off(
    'no-queue growth per window',
    'noQueueGrowthPerFloor false: beta per window, however long it waited for samples',
    {
      noQueueGrowthPerFloor: false,
    },
  ),
  off('no stale-baseline raise', 'raiseWindows 1e9: a baseline that keeps shrinking the limit is never raised', {
    raiseWindows: 1e9,
  }),
  off('no jump restart', 'jumpRestart false: a 2x latency jump at a steady limit is steered, not re-measured', {
    jumpRestart: false,
  }),
  off('no fall restart', 'fallRestart false: a window under the baseline lowers it only through the smoothed latency', {
    fallRestart: false,
  }),
  off('halving fall', "fallBand false: vegas's fall re-measures at half the baseline (adr/0130), not by its band", {
    fallBand: false,
  }),
  off('no mature reference', 'matureReference false: a rise is tested against a reference of any size', {
    matureReference: false,
  }),
  off('no cohort confirmation', 'cohortConfirm false: a confirmed rise ends the slow start, whatever its cohort', {
    cohortConfirm: false,
  }),
  off('no overload hold', 'overloadHoldMs 0: grow again right after an overload cut', { overloadHoldMs: 0 }),
  off('no overload early close', 'overloadCloseShare 1: an overload window waits for its floor', {
    overloadCloseShare: 1,
  }),
  off('no noise margin', 'noiseZ 0: every rise over the baseline counts as queue', { noiseZ: 0 }),
  double('noiseZ'),
  off("Netflix's step", 'stepCap 0: step log10 L floored at 1, also at small limits', { stepCap: 0 }),
  half('alphaScale'),
  double('alphaScale'),
  off('no dither', 'dither false: admit the integer part of the estimate', { dither: false }),
  off('no timeout tail', 'timeoutTail false: every timeout is a reduce signal', { timeoutTail: false }),
  off('no no-load rise test', "noLoadRiseTest false: every clean cohort joins the slow start's no-load mean", {
    noLoadRiseTest: false,
  }),
  off('dither while measuring', "measureWholeCalls false: a slow start's drain and its baseline window dither too", {
    measureWholeCalls: false,
  }),
  off('no refusal tail', 'refusalTail false: every refusal is a reduce signal', { refusalTail: false }),
  off('no refusal round trip', 'refusalRoundTrip false: a refusal ends a round at once', { refusalRoundTrip: false }),
  off('no refusal step-down', 'refusalStepDown false: a refusal past every answer acts at its window', {
    refusalStepDown: false,
  }),
  off('no return after a jump', "jumpReturn false: after a jump's re-measure vegas and gradient2 grow from the drain", {
    jumpReturn: false,
  }),
  off('fall returns by rate', "fallReturn false: a fall's return is its window's rate x the new latency, as a jump's", {
    fallReturn: false,
  }),
  off('no return after a later slow start', "startReturn false: vegas's later slow starts grow from the drain", {
    startReturn: false,
  }),
  off('no probe at the tested limit', "probeTested false: a window adr/0139's rule flags keeps its own mean", {
    probeTested: false,
  }),
  off('no app-limited guard', 'appLimitedFactor 1e9: grow whatever the demand', { appLimitedFactor: 1e9 }),
  // The "ours" constants with no half or double row above (docs/ablation.md, fourteenth session).
  ...(['raiseRatio', 'raiseElasticity', 'startupIdleRounds', 'overloadHoldMs', 'excessQueueGain'] as const).flatMap(
    (key) => [half(key), double(key)],
  ),
  ...(['alphaPower', 'firstBaselineSamples'] as const).flatMap((key) => [half(key), double(key)]),
  half('overloadCloseShare'),
  half('noiseZ'),
  ...(['spreadPrior', 'tailWeight', 'tailCap', 'overloadCloseMinAnswers', 'pressureSaturation'] as const).flatMap(
    (key) => [half(key), double(key)],
  ),
  ...(['minBaselineMs', 'failureGrowthVeto', 'startupNoiseZ'] as const).flatMap((key) => [half(key), double(key)]),
  // adr/0120: doubled, the share is over 1, which is the row below.
  half('raiseInflightShare'),
  off(
    'no in-flight condition',
    'raiseInflightShare 1: the stale raise above the floor needs no fall of our in-flight',
    {
      raiseInflightShare: 1,
    },
  ),
];

/** What a study's runs depend on besides the code: a cached variant is reused only if all of it matches. */
interface Study {
  readonly seeds: number;
  readonly gated: boolean;
}

/** A variant's runs in `--dir`, named by the variant and the study (a study re-run with other variant names never reads another's). */
function variantFile(dir: string, name: string, study: Study): string {
  const slug = name.toLowerCase().replace(/[^a-z0-9.]+/g, '-');
  return join(dir, `${slug}${study.gated ? '.gated' : ''}.s${study.seeds}.json`);
}

/**
 * --dir: the runs of a variant already there (an interrupted study) are reused, if they were made with
 * the same tuning (recorded beside them: a constant's shipped value may have moved since) over the
 * same seeds. Checked for every chosen variant before any runs, so a stale file fails the study at once.
 */
function cachedRuns(variant: Variant, out: string, study: Study): SweepRun[] | undefined {
  if (!existsSync(out)) return undefined;
  const tuningFile = `${out}.tuning`;
  const tuning = existsSync(tuningFile) ? readFileSync(tuningFile, 'utf8') : '(none recorded)';
  if (tuning !== JSON.stringify(variant.tuning)) {
    throw new Error(
      `ablation: ${out} was run with tuning ${tuning}, not ${JSON.stringify(variant.tuning)}: use another --dir`,
    );
  }
  let runs: SweepRun[];
  try {
    runs = JSON.parse(readFileSync(out, 'utf8')) as SweepRun[];
  } catch (error) {
    throw new Error(`ablation: ${out} is not a sweep's JSON (${String(error)}): delete it`);
  }
  const ks = new Set(runs.map((r) => r.k));
  if (ks.size !== study.seeds || runs.some((r) => r.k >= study.seeds)) {
    throw new Error(`ablation: ${out} holds runs of seeds k = ${[...ks].join(', ')}, not 0..${study.seeds - 1}`);
  }
  return runs;
}

/**
 * The shipped tuning and the variants named, in VARIANTS order; all of them when none is named. A
 * name that is no variant's is an error: silently dropped, a misspelt row would be missing from the table.
 */
export function chooseVariants(names: readonly string[]): readonly Variant[] {
  if (names.length === 0) return VARIANTS;
  const unknown = names.filter((name) => !VARIANTS.some((v) => v.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `ablation: no variant is named ${unknown.map((n) => `"${n}"`).join(', ')}; the variants: ${VARIANTS.map((v) => v.name).join(', ')}`,
    );
  }
  return VARIANTS.filter((v) => v.name === 'shipped' || names.includes(v.name));
}

function runVariant(variant: Variant, jobs: number, dir: string, study: Study): SweepRun[] {
  const out = variantFile(dir, variant.name, study);
  // No scenario words: the sweep runs every gated scenario.
  const scenarios: readonly string[] = study.gated ? [] : ABLATION_SCENARIOS;
  try {
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        'sim/sweep.ts',
        '--seeds',
        String(study.seeds),
        '--jobs',
        String(jobs),
        '--json',
        out,
        ...scenarios,
      ],
      { env: { ...process.env, SIM_TUNING: JSON.stringify(variant.tuning) }, stdio: ['ignore', 'ignore', 'inherit'] },
    );
  } catch (error) {
    // The sweep exits 1 when a run fails: that is data here. Anything else is not.
    if ((error as { status?: number }).status !== 1) throw error;
  }
  writeFileSync(`${out}.tuning`, JSON.stringify(variant.tuning));
  return JSON.parse(readFileSync(out, 'utf8')) as SweepRun[];
}

const END_OF_TABLE = '<!-- end of the generated table: what follows is kept -->';

function passedBy(runs: readonly SweepRun[]): Map<string, number> {
  const byScenario = new Map<string, number>();
  for (const r of runs) byScenario.set(r.scenario, (byScenario.get(r.scenario) ?? 0) + (r.passed ? 1 : 0));
  return byScenario;
}

/** The runs of `runs` whose every criterion and figure equals the reference run of the same scenario and seed. */
export function identicalRuns(reference: readonly SweepRun[], runs: readonly SweepRun[]): number {
  const measured = (r: SweepRun): string => JSON.stringify([r.criteria, r.figures]);
  const byRun = new Map(reference.map((r) => [`${r.scenario} ${r.k}`, measured(r)]));
  return runs.filter((r) => byRun.get(`${r.scenario} ${r.k}`) === measured(r)).length;
}

function main(): void {
  const { values, positionals } = parseArgs({
    options: {
      seeds: { type: 'string', default: '2' },
      jobs: { type: 'string', default: '2' },
      out: { type: 'string' },
      dir: { type: 'string' },
      gated: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const seeds = positiveIntegerFlag('seeds', values.seeds);
  const jobs = positiveIntegerFlag('jobs', values.jobs);
  const chosen = chooseVariants(positionals);
  const dir = values.dir ?? mkdtempSync(join(tmpdir(), 'resilix-ablation-'));
  mkdirSync(dir, { recursive: true });
  const study: Study = { seeds, gated: values.gated };
  const byFile = new Map<string, string>();
  for (const { name } of VARIANTS) {
    const file = variantFile(dir, name, study);
    const other = byFile.get(file);
    if (other !== undefined) throw new Error(`ablation: "${other}" and "${name}" make one file name in --dir`);
    byFile.set(file, name);
  }
  // Every cached file is checked before any variant runs (read once, kept).
  const cached = chosen.map((variant) => cachedRuns(variant, variantFile(dir, variant.name, study), study));
  const results = chosen.map((variant, i) => {
    const started = Date.now();
    const runs = cached[i] ?? runVariant(variant, jobs, dir, study);
    console.error(
      `${variant.name}: ${runs.filter((r) => r.passed).length}/${runs.length} (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
    return { variant, runs };
  });
  const reference = passedBy(results[0]!.runs);
  const total = results[0]!.runs.length;
  const referencePassed = results[0]!.runs.filter((r) => r.passed).length;
  const lines = [
    `Ablation of the control loop: ${values.gated ? 'every gated scenario' : `${ABLATION_SCENARIOS.length} scenarios`} x ${seeds} seeds (sweep seeds k = 0..${seeds - 1}).`,
    `Reproduce: \`npm run sim:ablation -- --seeds ${seeds}${values.gated ? ' --gated' : ''}\`. "lost" / "gained": scenarios with fewer / more passing seeds than the shipped tuning (passes shipped -> variant). "identical": runs whose every criterion and figure equals the shipped run's.`,
    '',
    '| variant | what it changes | runs passed | vs shipped | lost | gained | identical |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const { variant, runs } of results) {
    const mine = passedBy(runs);
    const passed = runs.filter((r) => r.passed).length;
    const lost: string[] = [];
    const gained: string[] = [];
    for (const [scenario, n] of reference) {
      const m = mine.get(scenario) ?? 0;
      if (m < n) lost.push(`${scenario} ${n}->${m}`);
      if (m > n) gained.push(`${scenario} ${n}->${m}`);
    }
    const delta = passed - referencePassed;
    lines.push(
      `| ${variant.name} | ${variant.what} | ${passed}/${total} | ${delta > 0 ? '+' : ''}${delta} | ${lost.join(', ')} | ${gained.join(', ')} | ${identicalRuns(results[0]!.runs, runs)} |`,
    );
  }
  const table = `${lines.join('\n')}\n`;
  console.log(table);
  if (values.out !== undefined) {
    // The reading below the marker is prose, kept as written.
    const old = existsSync(values.out) ? readFileSync(values.out, 'utf8') : '';
    const at = old.indexOf(END_OF_TABLE);
    writeFileSync(values.out, `# The ablation study\n\n${table}\n${at >= 0 ? old.slice(at) : `${END_OF_TABLE}\n`}`);
  }
}

// Run as a command, not when a test imports the helpers above.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
