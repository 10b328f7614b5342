/**
 * Whether a registry value reports work in flight by itself. The registry also counts the calls it
 * runs (`registry.execute`); this catches the calls that bypass it (`registry.get(key).execute`)
 * and the work a timed-out call still holds (ADR-0011: a call keeps its slots until it settles).
 *
 * A value is busy when it, or for a `Pipeline` any of its `policies`, exposes a numeric `inflight`,
 * `queued` or `active` above 0: the limiter exposes `inflight` and `queued`, the bulkhead
 * `active`. A value that exposes none of these (a lone timeout, a breaker, your own executor) is
 * busy only while the registry's own counter says so.
 */
export function reportsBusy(value: object): boolean {
  if (countsWork(value)) return true;
  const policies = (value as { policies?: unknown }).policies;
  if (!Array.isArray(policies)) return false;
  for (let i = 0; i < policies.length; i++) {
    const policy: unknown = policies[i];
    if (typeof policy === 'object' && policy !== null && countsWork(policy)) return true;
  }
  return false;
}

function countsWork(value: object): boolean {
  const counters = value as { inflight?: unknown; queued?: unknown; active?: unknown };
  return isPositive(counters.inflight) || isPositive(counters.queued) || isPositive(counters.active);
}

function isPositive(count: unknown): boolean {
  return typeof count === 'number' && count > 0;
}
