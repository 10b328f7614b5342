/**
 * Loads resilix for the benchmarks as users get it: src/ built by tsup with the production
 * settings (tsup.config.ts: ESM, es2022, platform neutral), into a scratch directory.
 *
 * Why not import src/ directly: tsx transpiles with esbuild's `keepNames`, which wraps every
 * closure creation in `__name(fn, "...")` (an Object.defineProperty on each new function). For
 * per-call closures that costs microseconds and kilobytes per call that no published build has.
 *
 * `--entry dist` (or RESILIX_BENCH_ENTRY=dist) measures the existing dist/index.js instead, and
 * RESILIX_BENCH_SRC=<dir> builds another copy of src/ (to measure a proposed change side by side);
 * RESILIX_BENCH_BUILT=<dir> imports a build made already (a parent process's, for its children).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'tsup';

/**
 * The public surface the benchmark uses. The limiter and breaker are read from their own modules'
 * public surfaces (src/limiter/index.ts, src/breaker/index.ts), which src/index.ts re-exports.
 */
export type Resilix = typeof import('../src/index') &
  Pick<typeof import('../src/limiter/index'), 'limiter'> &
  Pick<typeof import('../src/breaker/index'), 'breaker'>;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export async function loadResilix(
  entry: 'src' | 'dist' = 'src',
  srcOverride?: string,
): Promise<{ module: Resilix; file: string }> {
  if (entry === 'dist') {
    const file = join(root, 'dist', 'index.js');
    const module = (await import(pathToFileURL(file).href)) as Resilix;
    if (typeof module.limiter !== 'function' || typeof module.breaker !== 'function') {
      throw new Error('dist/index.js has no limiter or breaker export; rebuild (npm run build) or use --entry src');
    }
    return { module, file };
  }
  // A parent process that built already (bench/allocation-guard.ts) hands its build to its children.
  const built = process.env.RESILIX_BENCH_BUILT;
  if (built !== undefined && built !== '') return { module: await importBuild(built), file: `the build in ${built}` };
  const srcDir = resolve(srcOverride ?? process.env.RESILIX_BENCH_SRC ?? join(root, 'src'));
  const outDir = await buildResilix(srcDir);
  return { module: await importBuild(outDir), file: `${srcDir} built into ${outDir}` };
}

/** Builds `srcDir` into a scratch directory (removed when this process exits); returns the directory. */
export async function buildResilix(srcDir: string = join(root, 'src')): Promise<string> {
  const outDir = mkdtempSync(join(tmpdir(), 'resilix-bench-'));
  process.once('exit', () => rmSync(outDir, { recursive: true, force: true }));
  await build({
    entry: {
      index: join(srcDir, 'index.ts'),
      limiter: join(srcDir, 'limiter', 'index.ts'),
      breaker: join(srcDir, 'breaker', 'index.ts'),
    },
    outDir,
    format: ['esm'],
    target: 'es2022',
    platform: 'neutral',
    treeshake: true,
    splitting: true,
    dts: false,
    sourcemap: true,
    clean: false,
    silent: true,
    config: false,
    tsconfig: join(root, 'tsconfig.json'),
    // .mjs: tsx leaves native ESM alone. A .js file outside a "type": "module" package would be
    // re-transpiled by tsx, with keepNames, which is the very cost this loader exists to avoid.
    outExtension: () => ({ js: '.mjs' }),
  });
  return outDir;
}

async function importBuild(outDir: string): Promise<Resilix> {
  // ESM code splitting: the three entries share one copy of the core (run-call, clock, errors).
  const [index, limiterModule, breakerModule] = await Promise.all(
    ['index.mjs', 'limiter.mjs', 'breaker.mjs'].map((name) => import(pathToFileURL(join(outDir, name)).href)),
  );
  return { ...limiterModule, ...breakerModule, ...index } as Resilix;
}
