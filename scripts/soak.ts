/**
 * The full soak of issue 11: 10^6 seeded calls through breaker -> limiter -> bulkhead -> timeout.
 * `npm run soak` (= `tsx scripts/soak.ts`); `SOAK_CALLS` and `SOAK_SEED` override the count and
 * seed. Exits 1 on any leaked permit, armed timer, call not settled exactly once, or heap growth
 * over 8 MB between warm-up and the end. CI runs a reduced count: test/reliability/soak.test.ts.
 */
import { runSoak } from '../test/reliability/support/soak';

const calls = Number(process.env.SOAK_CALLS ?? 1_000_000);
const seed = Number(process.env.SOAK_SEED ?? 11);
/** Ours: a leak of one permit record per call would retain ~100 MB over 10^6 calls; noise stays under 2 MB. */
const MAX_HEAP_GROWTH_MB = 8;

const result = await runSoak({
  calls,
  seed,
  onProgress: (done) => process.stdout.write(`  ${done.toLocaleString('en')} calls\n`),
});
const growth = result.heapMB.end - result.heapMB.warm;
console.log(JSON.stringify(result, null, 2));
console.log(
  `soak: ${result.calls} calls (seed ${seed}) in ${(result.wallMs / 1000).toFixed(1)} s wall, ` +
    `${(result.virtualMs / 1000).toFixed(0)} s virtual; leaked permits ${result.leakedPermits}, ` +
    `armed timers ${result.pendingTimers}, bad settles ${result.badSettles}; heap MB start ${result.heapMB.start}, ` +
    `warm ${result.heapMB.warm}, end ${result.heapMB.end} (growth ${growth.toFixed(1)})`,
);
const ok =
  result.leakedPermits === 0 && result.pendingTimers === 0 && result.badSettles === 0 && growth <= MAX_HEAP_GROWTH_MB;
process.exit(ok ? 0 : 1);
