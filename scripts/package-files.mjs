// What the published tarball must hold, file for file: the build (ESM, CJS, their declarations and
// source maps), the guides, the decision records, the example recipes a user copies, and the
// three files npm always adds. Used by the tarball test and by scripts/check-fresh-clone.mjs.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const DIST_FILES = Object.freeze([
  'dist/index.cjs',
  'dist/index.cjs.map',
  'dist/index.d.cts',
  'dist/index.d.ts',
  'dist/index.js',
  'dist/index.js.map',
]);

/** Folders shipped as-is, and the one file type each ships (docs/sim/ plots stay in the repository). */
export const SHIPPED_FOLDERS = Object.freeze([
  ['docs', '.md'],
  ['adr', '.md'],
  ['examples', '.ts'],
]);

/** The sorted list of paths (relative, `/`-separated) the tarball of the tree at `root` must hold. */
export function expectedPackageFiles(root) {
  const shipped = SHIPPED_FOLDERS.flatMap(([folder, ext]) =>
    readdirSync(join(root, folder))
      .filter((name) => name.endsWith(ext))
      .map((name) => `${folder}/${name}`),
  );
  return [...DIST_FILES, ...shipped, 'LICENSE', 'README.md', 'package.json'].sort();
}
