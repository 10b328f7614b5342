#!/usr/bin/env node
// Packs the package as `npm publish` would (its `prepack` builds dist/), once per state of the
// files that go into it, and unpacks the tarball where tests can install it from:
//
//   <cache>/<hash>/resilix-<version>.tgz         the tarball
//   <cache>/<hash>/node_modules/resilix/         the tarball, unpacked: what a user's install holds
//
// <cache> is node_modules/.cache/resilix-pack; <hash> covers src/, the build configuration and every
// shipped file, so an unchanged tree is packed once, and tests in several workers share one pack
// (the first takes a lock, the others wait for it). Prints one JSON line: { dir, tarball,
// packageDir, files }. `--force` packs again even when the cache is current.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SHIPPED_FOLDERS } from './package-files.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CACHE = join(ROOT, 'node_modules/.cache/resilix-pack');
const LOCK_WAIT_MS = 180_000; // ours: a cold build and pack takes about 10 s on a busy 2-core machine
// ours: an entry read within the hour may belong to another worktree sharing this node_modules, its
// tests still running; the full suite takes about 4 minutes, so an hour leaves a wide margin.
const PRUNE_UNUSED_MS = 3_600_000;

function filesUnder(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? filesUnder(path) : [path];
  });
}

/** A hash of everything that decides the tarball's content. */
export function sourceHash() {
  const inputs = [
    ...filesUnder(join(ROOT, 'src')),
    ...SHIPPED_FOLDERS.flatMap(([folder]) => filesUnder(join(ROOT, folder))),
    ...['package.json', 'tsup.config.ts', 'tsconfig.json', 'README.md', 'LICENSE'].map((f) => join(ROOT, f)),
  ].sort();
  const hash = createHash('sha256');
  for (const path of inputs) {
    hash.update(relative(ROOT, path));
    hash.update('\0');
    hash.update(readFileSync(path));
    hash.update('\0');
  }
  return hash.digest('hex').slice(0, 16);
}

function sleep(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Packs of older trees are of no further use once no one has read them for PRUNE_UNUSED_MS: a
 * worktree whose node_modules links to this one's packs its own tree, and its tests may still be
 * reading that entry when this checkout packs. Entries being packed (a lock beside them) are kept.
 */
export function pruneUnused(cache, keep, now = Date.now()) {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    if (path === keep || name.endsWith('.lock') || existsSync(`${path}.lock`)) continue;
    const lastUse = lastUseOf(path);
    // Renamed aside first, so no reader finds a half-deleted entry at its name, and two pruners never
    // delete one entry twice (the second rename fails and is let be).
    if (lastUse !== undefined && now - lastUse > PRUNE_UNUSED_MS) {
      const aside = `${path}.pruned-${process.pid}`;
      try {
        renameSync(path, aside);
      } catch (error) {
        if (error.code === 'ENOENT') continue;
        throw error;
      }
      rmSync(aside, { recursive: true, force: true });
    }
  }
}

/** When the entry at `path` was last read (its pack.json, or the folder of an unfinished pack); undefined once gone. */
function lastUseOf(path) {
  try {
    return statSync(join(path, 'pack.json')).mtimeMs;
  } catch (error) {
    if (error.code !== 'ENOENT') throw error;
  }
  try {
    return statSync(path).mtimeMs;
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
}

function pack(dir) {
  pruneUnused(CACHE, dir);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  // stdout is npm's JSON; the build's own output goes to stderr, shown only on failure.
  const out = execFileSync('npm', ['pack', '--json', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_loglevel: 'warn' },
  });
  const [packed] = JSON.parse(out.slice(out.search(/^\[$/m)));
  const tarball = join(dir, packed.filename);
  const packageDir = join(dir, 'node_modules/resilix');
  mkdirSync(packageDir, { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', packageDir, '--strip-components=1']);
  const record = { format: 2, tarball: packed.filename, files: packed.files.map((f) => f.path).sort() };
  writeFileSync(join(dir, 'pack.json'), JSON.stringify(record));
  return entry(dir, record);
}

/**
 * The entry's paths, made from `dir` on every read and never stored: a checkout whose node_modules is a
 * symlink to another's reads the other's entry, and its stored absolute paths named that other checkout.
 */
function entry(dir, record) {
  const packageDir = join(dir, 'node_modules/resilix');
  return { dir, tarball: join(dir, record.tarball), packageDir, files: record.files };
}

/** The finished entry in `dir`, or undefined (none, or one written in an older format: packed again). */
function finished(dir) {
  const done = join(dir, 'pack.json');
  // Its modification time records the last use, which pruneUnused reads. The stamp comes first: an
  // entry pruned before it (unread for an hour until then) is packed again, and one stamped is kept.
  const now = new Date();
  let record;
  try {
    utimesSync(done, now, now);
    record = JSON.parse(readFileSync(done, 'utf8'));
  } catch (error) {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  }
  return record.format === 2 ? entry(dir, record) : undefined;
}

export function packOnce({ force = false } = {}) {
  const dir = join(CACHE, sourceHash());
  const lock = `${dir}.lock`;
  const until = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    const cached = force ? undefined : finished(dir);
    if (cached !== undefined) return cached;
    mkdirSync(CACHE, { recursive: true });
    try {
      mkdirSync(lock);
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const owner = Number(readFileSync(join(lock, 'pid'), { encoding: 'utf8', flag: 'a+' }) || 0);
      const age = Date.now() - statSync(lock).mtimeMs;
      // A lock left by a process that died (or that never wrote its pid) is taken over.
      if ((owner > 0 && !alive(owner)) || (owner === 0 && age > 5_000)) rmSync(lock, { recursive: true, force: true });
      else if (Date.now() > until)
        throw new Error(`resilix pack: still locked by pid ${owner} after ${LOCK_WAIT_MS} ms`);
      else sleep(100);
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
      const packedMeanwhile = force ? undefined : finished(dir);
      return packedMeanwhile ?? pack(dir);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { force: { type: 'boolean', default: false } } });
  try {
    console.log(JSON.stringify(packOnce({ force: values.force })));
  } catch (error) {
    // execFileSync's error carries the build's output: show it, it says what broke.
    if (error.stderr) process.stderr.write(error.stderr);
    if (error.stdout) process.stderr.write(error.stdout);
    console.error(error.message);
    process.exit(1);
  }
}
