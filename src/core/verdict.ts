/**
 * How one finished call is classified. Every call produces exactly one verdict, and policies
 * learn only from it (DESIGN.md §3, adr/0010-verdict-model.md).
 *
 * - `ok`        the upstream answered successfully
 * - `answered`  the upstream did the work but said no (most 4xx): a latency sample, no pressure
 * - `overload`  the upstream says it is overloaded (429, 503): the limiter reduces; not a breaker failure
 * - `failure`   5xx, network error, thrown error
 * - `timeout`   our own deadline fired: the strongest reduce signal
 * - `rejected`  one of our own policies refused the call: teaches nothing (ADR-007)
 * - `cancelled` the caller aborted: teaches nothing
 */
export type Verdict = 'ok' | 'answered' | 'overload' | 'failure' | 'timeout' | 'rejected' | 'cancelled';

export const VERDICTS: readonly Verdict[] = Object.freeze([
  'ok',
  'answered',
  'overload',
  'failure',
  'timeout',
  'rejected',
  'cancelled',
] as const);

export function isVerdict(value: unknown): value is Verdict {
  return typeof value === 'string' && (VERDICTS as readonly string[]).includes(value);
}
