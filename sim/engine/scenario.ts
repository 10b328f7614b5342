import type { Criterion } from './criteria';
import { fmt } from './criteria';
import type { PhaseMetrics, Series } from './metrics';
import { formatSeed } from './random';

/** What one run of a scenario produced: its figures, its verdicts, and the series to plot. */
export interface ScenarioResult {
  readonly name: string;
  readonly title: string;
  readonly seed: string;
  /** The limiter algorithm under test, when the scenario is about one. */
  readonly algorithm: string | undefined;
  readonly criteria: readonly Criterion[];
  /** Headline numbers beyond the criteria (times, ratios), for the table and the docs. */
  readonly figures: Readonly<Record<string, number>>;
  readonly phases: readonly PhaseMetrics[];
  readonly series: Series;
  /** Calls offered (attempts), events fired, virtual time covered. */
  readonly calls: number;
  readonly events: number;
  readonly simulatedMs: number;
  readonly passed: boolean;
  /** Other runs of the same seed the criteria compare against (the fixed limit, the unmarked stream). */
  readonly comparisons: readonly ComparisonRun[];
}

export interface ComparisonRun {
  readonly label: string;
  readonly phases: readonly PhaseMetrics[];
  readonly series: Series;
}

/**
 * A scenario is a seed, a model, a schedule and numeric criteria (STYLE.md: the simulator reads
 * like TigerBeetle's). `run(seed)` is a pure function of the seed: same seed, same result, byte
 * for byte.
 */
export interface Scenario {
  /** Stable id, used on the command line and in file names ("convergence-c50-vegas"). */
  readonly name: string;
  readonly title: string;
  /** The issue's scenario number (1..10), for grouping in the report. */
  readonly group: number;
  /** The seed the acceptance suite runs. */
  readonly seed: number;
  run(seed: number): Promise<ScenarioResult>;
}

export function passed(criteria: readonly Criterion[]): boolean {
  return criteria.every((c) => c.pass);
}

/** How a failing scenario reports itself: name, seed, the failed criteria, and how to replay. */
export function describeFailure(result: ScenarioResult): string {
  const failed = result.criteria.filter((c) => !c.pass);
  const lines = [
    `scenario ${result.name} FAILED with seed ${result.seed}`,
    ...failed.map(
      (c) => `  ${c.name}: measured ${fmt(c.measured)}${c.unit ? ` ${c.unit}` : ''}, criterion ${c.criterion}`,
    ),
    `  replay: npx tsx sim/run.ts ${result.name} --seed ${result.seed}`,
  ];
  return lines.join('\n');
}

/** One line per criterion, measured value beside the criterion. */
export function describeCriteria(result: ScenarioResult): string {
  return result.criteria
    .map(
      (c) =>
        `  ${c.pass ? 'ok  ' : 'FAIL'} ${c.name}: ${fmt(c.measured)}${c.unit ? ` ${c.unit}` : ''} (criterion ${c.criterion})`,
    )
    .join('\n');
}

export { formatSeed };
