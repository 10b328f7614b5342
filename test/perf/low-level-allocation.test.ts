import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GuardReport } from '../../bench/allocation-guard';

/**
 * Allocation guard for the limiter's low-level path (issue 10). Byte counts are stable where
 * times are not, so this fails on a regression without a flaky timing assertion.
 *
 * The measurement runs in a child process (bench/allocation-guard.ts) on the published shape of
 * the code, the tsup bundle: vitest's module runner splits the code into modules and wraps
 * imports, which changes what V8 inlines and so what it allocates. Bytes are counted with V8's
 * GCProfiler (collections included), over 10^5 calls after 2·10^5 warm-up calls, three rounds.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let report: GuardReport;

beforeAll(() => {
  const env = { ...process.env };
  delete env.NODE_V8_COVERAGE; // the child is a measurement, not part of the coverage run
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/allocation-guard.ts'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 170_000,
  });
  report = JSON.parse(out.trim().split('\n').pop()!) as GuardReport;
}, 180_000);

/** The best of the rounds: a stray allocation by the runtime can only add bytes, never hide ours. */
const fewest = (rounds: number[]): number => Math.min(...rounds);

describe('the limiter low-level path, tryAcquire() + permit.settle(), over 10^5 calls', () => {
  it('measures exactly 10^5 calls per round', () => {
    expect(report.calls).toBe(100_000);
  });

  it('allocates nothing on the per-call path (a clock that does not move: no window closes)', () => {
    // Zero, give or take the meter's own jitter: on a quiet machine 0-1.3 KB per round, and up to
    // ~3.4 KB in every round on a loaded one (V8's concurrent optimisation lands in the measured
    // round). The bound, 16 KB over 10^5 calls, is 0.16 B per call: one object or boxed double per
    // call would be >= 1.6 MB, a hundred times over it.
    expect(fewest(report.frozen)).toBeLessThan(16_384);
  });

  it('allocates less than 4 bytes per call with the control loop closing windows (a 1 ms-per-reading clock)', () => {
    expect(report.steppingWindows).toBeGreaterThan(0);
    // Only the window closes allocate (about 1.6 KB each, every ~2 000 calls here): well under the
    // 16 bytes a single boxed double per call would cost.
    expect(fewest(report.stepping) / report.calls).toBeLessThan(4);
  });

  // A whole-number reading or latency is a small integer, which V8 never boxes: the three tests
  // above cannot see a number boxed on the way. Real readings and latencies are fractional. On
  // Node 20 and 24 the pair then allocates 16 bytes per fractional number it is handed: the
  // limiter's settle path boxes the clock reading once and the latency once (issue 16 asks for
  // 0 B; the fix is in src/limiter, the control loop's owner's). These two pin today's figure, so
  // it cannot grow; the two after them state the goal and fail until it is met.
  it('allocates no more than one 16-byte box for a fractional clock reading', () => {
    expect(fewest(report.fractional) / report.calls).toBeLessThanOrEqual(16.5);
  });

  it('allocates no more than one 16-byte box each for a fractional reading and a fractional latency', () => {
    expect(fewest(report.fractionalLatency) / report.calls).toBeLessThanOrEqual(32.5);
  });

  // The goal (issue 16): 0 B with fractional numbers. `it.fails` passes while the pair still
  // allocates; once the limiter stops boxing, these fail: turn them into `it`.
  it.fails('allocates nothing per call with a fractional clock reading (goal)', () => {
    expect(fewest(report.fractional)).toBeLessThan(16_384);
  });

  it.fails('allocates nothing per call with a fractional reading and latency (goal)', () => {
    expect(fewest(report.fractionalLatency)).toBeLessThan(16_384);
  });

  it('allocates at most the 16 bytes per call of the platform clock reading with the default clock', () => {
    // Node 20's performance.now() returns a fresh 16-byte HeapNumber on every call; settle reads it
    // once. Anything resilix adds per call would push this past 17.
    expect(fewest(report.system) / report.calls).toBeLessThanOrEqual(17);
  });
});
