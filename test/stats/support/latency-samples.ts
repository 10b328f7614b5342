import { mulberry32 as seededUniform } from '../../helpers/mulberry32';
/**
 * Seeded latency generators for the stats tests and the quantile report. Test-side only: src/
 * never needs randomness. Every window is reproducible from (distribution, seed).
 */

/** A uniform source in [0, 1). */
export type Random = () => number;

/**
 * mulberry32 (Tommy Ettinger, public domain): 32-bit state, passes the statistical tests that
 * matter for drawing latencies, and is four lines. Written from the published constants.
 */
export function mulberry32(seed: number): Random {
  return seededUniform(seed);
}

/** Standard normal by Box-Muller (one of the pair; simplicity over speed). */
export function normal(random: Random): number {
  const radius = Math.sqrt(-2 * Math.log(1 - random())); // 1 - u in (0, 1]: log is finite
  return radius * Math.cos(2 * Math.PI * random());
}

export function lognormalMs(random: Random, medianMs: number, sigma: number): number {
  return medianMs * Math.exp(sigma * normal(random));
}

/** Pareto with scale `minimumMs` and shape `alpha` by inversion. */
export function paretoMs(random: Random, minimumMs: number, alpha: number): number {
  return minimumMs / (1 - random()) ** (1 / alpha);
}

export interface LatencyDistribution {
  /** Short label used in tables. */
  readonly name: string;
  /** What the label means, for the report's legend. */
  readonly description: string;
  /** Draws one window of `size` latencies in milliseconds, in arrival order. */
  window(random: Random, size: number): Float64Array;
}

function independent(draw: (random: Random) => number) {
  return (random: Random, size: number): Float64Array => {
    const latenciesMs = new Float64Array(size);
    for (let index = 0; index < size; index++) latenciesMs[index] = draw(random);
    return latenciesMs;
  };
}

/** Two modes 10 ms and 100 ms, each with 10% lognormal jitter; `fastShare` of calls are fast. */
function bimodal(fastShare: number): LatencyDistribution {
  const fastPercent = Math.round(fastShare * 100);
  return {
    name: `bimodal ${fastPercent}/${100 - fastPercent}`,
    description: `${fastPercent}% of calls ~10 ms, ${100 - fastPercent}% ~100 ms (sigma 0.1 each)`,
    window: independent((random) =>
      random() < fastShare ? lognormalMs(random, 10, 0.1) : lognormalMs(random, 100, 0.1),
    ),
  };
}

export const DISTRIBUTIONS: readonly LatencyDistribution[] = [
  {
    name: 'lognormal s0.5',
    description: 'lognormal, median 10 ms, sigma 0.5 (mildly skewed)',
    window: independent((random) => lognormalMs(random, 10, 0.5)),
  },
  {
    name: 'lognormal s1.2',
    description: 'lognormal, median 10 ms, sigma 1.2 (heavily skewed)',
    window: independent((random) => lognormalMs(random, 10, 1.2)),
  },
  {
    name: 'pareto a1.5',
    description: 'Pareto, minimum 10 ms, alpha 1.5 (infinite variance)',
    window: independent((random) => paretoMs(random, 10, 1.5)),
  },
  {
    name: 'step 10->50',
    description: 'first half ~10 ms, second half ~50 ms (sigma 0.1): latency shifts mid-window',
    window: (random, size) => {
      const latenciesMs = new Float64Array(size);
      const half = Math.floor(size / 2);
      for (let index = 0; index < size; index++) {
        latenciesMs[index] = lognormalMs(random, index < half ? 10 : 50, 0.1);
      }
      return latenciesMs;
    },
  },
  {
    name: 'sorted asc',
    description: 'lognormal s0.5 delivered in ascending order (P² worst case; a latency ramp)',
    window: (random, size) => {
      const latenciesMs = new Float64Array(size);
      for (let index = 0; index < size; index++) latenciesMs[index] = lognormalMs(random, 10, 0.5);
      return latenciesMs.sort();
    },
  },
  {
    name: 'bursty',
    description:
      'two-state Markov, ~10 ms and ~50 ms (sigma 0.25): slow runs start with p 0.03 and end with p 0.2 (13% slow, mean run 5)',
    window: (random, size) => {
      const latenciesMs = new Float64Array(size);
      let slow = random() < 0.13;
      for (let index = 0; index < size; index++) {
        slow = slow ? random() >= 0.2 : random() < 0.03;
        latenciesMs[index] = lognormalMs(random, slow ? 50 : 10, 0.25);
      }
      return latenciesMs;
    },
  },
  bimodal(0.8),
  bimodal(0.88),
  bimodal(0.9),
];

/** Exact type-7 quantile of an unsorted array (copies; test-side reference). */
export function exactQuantile(values: ArrayLike<number>, quantile: number): number {
  const sorted = Float64Array.from(values).sort();
  if (sorted.length === 0) return Number.NaN;
  const position = (sorted.length - 1) * quantile;
  const lowerIndex = Math.floor(position);
  const lower = sorted[lowerIndex] as number;
  const upper = sorted[Math.min(lowerIndex + 1, sorted.length - 1)] as number;
  return lower + (position - lowerIndex) * (upper - lower);
}
