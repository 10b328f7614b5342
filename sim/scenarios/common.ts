import { limiter, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import { holds, type Criterion } from '../engine/criteria';
import type { Phase, PhaseMetrics, Series } from '../engine/metrics';
import { formatSeed } from '../engine/random';
import { passed, type ScenarioResult } from '../engine/scenario';
import type { World, WorldTools } from '../models/world';

export type Algorithm = 'vegas' | 'gradient2' | 'aimd';
export const ALGORITHMS: readonly Algorithm[] = ['vegas', 'gradient2', 'aimd'];

/** The real limiter on the simulator's clock, with a seeded `random` (gradual rejection's coin). */
export function simLimiter(tools: WorldTools, label: number, options: LimiterOptions): Limiter {
  return limiter({ ...options, clock: tools.clock, random: tools.random(label) });
}

/** Contiguous phases from named durations in seconds. */
export function phasesOf(...durations: readonly (readonly [name: string, seconds: number])[]): Phase[] {
  const phases: Phase[] = [];
  let at = 0;
  for (const [name, seconds] of durations) {
    phases.push({ name, startMs: at, endMs: at + seconds * 1000 });
    at += seconds * 1000;
  }
  return phases;
}

export function phase(phases: readonly PhaseMetrics[], name: string): PhaseMetrics {
  const found = phases.find((p) => p.name === name);
  if (found === undefined) throw new Error(`sim: no phase named ${name}`);
  return found;
}

/** Indices of the series samples with fromMs < t <= toMs. */
function range(series: Series, fromMs: number, toMs: number): [number, number] {
  let start = 0;
  while (start < series.tMs.length && series.tMs[start]! <= fromMs) start++;
  let end = start;
  while (end < series.tMs.length && series.tMs[end]! <= toMs) end++;
  return [start, end];
}

/** Summary of a series measure over (fromMs, toMs]: mean, min, max, last. */
export function stats(
  values: readonly number[],
  series: Series,
  fromMs: number,
  toMs: number,
): { mean: number; min: number; max: number; last: number } {
  const [start, end] = range(series, fromMs, toMs);
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  let count = 0;
  for (let i = start; i < end; i++) {
    const v = values[i]!;
    if (!Number.isFinite(v)) continue;
    sum += v;
    count++;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { mean: count === 0 ? NaN : sum / count, min, max, last: end > start ? values[end - 1]! : NaN };
}

/**
 * Time from `fromMs` until the measure entered [low, high] for good (stayed inside until `toMs`),
 * in ms; NaN if it never settled there.
 */
export function settleTime(
  values: readonly number[],
  series: Series,
  fromMs: number,
  toMs: number,
  low: number,
  high: number,
): number {
  const [start, end] = range(series, fromMs, toMs);
  let lastOutside = -1;
  for (let i = start; i < end; i++) {
    const v = values[i]!;
    if (!(v >= low && v <= high)) lastOutside = i;
  }
  if (lastOutside === end - 1) return NaN;
  // Settled at the first sample after the last excursion (or at the phase's first sample).
  const settledAt = lastOutside < start ? series.tMs[start]! : series.tMs[lastOutside + 1]!;
  return settledAt - fromMs;
}

/** The first time at or after `fromMs` when the measure satisfied `test`, in ms after `fromMs`; NaN if never. */
export function firstTime(
  values: readonly number[],
  series: Series,
  fromMs: number,
  toMs: number,
  test: (v: number) => boolean,
): number {
  const [start, end] = range(series, fromMs, toMs);
  for (let i = start; i < end; i++) if (test(values[i]!)) return series.tMs[i]! - fromMs;
  return NaN;
}

/**
 * Checks every scenario makes of the library, whatever it is about: no permit leaked or was
 * double-counted (each limiter's in-flight equals the calls its client holds), and every sampled
 * limit stayed within the limiter's guardrails.
 */
export function invariants(world: World, prefix = ''): Criterion[] {
  const out: Criterion[] = [];
  let leaks = 0;
  let outside = 0;
  world.clients.clientOptions.forEach((options, client) => {
    const limiter = options.limiter as Limiter | undefined;
    if (limiter === undefined || typeof limiter.snapshot !== 'function') return;
    if (limiter.inflight !== world.clients.inflightOf(client)) leaks++;
    const { minLimit, maxLimit } = limiter.snapshot();
    const series = world.recorder.series;
    const values = series.limitByClient.length > 0 ? series.limitByClient.map((row) => row[client]!) : series.limit;
    for (const v of values) if (!(v >= minLimit && v <= maxLimit)) outside++;
  });
  out.push(holds(`${prefix}limiter in-flight equals the calls its client holds (no permit leaked)`, leaks === 0));
  out.push(holds(`${prefix}limit stayed within [minLimit, maxLimit] at every sample`, outside === 0));
  return out;
}

/** Assembles a ScenarioResult from a finished world. */
export function resultOf(
  world: World,
  scenario: { name: string; title: string; algorithm?: string },
  seed: number,
  criteria: Criterion[],
  figures: Record<string, number>,
  comparisons: { label: string; world: World }[] = [],
): ScenarioResult {
  const phases = world.recorder.summarize();
  criteria = [...criteria, ...invariants(world), ...comparisons.flatMap((c) => invariants(c.world, `${c.label}: `))];
  return {
    name: scenario.name,
    title: scenario.title,
    seed: formatSeed(seed),
    algorithm: scenario.algorithm,
    criteria,
    figures,
    phases,
    series: world.recorder.series,
    calls: phases.reduce((sum, p) => sum + p.arrivals, 0),
    events: world.simulator.eventsFired,
    simulatedMs: world.endMs,
    passed: passed(criteria),
    comparisons: comparisons.map((c) => ({
      label: c.label,
      phases: c.world.recorder.summarize(),
      series: c.world.recorder.series,
    })),
  };
}
