/**
 * The queue's bounds as factors of the limit L, on calls running plus waiting (spec §7; failsafe-go counts waiters
 * only, adr/0008): below L run at once; up to `initialFactor`·L wait; up to `maxFactor`·L wait with a rejection
 * probability rising linearly from 0 to 1; from `maxFactor`·L reject all.
 */
export interface QueueingConfig {
  readonly initialFactor: number;
  readonly maxFactor: number;
}

/** Shed a call that cannot run at once? n = running + waiting, arrival excluded (adr/0044); queueing off sheds all. */
export function mustShed(queueing: QueueingConfig | undefined, limit: number, n: number, coin: () => number): boolean {
  if (queueing === undefined) return true;
  const rejectAllFrom = queueing.maxFactor * limit;
  if (n >= rejectAllFrom) return true;
  const rejectFrom = queueing.initialFactor * limit;
  if (n < rejectFrom) return false;
  return coin() < (n - rejectFrom) / (rejectAllFrom - rejectFrom);
}
