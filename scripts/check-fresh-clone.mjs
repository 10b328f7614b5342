#!/usr/bin/env node
// Packs the package from a fresh clone, as a release from a clean checkout would: git clone of
// this repository's HEAD into a temporary directory, `npm ci`, `npm pack` (its prepack builds),
// then checks that the tarball holds exactly the expected files (scripts/package-files.mjs) and
// that a project with only the tarball installed imports and requires it. About 30 s (npm ci
// from the cache dominates), so CI runs it (.ci/run) and the vitest suite does not; the suite's
// test/package/tarball.test.ts checks the same file list on the working tree's pack.
//
//   node scripts/check-fresh-clone.mjs [--commit <rev>] [--keep]
//
// Uncommitted changes are not in a clone: it checks HEAD (or `--commit`), and says which commit. Exits 1 on any
// difference, naming the missing and the unexpected files.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { expectedPackageFiles } from './package-files.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { commit: { type: 'string' }, keep: { type: 'boolean', default: false } },
});
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });

const work = mkdtempSync(join(tmpdir(), 'resilix-fresh-clone-'));
const clone = join(work, 'clone');
let failed = false;
try {
  run('git', ['clone', '--quiet', '--no-hardlinks', ROOT, clone], work);
  if (values.commit !== undefined) run('git', ['checkout', '--quiet', values.commit], clone);
  const commit = run('git', ['rev-parse', '--short', 'HEAD'], clone).trim();
  const dirty = run('git', ['status', '--porcelain'], ROOT).trim() !== '';
  console.log(
    `fresh clone of ${commit}${dirty ? ' (the working tree has uncommitted changes; they are not checked)' : ''}`,
  );

  const started = Date.now();
  run('npm', ['ci', '--no-audit', '--no-fund'], clone);
  const out = join(work, 'out');
  mkdirSync(out);
  const packOutput = run('npm', ['pack', '--json', '--pack-destination', out], clone);
  const [packed] = JSON.parse(packOutput.slice(packOutput.search(/^\[$/m)));
  console.log(
    `npm ci + npm pack: ${((Date.now() - started) / 1000).toFixed(1)} s; ${packed.filename}, ${packed.entryCount} files, ${packed.size} bytes`,
  );

  const files = packed.files.map((f) => f.path).sort();
  const expected = expectedPackageFiles(clone);
  const missing = expected.filter((f) => !files.includes(f));
  const unexpected = files.filter((f) => !expected.includes(f));
  if (missing.length > 0 || unexpected.length > 0) {
    failed = true;
    console.error(
      `the tarball differs from scripts/package-files.mjs:\n  missing: ${missing.join(', ') || 'none'}\n  unexpected: ${unexpected.join(', ') || 'none'}`,
    );
  } else {
    console.log(`the tarball holds exactly the ${expected.length} expected files`);
  }

  // A project with nothing but the tarball installed: import and require both load.
  const consumer = join(work, 'consumer');
  mkdirSync(join(consumer, 'node_modules/resilix'), { recursive: true });
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  run(
    'tar',
    ['-xzf', join(out, packed.filename), '-C', join(consumer, 'node_modules/resilix'), '--strip-components=1'],
    work,
  );
  const loaded = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "import { createRequire } from 'node:module'; import * as esm from 'resilix'; const cjs = createRequire(import.meta.url)('resilix'); " +
        "const p = esm.pipeline(esm.limiter()); console.log(Object.keys(esm).length, Object.keys(cjs).length, await p.execute(() => 'ok'));",
    ],
    consumer,
  ).trim();
  const [esmCount, cjsCount, result] = loaded.split(' ');
  if (esmCount !== cjsCount || Number(esmCount) < 30 || result !== 'ok') {
    failed = true;
    console.error(`the installed tarball did not load as expected: ${loaded}`);
  } else {
    console.log(`installed from the tarball: import and require give the same ${esmCount} exports; a call ran`);
  }
} catch (error) {
  failed = true;
  if (error.stdout) process.stderr.write(error.stdout);
  if (error.stderr) process.stderr.write(error.stderr);
  console.error(error.message);
} finally {
  if (values.keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}
if (failed) {
  console.error('fresh-clone package check FAILED');
  process.exit(1);
}
console.log('fresh-clone package check passed');
