import type { Random } from '../engine/random';

/** A service-time (or think-time) distribution, in ms. */
export interface Distribution {
  readonly name: string;
  /** The median, in ms: what a scenario's "p50 0.35 s" refers to. */
  readonly medianMs: number;
  /** The mean, in ms: what Little's law and capacity arithmetic need. */
  readonly meanMs: number;
  sample(random: Random): number;
}

export function constant(valueMs: number): Distribution {
  return { name: `constant(${valueMs})`, medianMs: valueMs, meanMs: valueMs, sample: () => valueMs };
}

/** Exponential with the given mean (memoryless service: M/M/c). */
export function exponential(meanMs: number): Distribution {
  return {
    name: `exponential(mean ${meanMs})`,
    medianMs: meanMs * Math.LN2,
    meanMs,
    sample: (random) => random.exponential(meanMs),
  };
}

/**
 * Lognormal with the given median and shape sigma (the log's standard deviation). The usual
 * shape of a service's latency: a floor, a body, and a right tail.
 */
export function lognormal(medianMs: number, sigma: number): Distribution {
  return {
    name: `lognormal(median ${medianMs}, sigma ${sigma})`,
    medianMs,
    meanMs: medianMs * Math.exp((sigma * sigma) / 2),
    sample: (random) => medianMs * Math.exp(sigma * random.normal()),
  };
}

/** A mixture: with probability `slowShare` a draw comes from `slow`, else from `fast` (cache hit/miss). */
export function bimodal(fast: Distribution, slow: Distribution, slowShare: number): Distribution {
  return {
    name: `bimodal(${fast.name} | ${slow.name} at ${slowShare})`,
    // The mixture's median has no closed form; for slowShare < 0.5 it lies in the fast mode.
    medianMs: slowShare < 0.5 ? fast.medianMs : slow.medianMs,
    meanMs: (1 - slowShare) * fast.meanMs + slowShare * slow.meanMs,
    sample: (random) => (random.next() < slowShare ? slow.sample(random) : fast.sample(random)),
  };
}
