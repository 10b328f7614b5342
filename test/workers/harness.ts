import { execFileSync } from 'node:child_process';
import { build } from 'esbuild';
import { Miniflare, type WorkerOptions as MiniflareWorkerOptions } from 'miniflare';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Which build of the library a Worker gets: bundled from src/, or the packed tarball's dist/. */
export type LibraryBuild = 'src' | 'dist';

/** The packed tarball's ES module build (scripts/pack.mjs: one pack per source state). */
function packedModule(): string {
  const pack = JSON.parse(
    execFileSync(process.execPath, [join(root, 'scripts/pack.mjs')], { cwd: root, encoding: 'utf8', timeout: 240_000 }),
  ) as { packageDir: string };
  return join(pack.packageDir, 'dist/index.js');
}

/**
 * The library as a Worker loads it: one ES module bundled from src/index.ts with the package's
 * own build settings (platform neutral, es2022, no Node shims). Modules not yet exported from
 * src/index.ts are re-exported next to it; an explicit export shadows a star export, so this
 * keeps working once they are.
 */
const LIBRARY_ENTRY = [
  `export * from ${JSON.stringify(join(root, 'src/index.ts'))};`,
  `export { resilientFetch } from ${JSON.stringify(join(root, 'src/fetch/fetch.ts'))};`,
  `export { limiter } from ${JSON.stringify(join(root, 'src/limiter/limiter.ts'))};`,
  `export { KeyRegistry } from ${JSON.stringify(join(root, 'src/registry/key-registry.ts'))};`,
].join('\n');

export async function bundleLibrary(outfile: string): Promise<string> {
  await build({
    stdin: { contents: LIBRARY_ENTRY, resolveDir: root, loader: 'ts', sourcefile: 'resilix-entry.ts' },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    outfile,
    logLevel: 'silent',
  });
  return readFile(outfile, 'utf8');
}

/** The workerd compatibility date every Worker here runs at (the client in front included). */
const COMPATIBILITY_DATE = '2025-07-01';

export interface WorkerHandle {
  mf: Miniflare;
  /** The bundled library's source, as the Worker loaded it. */
  library: string;
  /** workerd's stderr lines so far, still forwarded to the console. */
  stderr: string[];
  dispose(): Promise<void>;
}

export interface WorkerOptions {
  /** Compatibility flags beyond the date's (e.g. `enable_request_signal`). */
  compatibilityFlags?: string[];
  /**
   * A second fixture put in front as the Worker that `dispatchFetch` reaches, with the first as its
   * service binding `INNER`: a client inside workerd, which can cancel a request (a client going
   * away over HTTP is not noticed by local workerd until it writes the response).
   */
  client?: string;
}

/**
 * Starts workerd (through Miniflare) on a Worker script from test/workers/fixtures, next to the
 * library as `./resilix.js`: freshly bundled from src/, or the packed dist/index.js copied as it
 * ships. No `nodejs_compat` flag: Node globals do not exist.
 */
export async function startWorker(
  fixture: string,
  bindings: Record<string, string>,
  build: LibraryBuild = 'src',
  options: WorkerOptions = {},
): Promise<WorkerHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'resilix-workers-'));
  let library: string;
  if (build === 'src') {
    library = await bundleLibrary(join(dir, 'resilix.js'));
  } else {
    await copyFile(packedModule(), join(dir, 'resilix.js'));
    library = await readFile(join(dir, 'resilix.js'), 'utf8');
  }
  const scriptPath = join(dir, 'worker.js');
  await copyFile(join(root, 'test/workers/fixtures', fixture), scriptPath);
  const worker = {
    modules: true,
    modulesRoot: dir,
    modulesRules: [{ type: 'ESModule' as const, include: ['**/*.js'] }],
    scriptPath,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: options.compatibilityFlags ?? [],
    bindings,
  };
  return launch(dir, worker, library, options);
}

/**
 * Starts Miniflare on `worker` (its files in `dir`, removed on dispose), alone or, with
 * `options.client`, behind that fixture as the Worker `dispatchFetch` reaches.
 */
