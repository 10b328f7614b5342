import { requireNumber } from '../core/options';

/** Seed 001's middleware answers every shed request with `Retry-After: 1`; we keep its 1 s when there is no hint. */
const DEFAULT_FALLBACK_MS = 1_000;

/**
 * The value of an HTTP `Retry-After` header (RFC 9110 §10.2.3, delay-seconds) for a refusal, so an
 * inbound handler answers `503` with the hint resilix computed:
 * `res.setHeader('retry-after', retryAfterHeader(error))`.
 *
 * - `hint`: a resilix error (its `retryAfterMs`) or a number of ms.
 * - Rounded up to whole seconds, and at least `1`: a client told `0` (a 300 ms hint rounded down)
 *   comes straight back into the overload it was refused for (ours).
 * - No usable hint (none, NaN, negative, infinite): `fallbackMs`, 1 s by default (seed 001's
 *   constant). Never throws for a bad hint, since it runs in an error handler; a bad `fallbackMs`
 *   is a programming error and throws a `RangeError` naming it.
 *
 * The inverse of `parseRetryAfter`, which reads the header of an upstream's answer.
 */
export function retryAfterHeader(
  hint: { readonly retryAfterMs?: number | undefined } | number | undefined,
  fallbackMs: number = DEFAULT_FALLBACK_MS,
): string {
  requireNumber('retryAfterHeader', 'fallbackMs', fallbackMs, { min: 0 });
  const ms = typeof hint === 'number' ? hint : hint?.retryAfterMs;
  const usable = typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? ms : fallbackMs;
  // Capped so that String() prints digits (past 1e21 it prints an exponent, which is no delay-seconds).
  return String(Math.max(1, Math.ceil(Math.min(usable, Number.MAX_SAFE_INTEGER) / 1_000)));
}
