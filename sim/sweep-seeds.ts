import type { Criterion } from './engine/criteria';
import { formatSeed } from './engine/random';

/**
 * Seed k of a scenario whose own seed is `base`: base ^ (0x9e3779b1 x k), unsigned (k = 0 is the
 * base itself). 0x9e3779b1 is 2^32 / phi, the usual odd multiplier for spreading small integers
 * over 32 bits (Knuth's multiplicative hashing), so nearby k give unrelated seeds.
 */
export function sweepSeed(base: number, k: number): number {
  return (base ^ Math.imul(0x9e3779b1, k)) >>> 0;
}

/** Seeds 0..count-1 of a scenario. */
export function sweepSeeds(base: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => sweepSeed(base, k));
}

/**
 * Scenarios whose criteria gate CI: the default algorithm's. The others run as reported controls
 * (a comparison that must lose, or an algorithm the matrix reports but the spec does not gate:
 * gradient2 follows Netflix's formula, which by design tolerates a queue of rttTolerance (1.5x)
 * the no-load latency and so sits above the 1.5 C in-flight bound; aimd does not read latency).
 */
export function isGated(name: string): boolean {
  return !name.endsWith('-aimd') && !name.endsWith('-gradient2') && !name.startsWith('report-');
}

/** One run's outcome, as the sweep's workers report it. */
export interface SweepRun {
  readonly scenario: string;
  readonly k: number;
  readonly seed: number;
  readonly seedHex: string;
  readonly passed: boolean;
  readonly criteria: readonly Criterion[];
  readonly figures: Readonly<Record<string, number>>;
  readonly cpuMs: number;
}

export { formatSeed };

/** A command-line count (`--seeds`, `--jobs`): a positive integer, or a RangeError naming the flag. */
export function positiveIntegerFlag(flag: string, raw: string | undefined): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`--${flag} must be a positive integer; got ${raw}`);
  return value;
}
