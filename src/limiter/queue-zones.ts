/**
 * The queue's bounds as factors of the limit L, counting calls running plus waiting (spec §7;
 * failsafe-go counts waiters only, adr/0008): below L run at once; up to `initialFactor`·L wait; up to `maxFactor`·L
 * wait with a rejection probability rising linearly from 0 to 1; from `maxFactor`·L reject all.
 */
export interface QueueingConfig {
  readonly initialFactor: number;
  readonly maxFactor: number;
}

/**
 * The zone decision for a call that cannot run at once, with n = running + waiting (the
 * arrival not counted): queue below initialFactor·L, shed from maxFactor·L, and in between
 * shed with probability (n - initialFactor·L) / ((maxFactor - initialFactor)·L).
 * `queueing` undefined (queueing off) sheds every such call.
 */
export function mustShed(
  queueing: QueueingConfig | undefined,
  limit: number,
  n: number,
  random: () => number,
): boolean {
  if (queueing === undefined) return true;
  const rejectAllFrom = queueing.maxFactor * limit;
  if (n >= rejectAllFrom) return true;
  const rejectFrom = queueing.initialFactor * limit;
  if (n < rejectFrom) return false;
  return random() < (n - rejectFrom) / (rejectAllFrom - rejectFrom);
}
