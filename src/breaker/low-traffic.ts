/**
 * The low-traffic rule (ADR-0021). Once the window has collected for its full `windowMs` it holds
 * all the traffic there is, and waiting for `minSamples` calls may mean waiting for ever. So a rate
 * may then be read from as few as `lowTrafficMinSamples` calls; but from fewer than `minSamples` it
 * must be convincingly over its threshold, not just over it: the one-sided 95 % Wilson lower bound
 * of the rate must reach the threshold. At a 0.5 threshold that is 5 failures of 5, 8 of 10, 12 of
 * 16. From `minSamples` calls on, the plain rate decides (resilience4j's rule).
 *
 * z = 1.645 (one-sided 95 %) is ours. In simulation at 3-8 calls a minute it keeps an upstream
 * failing 20 % of calls from opening the breaker more than 0.05 times an hour (a plain rate over 5
 * calls opens it 2-6 times an hour), while an upstream failing 60 % opens it in a median 2.4-14
 * minutes (the consecutive-failure backstop alone takes 28-78). ADR-0021 has the table;
 * test/breaker/low-traffic.simulation.test.ts keeps it true.
 */
export const LOW_TRAFFIC_CONFIDENCE_Z = 1.645;

/**
 * True when `hits` of `n` calls (failures, or slow calls) are convincingly at or over `threshold`.
 * A few arithmetic operations and one square root; no allocation.
 */
export function confidentlyReaches(hits: number, n: number, threshold: number): boolean {
  return wilsonLowerBound(hits, n, LOW_TRAFFIC_CONFIDENCE_Z) >= threshold;
}

/** The lower bound of the Wilson score interval for `hits` of `n` at `z` standard deviations. */
export function wilsonLowerBound(hits: number, n: number, z: number): number {
  if (n === 0) return 0;
  const p = hits / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return (centre - spread) / (1 + z2 / n);
}
