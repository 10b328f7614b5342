/**
 * The arithmetic of `npm run e2e:real` (scripts/e2e-real.ts), kept apart from the servers and the
 * sockets so test/e2e-real/metrics.test.ts can pin every definition with exact numbers: the
 * quantile, the knee of a fixed-cap sweep, "re-converged", and the figures of one run.
 *
 * Nothing here reads a clock; times are ms since the start of a run.
 */

/** Nearest-rank quantile of an ascending array: the smallest value with at least q of the data at or below it. */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil(q * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function ascending(values: readonly number[]): number[] {
  return [...values].sort((a, b) => a - b);
}

export interface Quantiles {
  readonly p50: number;
  readonly p90: number;
  readonly p99: number;
}

export function quantiles(values: readonly number[]): Quantiles {
  const sorted = ascending(values);
  return { p50: quantile(sorted, 0.5), p90: quantile(sorted, 0.9), p99: quantile(sorted, 0.99) };
}

/** One fixed cap of a sweep: the cap and the goodput (successful calls per second) it reached. */
export interface CapPoint {
  readonly cap: number;
  readonly goodput: number;
}

export interface Knee {
  /** The smallest cap whose goodput reached `share` of the best goodput of the sweep. */
  readonly knee: number;
  readonly bestGoodput: number;
  /** The cap that reached the best goodput. */
  readonly bestCap: number;
}

/** Issue 14 item 5: the knee is the smallest cap reaching 95% of the best goodput. */
export const KNEE_SHARE = 0.95;

export function kneeOf(points: readonly CapPoint[], share = KNEE_SHARE): Knee {
  if (points.length === 0) throw new Error('kneeOf: a sweep needs at least one cap');
  let best = points[0]!;
  for (const p of points) if (p.goodput > best.goodput) best = p;
  if (!(best.goodput > 0)) throw new Error('kneeOf: no cap of the sweep served a single call');
  const reaching = points.filter((p) => p.goodput >= share * best.goodput);
  const knee = Math.min(...reaching.map((p) => p.cap));
  return { knee, bestGoodput: best.goodput, bestCap: best.cap };
}

/**
 * When the sweep may stop: the last `flat` caps each failed to beat the best goodput of all the
 * caps below them by more than `gain` (3%: above the run-to-run noise of a 2 s measurement on
 * loopback, below the gain of one more worker at 4). Goodput has stopped growing, so no later cap
 * can move the knee by more than noise.
 */
export function sweepIsFlat(points: readonly CapPoint[], flat = 2, gain = 0.03): boolean {
  if (points.length <= flat) return false;
  for (let i = points.length - flat; i < points.length; i++) {
    const below = Math.max(...points.slice(0, i).map((p) => p.goodput));
    if (points[i]!.goodput > below * (1 + gain)) return false;
  }
  return true;
}

/** A sample of the limiter and the upstream, taken every 100 ms. */
export interface Sample {
  readonly tMs: number;
  readonly limit: number;
  /** Calls inside fn: what the upstream has in flight from us. */
  readonly upstreamInflight: number;
  readonly queued: number;
}

export interface Spread {
  readonly median: number;
  readonly p10: number;
  readonly p90: number;
  readonly mean: number;
}

export function spread(values: readonly number[]): Spread {
  const sorted = ascending(values);
  const mean = values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
  return { median: quantile(sorted, 0.5), p10: quantile(sorted, 0.1), p90: quantile(sorted, 0.9), mean };
}

/**
 * "Re-converged" after a change of capacity at `changeMs` (issue 14 item 5): the time from the
 * change to the first limit sample from which every sample up to `endMs` (the next change, or the
 * end of the run) lies in [lo, hi], the band of the limit criterion around the new phase's knee.
 * Raw 100 ms samples, no smoothing: the limit is the controller's state, it has no sampling noise.
 * `undefined` when the phase ends outside the band (it never re-converged) or has no sample.
 */
export function reconvergenceMs(
  samples: readonly Sample[],
  changeMs: number,
  endMs: number,
  lo: number,
  hi: number,
): number | undefined {
  const phase = samples.filter((s) => s.tMs >= changeMs && s.tMs < endMs);
  if (phase.length === 0) return undefined;
  let lastOutside = -1;
  for (let i = 0; i < phase.length; i++) {
    const limit = phase[i]!.limit;
    if (limit < lo || limit > hi) lastOutside = i;
  }
  if (lastOutside === phase.length - 1) return undefined;
  if (lastOutside < 0) return 0;
  return phase[lastOutside + 1]!.tMs - changeMs;
}

/** How one call ended, from the caller's side. */
export type Outcome = 'ok' | 'shed' | 'timeout' | 'error';

/** One call of a run. Times in ms since the run started. */
export interface CallRecord {
  readonly startMs: number;
  readonly endMs: number;
  readonly outcome: Outcome;
  /** Time inside fn (the upstream's latency, our queue excluded); only when fn got an answer. */
  readonly upstreamMs: number | undefined;
}

export interface RunFigures {
  /** The measured window, ms since the run started. */
  readonly fromMs: number;
  readonly toMs: number;
  readonly calls: number;
  readonly ok: number;
  readonly shed: number;
  readonly timeouts: number;
  readonly errors: number;
  /** Successful calls per second. */
  readonly goodput: number;
  /** Time inside fn of the calls the upstream answered. */
  readonly upstream: Quantiles;
  /** Time from `execute` to its result for the successful calls: our queue included. */
  readonly caller: Quantiles;
  readonly limit: Spread;
  readonly upstreamInflight: Spread;
}

/** The figures of the calls that ended, and the samples taken, in [fromMs, toMs). */
export function figuresOf(
  calls: readonly CallRecord[],
  samples: readonly Sample[],
  fromMs: number,
  toMs: number,
): RunFigures {
  const ended = calls.filter((c) => c.endMs >= fromMs && c.endMs < toMs);
  const count = (o: Outcome) => ended.filter((c) => c.outcome === o).length;
  const ok = ended.filter((c) => c.outcome === 'ok');
  const answered = ended.flatMap((c) => (c.upstreamMs === undefined ? [] : [c.upstreamMs]));
  const inWindow = samples.filter((s) => s.tMs >= fromMs && s.tMs < toMs);
  return {
    fromMs,
    toMs,
    calls: ended.length,
    ok: ok.length,
    shed: count('shed'),
    timeouts: count('timeout'),
    errors: count('error'),
    goodput: ok.length / ((toMs - fromMs) / 1_000),
    upstream: quantiles(answered),
    caller: quantiles(ok.map((c) => c.endMs - c.startMs)),
    limit: spread(inWindow.map((s) => s.limit)),
    upstreamInflight: spread(inWindow.map((s) => s.upstreamInflight)),
  };
}

/** One gated criterion: the figure measured beside the bound it is held to. */
export interface Criterion {
  readonly server: string;
  readonly run: string;
  readonly name: string;
  readonly measured: string;
  readonly bound: string;
  readonly pass: boolean;
}

/** Issue 14 item 5's bounds, in one place. */
export const BOUNDS = Object.freeze({
  /** Goodput of the defaults >= 90% of the best fixed cap. */
  goodputShare: 0.9,
  /** Upstream p90 <= 2x its no-load p90. */
  upstreamP90Ratio: 2,
  /** Limit median in [0.7, 2] x the knee. */
  limitLow: 0.7,
  limitHigh: 2,
  /** A phase change re-converges within 10 s. */
  reconvergeMs: 10_000,
  /**
   * The settled limit swings within +-20% of its median (issue 20 item 4, the sim's convergence
   * bound), judged on its p10 and p90, and never tighter than one call: the
   * limit is an integer, so at a median of 3 one call either way is 33%.
   */
  swing: 0.2,
});

/** The four criteria of one run of the defaults against its server's knee and no-load latency. */
export function runCriteria(
  server: string,
  run: string,
  figures: RunFigures,
  knee: Knee,
  noLoadP90Ms: number,
): Criterion[] {
  const goodputBound = BOUNDS.goodputShare * knee.bestGoodput;
  const p90Bound = BOUNDS.upstreamP90Ratio * noLoadP90Ms;
  const lo = BOUNDS.limitLow * knee.knee;
  const hi = BOUNDS.limitHigh * knee.knee;
  return [
    {
      server,
      run,
      name: 'goodput',
      measured: `${fixed(figures.goodput, 1)}/s (${fixed(figures.goodput / knee.bestGoodput, 2)} x best fixed)`,
      bound: `>= ${fixed(goodputBound, 1)}/s (0.9 x best fixed ${fixed(knee.bestGoodput, 1)}/s at cap ${knee.bestCap})`,
      pass: figures.goodput >= goodputBound,
    },
    {
      server,
      run,
      name: 'upstream p90',
      measured: `${fixed(figures.upstream.p90, 1)} ms (${fixed(figures.upstream.p90 / noLoadP90Ms, 2)} x no-load)`,
      bound: `<= ${fixed(p90Bound, 1)} ms (2 x no-load p90 ${fixed(noLoadP90Ms, 1)} ms)`,
      pass: figures.upstream.p90 <= p90Bound,
    },
    {
      server,
      run,
      name: 'limit median',
      measured: `${fixed(figures.limit.median, 1)} (p10 ${fixed(figures.limit.p10, 1)}, p90 ${fixed(figures.limit.p90, 1)})`,
      bound: `in [${fixed(lo, 1)}, ${fixed(hi, 1)}] (0.7-2 x knee ${knee.knee})`,
      pass: figures.limit.median >= lo && figures.limit.median <= hi,
    },
    {
      server,
      run,
      name: 'limit swing',
      measured: `${fixed(100 * swingOf(figures.limit), 0)}% (p10 ${fixed(figures.limit.p10, 1)}, median ${fixed(figures.limit.median, 1)}, p90 ${fixed(figures.limit.p90, 1)})`,
      bound: `<= ${fixed(100 * swingBound(figures.limit), 0)}% (+-20% of the median, at least one call)`,
      pass: swingOf(figures.limit) <= swingBound(figures.limit) + 1e-9,
    },
  ];
}

/** The larger of the p90's and the p10's distance from the median, relative to it. */
function swingOf(limit: Spread): number {
  return Math.max(limit.p90 / limit.median - 1, 1 - limit.p10 / limit.median);
}

function swingBound(limit: Spread): number {
  return Math.max(BOUNDS.swing, 1 / limit.median);
}

export function fixed(value: number, digits: number): string {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/**
 * Replaces the block between `<!-- e2e-real:NAME -->` and `<!-- /e2e-real:NAME -->` in a markdown
 * text. Throws when the markers are missing: a doc that lost its markers must not be left stale
 * without a word.
 */
export function replaceBlock(text: string, name: string, body: string): string {
  const open = `<!-- e2e-real:${name} -->`;
  const close = `<!-- /e2e-real:${name} -->`;
  const start = text.indexOf(open);
  const end = start < 0 ? -1 : text.indexOf(close, start);
  if (start < 0 || end < 0) throw new Error(`replaceBlock: no ${open} ... ${close} block`);
  return `${text.slice(0, start + open.length)}\n${body}\n${text.slice(end)}`;
}

/** Poisson arrivals: exponential gaps of mean 1/rate seconds, drawn from `random`. */
export function exponentialGapMs(random: () => number, ratePerSecond: number): number {
  return (-Math.log(1 - random()) / ratePerSecond) * 1_000;
}
