/**
 * The surface every quantile estimator in this folder shares, so the limiter's window can hold
 * any of them and the accuracy report (scripts/quantile-report.ts) can compare them cell by cell.
 */
export interface QuantileEstimator {
  /** The target quantile in (0, 1), e.g. 0.9 for p90. */
  readonly quantile: number;
  /** Finite values accepted since construction or the last reset. */
  readonly count: number;
  /** Adds one value. Non-finite values (NaN, +-Infinity) are ignored and not counted. */
  add(x: number): void;
  /** The current estimate; NaN when no value has been added. */
  value(): number;
  /** Forgets every value; allocates nothing. */
  reset(): void;
}
