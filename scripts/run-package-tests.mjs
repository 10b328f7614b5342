#!/usr/bin/env node
// Runs test/package/runtime/*.test.mjs (node:test) against the packed package, on the Node that
// runs this script: the tests are copied next to the unpacked tarball, so `import 'resilix'` is
// the tarball's dist/ (ESM) and `require('resilix')` its CommonJS build.
//
//   node scripts/run-package-tests.mjs [--report reports/package-node18.json]
//
// Packs first if the cache is stale (scripts/pack.mjs; .ci/run has packed already, so under an
// older Node nothing is built). Prints the runner's TAP; `--report` writes the counts in the
// shape of vitest's JSON report (numPassedTests, numFailedTests, numPendingTests, numTodoTests)
// so CI sums them with vitest's. Exits non-zero when a test fails or when no test ran.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { packOnce } from './pack.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = join(ROOT, 'test/package/runtime');
const { values } = parseArgs({ options: { report: { type: 'string' } } });

const pack = packOnce();
const dir = join(pack.dir, `runtime-tests-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'runtime-tests', private: true, type: 'module' }));
const files = readdirSync(SOURCE)
  .filter((name) => name.endsWith('.test.mjs'))
  .sort();
for (const file of files) copyFileSync(join(SOURCE, file), join(dir, file));

// Node 18's runner takes files, not globs; TAP is the reporter every supported Node has.
const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...files], {
  cwd: dir,
  encoding: 'utf8',
  timeout: 120_000,
});
rmSync(dir, { recursive: true, force: true });
process.stdout.write(run.stdout);
process.stderr.write(run.stderr);

/** A count from the TAP trailer (`# pass 12`); NaN when the runner printed none. */
const count = (name) => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(run.stdout)?.[1] ?? Number.NaN);
const summary = {
  node: process.version,
  numPassedTests: count('pass'),
  // A test the runner cancelled (its promise never settled) did not pass: it counts as failed.
  numFailedTests: count('fail') + count('cancelled'),
  numPendingTests: count('skipped'),
  numTodoTests: count('todo'),
};
const counted = [summary.numPassedTests, summary.numFailedTests, summary.numPendingTests, summary.numTodoTests];
const ran = counted.every(Number.isInteger) && summary.numPassedTests > 0;
if (values.report !== undefined) {
  mkdirSync(dirname(resolve(values.report)), { recursive: true });
  writeFileSync(values.report, JSON.stringify(summary));
}
console.log(
  `package tests on node ${process.version}: ${summary.numPassedTests} passed, ${summary.numFailedTests} failed, ` +
    `${summary.numPendingTests + summary.numTodoTests} skipped (${files.length} files)`,
);
if (run.status !== 0 || !ran || summary.numFailedTests !== 0) {
  console.error(`package tests FAILED (runner exit ${run.status}${run.error ? `, ${run.error.message}` : ''})`);
  process.exit(1);
}
