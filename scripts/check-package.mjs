#!/usr/bin/env node
// Packs the library as npm would publish it (its `prepack` builds dist/), then checks the tarball
// with publint and @arethetypeswrong/cli (ESM + CJS + types for both conditions).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'resilix-pack-'));
const run = (cmd, args) => execFileSync(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
try {
  // The build's output (prepack) comes first on stdout; npm's JSON is the array after it.
  const output = run('npm', ['pack', '--json', '--pack-destination', dir]);
  const packed = JSON.parse(output.slice(output.search(/^\[$/m)));
  const tarball = join(dir, packed[0].filename);
  const files = packed[0].files.map((f) => f.path);
  console.log(`packed ${packed[0].filename}: ${files.length} files, ${packed[0].size} bytes`);
  for (const required of ['dist/index.js', 'dist/index.cjs', 'dist/index.d.ts', 'dist/index.d.cts', 'package.json']) {
    if (!files.includes(required)) throw new Error(`the tarball lacks ${required}`);
  }
  const pkg = JSON.parse(run('node', ['-p', 'JSON.stringify(require("./package.json"))']));
  if (Object.keys(pkg.dependencies ?? {}).length > 0) throw new Error('resilix ships with zero runtime dependencies');
  console.log(run('npx', ['--no-install', 'publint', 'run', tarball, '--strict']));
  console.log(run('npx', ['--no-install', 'attw', tarball, '--format', 'table-flipped']));
  console.log('package checks passed');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