async function launch(
  dir: string,
  worker: MiniflareWorkerOptions,
  library: string,
  options: WorkerOptions,
): Promise<WorkerHandle> {
  const stderr: string[] = [];
  const handleRuntimeStdio = (out: Readable, err: Readable): void => {
    createInterface(out).on('line', (line) => console.log(line));
    createInterface(err).on('line', (line) => {
      stderr.push(line);
      console.error(line);
    });
  };
  let mf: Miniflare;
  if (options.client === undefined) {
    mf = new Miniflare({ ...worker, handleRuntimeStdio });
  } else {
    const clientPath = join(dir, 'client.js');
    await copyFile(join(root, 'test/workers/fixtures', options.client), clientPath);
    mf = new Miniflare({
      handleRuntimeStdio,
      workers: [
        {
          name: 'client',
          modules: true,
          modulesRoot: dir,
          scriptPath: clientPath,
          compatibilityDate: COMPATIBILITY_DATE,
          serviceBindings: { INNER: 'inner' },
        },
        { name: 'inner', ...worker },
      ],
    });
  }
  await mf.ready;
  return {
    mf,
    library,
    stderr,
    async dispose() {
      await mf.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Bundles a TypeScript Worker (an example) with its imports into one module and starts it, with
 * the same options as startWorker. Its `import ... from 'resilix'` is src/index.ts, or the packed
 * dist/index.js.
 */
export async function startBundledWorker(
  entry: string,
  bindings: Record<string, string> = {},
  library: LibraryBuild = 'src',
  options: WorkerOptions = {},
): Promise<WorkerHandle> {
  const dir = await mkdtemp(join(tmpdir(), 'resilix-workers-'));
  const scriptPath = join(dir, 'worker.js');
  await build({
    entryPoints: [join(root, entry)],
    alias: { resilix: library === 'src' ? join(root, 'src/index.ts') : packedModule() },
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    outfile: scriptPath,
    logLevel: 'silent',
  });
  const bundled = await readFile(scriptPath, 'utf8');
  const worker = {
    modules: true,
    modulesRoot: dir,
    scriptPath,
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: options.compatibilityFlags ?? [],
    bindings,
  };
  return launch(dir, worker, bundled, options);
}

/**
 * A scripted upstream on loopback for the Worker to call:
 *   /delay/<ms>          200 "ok" after <ms>
 *   /status/<code>       that status; `?retry-after=<value>` sets the header
 *   /hang                never answers; counts the connections the client closed on it
 * It counts concurrent requests (the peak is what a shared limiter must bound).
 */
export interface ScriptedUpstream {
  url: string;
  /** Requests open now (answered or closed ones are not). */
  readonly concurrent: number;
  readonly peakConcurrent: number;
  readonly served: number;
  readonly abandoned: number;
  reset(): void;
  close(): Promise<void>;
}

export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  let current = 0;
  let peak = 0;
  let served = 0;
  let abandoned = 0;
  const sockets = new Set<import('node:net').Socket>();
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const url = new URL(req.url ?? '/', 'http://upstream');
    current++;
    peak = Math.max(peak, current);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      current--;
    };
    res.on('close', () => {
      if (!res.writableFinished) abandoned++;
      finish();
    });
    const [, route, arg] = url.pathname.split('/');
    if (route === 'delay') {
      const timer = setTimeout(() => {
        served++;
        res.end('ok');
      }, Number(arg));
      res.on('close', () => clearTimeout(timer));
    } else if (route === 'status') {
      const retryAfter = url.searchParams.get('retry-after');
      if (retryAfter !== null) res.setHeader('retry-after', retryAfter);
      res.statusCode = Number(arg);
      served++;
      res.end(`status ${arg}`);
    } else if (route === 'hang') {
      // Never answers: only the client closing the connection ends it.
    } else {
      res.statusCode = 404;
      res.end('no such route');
    }
  };
  const server: Server = createServer(handle);
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get concurrent() {
      return current;
    },
    get peakConcurrent() {
      return peak;
    },
    get served() {
      return served;
    },
    get abandoned() {
      return abandoned;
    },
    reset() {
      peak = current;
      served = 0;
      abandoned = 0;
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((done) => server.close(() => done()));
    },
  };
}

/** Polls `condition` (a real-time wait for real I/O in another process), failing after `ms`. */
export async function eventually(condition: () => boolean, ms = 2_000): Promise<void> {
  const until = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > until) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
