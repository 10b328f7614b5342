import type { Random } from '../engine/random';

/** A service-time (or think-time) distribution, in ms. */
export interface Distribution {
  readonly name: string;
  /** The median, in ms: what a scenario's "p50 0.35 s" refers to. */
  readonly medianMs: number;
  /** The mean, in ms: what Little's law and capacity arithmetic need. */
  readonly meanMs: number;
  /** The q-quantile in ms, where it has a closed form: the no-load figure latency criteria compare with. */
  readonly quantileMs?: (q: number) => number;
  sample(random: Random): number;
}

/**
 * The standard normal quantile (Acklam's rational approximation, relative error < 1.2e-9): for
 * lognormal quantiles.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs p in (0, 1); got ${p}`);
  const a = [
    -39.69683028665376, 220.9460984245205, -275.9285104469687, 138.357751867269, -30.66479806614716, 2.506628277459239,
  ];
  const b = [-54.47609879822406, 161.5858368580409, -155.6989798598866, 66.80131188771972, -13.28068155288572];
  const c = [
    -0.007784894002430293, -0.3223964580411365, -2.400758277161838, -2.549732539343734, 4.374664141464968,
    2.938163982698783,
  ];
  const d = [0.007784695709041462, 0.3224671290700398, 2.445134137142996, 3.754408661907416];
  const low = 0.02425;
  if (p < low) {
    const q = Math.sqrt(-2 * Math.log(p));
    return (
      (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) /
      ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1)
    );
  }
  if (p > 1 - low) return -normalQuantile(1 - p);
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) /
    (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
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
    quantileMs: (q) => medianMs * Math.exp(sigma * normalQuantile(q)),
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
