import { mkdirSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { pruneUnused } from '../../scripts/pack.mjs';

const HOUR_MS = 3_600_000;
let cache: string;

/** A finished entry whose pack.json was last read `ageMs` before `now`. */
function entry(name: string, now: number, ageMs: number, finished = true): string {
  const dir = join(cache, name);
  mkdirSync(dir, { recursive: true });
  const stamped = finished ? join(dir, 'pack.json') : dir;
  if (finished) writeFileSync(stamped, '{"format":2}');
  const at = new Date(now - ageMs);
  utimesSync(stamped, at, at);
  return dir;
}

afterEach(() => rmSync(cache, { recursive: true, force: true }));

describe("the pack cache's pruning", () => {
  it("keeps another worktree's entry read within the hour, and the entry being packed", () => {
    cache = mkdtempSync(join(tmpdir(), 'resilix-pack-cache-'));
    const now = Date.now();
    const keep = entry('current', now, 2 * HOUR_MS);
    entry('other-worktree', now, 60_000);
    entry('stale', now, 2 * HOUR_MS);
    entry('crashed-pack', now, 2 * HOUR_MS, false);
    entry('locked', now, 2 * HOUR_MS);
    mkdirSync(join(cache, 'locked.lock'));

    pruneUnused(cache, keep, now);

    expect(readdirSync(cache).sort()).toEqual(['current', 'locked', 'locked.lock', 'other-worktree']);
  });
});
