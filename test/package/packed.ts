import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

/** The package as `npm pack` made it (prepack built dist/), and unpacked as an install holds it. */
export interface Packed {
  /** Scratch space next to the unpacked package: a project here resolves `resilix` to it. */
  readonly dir: string;
  readonly tarball: string;
  /** `<dir>/node_modules/resilix`: the tarball's content. */
  readonly packageDir: string;
  /** Every path in the tarball, sorted. */
  readonly files: readonly string[];
}

let cached: Packed | undefined;

/**
 * Packs the working tree once per state of its sources (scripts/pack.mjs caches by content hash
 * and locks, so test files in parallel workers share one build). The first call in a run may take
 * about 10 s: the build (tsup) runs in npm's `prepack`, as it does on `npm publish`.
 */
export function packed(): Packed {
  cached ??= JSON.parse(
    execFileSync(process.execPath, [join(ROOT, 'scripts/pack.mjs')], { cwd: ROOT, encoding: 'utf8', timeout: 240_000 }),
  ) as Packed;
  return cached;
}
