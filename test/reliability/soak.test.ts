import { describe, expect, it } from 'vitest';
import { runSoak } from './support/soak';

/**
 * Issue 11, soak: the reduced count CI runs (20 000 seeded calls; `npm run soak` runs 10^6 with
 * the same function, scripts/soak.ts). Random verdicts, synchronous throws, plain values, caller
 * aborts and deadlines through the full pipeline: nothing leaks and retained heap stays flat.
 */
const CALLS = Number(process.env.SOAK_CALLS ?? 20_000);

describe('soak: seeded calls through the full pipeline', () => {
  it(`leaks no permit, slot, waiter or timer over ${CALLS} calls, and every call settles exactly once`, async () => {
    const r = await runSoak({ calls: CALLS, seed: 11 });
    expect(r.calls).toBe(CALLS);
    expect(r.leakedPermits).toBe(0);
    expect(r.pendingTimers).toBe(0);
    expect(r.badSettles).toBe(0);
    // every kind of ending happened, so the run exercised what it claims to
    expect(Object.keys(r.outcomes).sort()).toEqual(
      [
        'ERR_RESILIX_CIRCUIT_OPEN',
        'ERR_RESILIX_LIMIT_EXCEEDED',
        'ERR_RESILIX_TIMEOUT',
        'caller left',
        'resolved',
        'sync fault',
      ].concat(r.outcomes.ERR_RESILIX_BULKHEAD_FULL === undefined ? [] : ['ERR_RESILIX_BULKHEAD_FULL']),
    );
    expect(r.breakerOpens).toBeGreaterThan(0);
    expect(Object.values(r.outcomes).reduce((a, b) => a + b, 0)).toBe(CALLS);
    // flat: what is retained after warm-up does not grow with the number of calls
    expect(r.heapMB.end - r.heapMB.warm).toBeLessThan(4);
  }, 120_000);
});
