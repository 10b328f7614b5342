import { limiterWithTuning, type Limiter, type LimiterOptions } from '../../src/limiter/limiter';
import { atLeast, atMost, holds, type Criterion } from '../engine/criteria';
import type { Phase, PhaseMetrics, Series } from '../engine/metrics';
import { formatSeed } from '../engine/random';
import { passed, type ScenarioResult } from '../engine/scenario';
import type { ClientOptions } from '../models/clients';
import { lognormal, type Distribution } from '../models/distributions';
import { PoissonArrivals } from '../models/load';
import type { World, WorldTools } from '../models/world';
import { simTuning } from '../tuning';

export type Algorithm = 'vegas' | 'gradient2' | 'aimd';

/**
 * The real limiter on the simulator's clock, with a seeded `random` (gradual rejection's coin),
 * and the control loop's tuning of this run (sim/tuning.ts: the shipped one unless the ablation
 * study changes it).
 */
export function simLimiter(tools: WorldTools, label: number, options: LimiterOptions): Limiter {
  return limiterWithTuning({ ...options, clock: tools.clock, random: tools.random(label) }, simTuning());
}

/**
 * The caller's deadline on the user path. Ours: the real-server tests' 2 s, about 100x the 20 ms
 * service time most scenarios use, so it bounds a queue wait without shaping the control loop.
 */
export const USER_DEADLINE_MS = 2_000;

/** A client on the path users take: `limiter.execute(fn, { timeoutMs })`, default queue. */
export function userClient(
  tools: WorldTools,
  label: number,
  options: LimiterOptions,
  extra: Partial<ClientOptions> = {},
): ClientOptions & { limiter: Limiter } {
  const l = simLimiter(tools, label, options);
  return { timeoutMs: USER_DEADLINE_MS, ...extra, executor: l, limiter: l };
}

/** A client on the low-level path: `tryAcquire()` / `permit.settle()`, no queue, a refusal is a shed. */
export function syncClient(
  tools: WorldTools,
  label: number,
  options: LimiterOptions,
): ClientOptions & { limiter: Limiter } {
  return { limiter: simLimiter(tools, label, options) };
}

/** Which admission path a scenario drives: `execute` (the user path, default) or `sync`. */
export type AdmissionPath = 'execute' | 'sync';

export function clientFor(
  path: AdmissionPath,
  tools: WorldTools,
  label: number,
  options: LimiterOptions,
): ClientOptions & { limiter: Limiter } {
  return path === 'execute' ? userClient(tools, label, options) : syncClient(tools, label, options);
}

/** The name suffix of a scenario's sync variant. */
export function pathSuffix(path: AdmissionPath): string {
  return path === 'execute' ? '' : '-sync';
}

/**
 * A service time of median `medianMs`, sigma 0.3 (p90 / p50 = 1.47: a healthy API's spread). The
 * scenarios choose the median by capacity so a run stays near a million simulated calls.
 */
export function serviceOf(medianMs: number): Distribution {
  return lognormal(medianMs, 0.3);
}

/**
 * The scenarios' service time at capacity C: median max(20 ms, 2 ms x C), so C / median stays at
 * most 500 calls per second served and a run stays near a few hundred thousand simulated calls
 * (through `execute`, ~10 us of CPU each). Windows still hold hundreds of samples.
 */
export function serviceFor(capacity: number): Distribution {
  return serviceOf(Math.max(20, 2 * capacity));
}

/** The no-load q-quantile of a service time, which latency criteria compare with. */
export function noLoadQuantile(service: Distribution, q: number): number {
  if (service.quantileMs === undefined) throw new Error(`sim: ${service.name} has no closed-form quantile`);
  return service.quantileMs(q);
}

/** Throughput of C servers at a service time, calls per second. */
export function throughputOf(capacity: number, service: Distribution): number {
  return (capacity / service.meanMs) * 1000;
}

/**
 * The physics criteria of an overloaded upstream (issue 14): its mean in-flight within 1.5x its
 * capacity C (a queue of at most half of C), the upstream latency of served calls within 2x its
 * no-load figure (p90 against p90), and goodput at least `goodputShare` of its throughput.
 */
export function physicsCriteria(
  p: PhaseMetrics,
  capacity: number,
  service: Distribution,
  goodputShare: number,
  prefix = '',
): Criterion[] {
  const noLoadP90 = noLoadQuantile(service, 0.9);
  return [
    atMost(`${prefix}upstream in-flight (mean) / capacity ${capacity}`, p.upstreamInflightMean / capacity, 1.5),
    atMost(`${prefix}upstream p90 latency / no-load p90 (${fmtMs(noLoadP90)})`, p.upstreamLatencyP90Ms / noLoadP90, 2),
    atLeast(`${prefix}goodput / upstream throughput`, p.goodputPerSec / throughputOf(capacity, service), goodputShare),
  ];
}

/** An overloaded single client's figures over a phase: where its limit sat against C, and the physics beside it. */
export function overloadFigures(p: PhaseMetrics, capacity: number, service: Distribution): Record<string, number> {
  return {
    limitMean: p.limitMean,
    limitOverCapacity: p.limitMean / capacity,
    upstreamInflightMean: p.upstreamInflightMean,
    goodputShare: p.goodputPerSec / throughputOf(capacity, service),
    shedRate: p.shedRate,
    ...latencyFigures(p, service),
  };
}

/** Caller latency (queue wait included) beside upstream latency, for a scenario's figures (issue 20). */
export function latencyFigures(p: PhaseMetrics, service: Distribution): Record<string, number> {
  const noLoadP90 = noLoadQuantile(service, 0.9);
  return {
    callerP90Ms: p.latencyP90Ms,
    callerP99Ms: p.latencyP99Ms,
    upstreamP90Ms: p.upstreamLatencyP90Ms,
    upstreamP99Ms: p.upstreamLatencyP99Ms,
    noLoadP90Ms: noLoadP90,
    callerP90OverNoLoad: p.latencyP90Ms / noLoadP90,
    upstreamP90OverNoLoad: p.upstreamLatencyP90Ms / noLoadP90,
  };
}

function fmtMs(ms: number): string {
  return `${ms.toFixed(1)} ms`;
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

/** Runs `world` under open-loop Poisson arrivals at `perSecond` from t = 0 to its end, on its clients. */
export async function runUnderPoisson(world: World, perSecond: number): Promise<void> {
  new PoissonArrivals(
    world.simulator,
    world.loadRandom(0),
    world.clients,
    0,
    [{ atMs: 0, perSecond }],
    world.endMs,
  ).start();
  await world.run();
}
