import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import type { GuardCase, GuardReport } from '../../bench/allocation-guard';

/**
 * Allocation guard for the limiter's low-level path, `tryAcquire()` + `permit.settle({ verdict,
 * latencyMs })` (issues 10 and 16). Byte counts are stable where times are not, so this fails on a
 * regression without a flaky timing assertion.
 *
 * The measurement runs in child processes (bench/allocation-guard.ts, one per case and two of
 * each, four of the fractional ones: adr/0134) on the published shape of the code, the tsup bundle: vitest's module runner splits the
 * code into modules and wraps imports, which changes what V8 inlines and so what it allocates.
 * Bytes are counted with V8's GCProfiler (collections included), 10^5 calls a round, five rounds a
 * process; each test reads the round with the fewest bytes.
 */
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
let report: GuardReport;

beforeAll(() => {
  const env = { ...process.env };
  delete env.NODE_V8_COVERAGE; // the children are a measurement, not part of the coverage run
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'bench/allocation-guard.ts'], {
    cwd: root,
    env,
    encoding: 'utf8',
    timeout: 170_000,
  });
  report = JSON.parse(out.trim().split('\n').pop()!) as GuardReport;
}, 180_000);

/** Bytes per call in the best round of a case. */
const bytesPerCall = (name: GuardCase): number => Math.min(...report.cases[name].rounds) / report.calls;

/**
 * Zero, give or take the meter's own jitter: 0-1.3 KB a round on Node 20, up to ~11 KB on Node 24
 * (V8's concurrent compilers allocate in the measured round). 0.16 B per call is 16 KB over 10^5
 * calls: one object or boxed number per call would be 1.6 MB, a hundred times over it.
 */
const NOTHING_PER_CALL = 0.16;

describe('the limiter low-level path, tryAcquire() + permit.settle(), over 10^5 calls', () => {
  it('measures exactly 10^5 calls a round', () => {
    expect(report.calls).toBe(100_000);
  });

  it('allocates nothing per call with a clock that does not move (the per-call path, no window closes)', () => {
    expect(report.cases.frozen.windows).toBe(0);
    expect(bytesPerCall('frozen')).toBeLessThan(NOTHING_PER_CALL);
  });

  // Fractional numbers are what a real clock reads. The settle hands the control loop the time in a
  // field, not as an argument (adr/0087): a double passed to a call V8 does not inline is boxed, and
  // whether it inlines `observe` depended on which function it optimized first.
  it('allocates nothing per call with a fractional clock reading and a fractional latency', () => {
    expect(report.cases.fractional.windows).toBe(0);
    expect(bytesPerCall('fractional')).toBeLessThan(NOTHING_PER_CALL);
  });

  it('allocates less than 4 bytes per call with the control loop closing windows (1 ms per reading)', () => {
    // Only the window closes allocate (about 2 KB each, every ~2 000 calls here): well under the
    // 16 bytes a single boxed number per call would cost.
    expect(report.cases.stepping.windows).toBeGreaterThan(0);
    expect(bytesPerCall('stepping')).toBeLessThan(4);
  });

  // The window check and the full path read the time from the field too: a double passed on a
  // branch rarely taken was still boxed on every call (V8 boxes it once, before the branches).
  it('allocates less than 4 bytes per call closing windows with fractional numbers', () => {
    expect(report.cases['fractional-stepping'].windows).toBeGreaterThan(0);
    expect(bytesPerCall('fractional-stepping')).toBeLessThan(4);
  });

  // A refusal takes its own branches: the stale test, the refusal tail's count and what it learns at
  // each close. One call in 32 refused, a share the tail excuses, so windows keep closing as above.
  it('allocates less than a fresh object per refusal (under 24 bytes a refusal) over the same path without refusals', () => {
    expect(report.cases.refusing.windows).toBeGreaterThan(0);
    expect(bytesPerCall('refusing')).toBeLessThan(4);
    // Node 20: the two cases differ by -2 to +3 B a refusal, no trend. Node 24: 0-10 B a refusal, by process (which
    // code V8 tiers up first; docs/benchmarks.md). A fresh Observation literal per refusal measured 58 B.
    const perRefusal = (bytesPerCall('refusing') - bytesPerCall('fractional-stepping')) * report.refusedEvery;
    expect(perRefusal).toBeLessThan(24);
  });

  it('allocates at most the platform clock reading per call with the default clock', () => {
    // Node 20's performance.now() returns a fresh 16-byte number on every call (a C++ binding's
    // return value), which settle reads once; Node 24's allocates nothing, and the pair then
    // measures 0. Anything resilix added per call would push this past 16.5.
    expect(bytesPerCall('system')).toBeLessThanOrEqual(16.5);
  });

  // Where the platform's clock reading is free, the whole pair, clock included, allocates nothing
  // (issue 16's goal): measured 0.07 B a call on Node 24.22.
  it.runIf(Number(process.versions.node.split('.')[0]) >= 24)(
    'allocates nothing per call with the default clock on Node 24 and later',
    () => {
      expect(bytesPerCall('system')).toBeLessThan(NOTHING_PER_CALL);
    },
  );
});
