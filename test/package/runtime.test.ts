import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './packed';

/**
 * test/package/runtime/ holds node:test files for the packed package, so they also run on Node 18
 * where vitest cannot start (.ci/run runs them there). Here they run on the Node running vitest.
 */
describe('the packed package on this Node (test/package/runtime, node:test)', () => {
  it('passes every runtime test, and runs some', () => {
    const dir = mkdtempSync(join(tmpdir(), 'resilix-runtime-'));
    try {
      const report = join(dir, 'report.json');
      const run = spawnSync(process.execPath, [join(ROOT, 'scripts/run-package-tests.mjs'), '--report', report], {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 240_000,
      });
      expect(run.status, `${run.stdout}\n${run.stderr}`).toBe(0);
      const counts = JSON.parse(readFileSync(report, 'utf8'));
      expect(counts).toMatchObject({ node: process.version, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0 });
      expect(counts.numPassedTests).toBeGreaterThanOrEqual(15);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 250_000);
});
