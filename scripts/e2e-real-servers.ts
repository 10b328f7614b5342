/**
 * The real servers of `npm run e2e:real` (scripts/e2e-real.ts): gunicorn with sync workers on a
 * 20 ms sleep, PostgreSQL in a throwaway cluster, and the demo's loopback upstream. Each starts on
 * 127.0.0.1 on a free port, in its own temporary directory, and registers its stop with a
 * `Cleanup`, which runs on success, on failure and on SIGINT/SIGTERM.
 *
 * What is missing is installed (Debian packages, with apt-get, as root); what cannot be installed
 * or started throws a `HarnessError` naming what and why. Nothing is skipped.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  accessSync,
  chmodSync,
  chownSync,
  constants,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';

/** The harness could not do its job (install, start, measure): not a criterion, a broken run. */
export class HarnessError extends Error {
  override readonly name = 'HarnessError';
}

interface CleanupStep {
  readonly name: string;
  readonly run: () => Promise<void>;
  /** What to do when the process is exiting and nothing async can run any more. */
  readonly runSync: () => void;
}

/** Stops what was started, newest first, exactly once each. */
export class Cleanup {
  private readonly steps: CleanupStep[] = [];

  add(name: string, run: () => Promise<void>, runSync: () => void): () => Promise<void> {
    const step: CleanupStep = { name, run, runSync };
    this.steps.push(step);
    return async () => {
      const at = this.steps.indexOf(step);
      if (at < 0) return;
      this.steps.splice(at, 1);
      await step.run();
    };
  }

  async runAll(log: (line: string) => void): Promise<void> {
    while (this.steps.length > 0) {
      const step = this.steps.pop()!;
      try {
        await step.run();
      } catch (error) {
        log(`cleanup: ${step.name} failed (${String(error)}); forcing it`);
        try {
          step.runSync();
        } catch {}
      }
    }
  }

  /** For process 'exit': kills and deletes synchronously whatever is still there. */
  runAllSync(): void {
    while (this.steps.length > 0) {
      try {
        this.steps.pop()!.runSync();
      } catch {}
    }
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function onPath(command: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir !== '' && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

const PG_PROGRAMS = ['initdb', 'pg_ctl', 'postgres'] as const;

/**
 * The directory holding initdb, pg_ctl and postgres together: where pg_ctl on PATH really lives
 * (Debian links /usr/local/bin or /usr/bin entries into /usr/lib/postgresql/N/bin), what
 * pg_config says, then the newest /usr/lib/postgresql/N/bin.
 */
export function findPostgresBin(): string | undefined {
  const candidates: string[] = [];
  const pgCtl = onPath('pg_ctl');
  if (pgCtl !== undefined) candidates.push(dirname(realpathSync(pgCtl)));
  const pgConfig = onPath('pg_config');
  if (pgConfig !== undefined) {
    try {
      candidates.push(execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8' }).trim());
    } catch {}
  }
  try {
    const versions = readdirSync('/usr/lib/postgresql')
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    for (const v of versions) candidates.push(join('/usr/lib/postgresql', v, 'bin'));
  } catch {}
  return candidates.find((dir) => PG_PROGRAMS.every((p) => isExecutable(join(dir, p))));
}

export interface Installed {
  readonly gunicorn: string;
  readonly postgresBin: string;
  readonly nginx: string;
  readonly phpFpm: string;
}

function findGunicorn(): string | undefined {
  return onPath('gunicorn') ?? (isExecutable('/usr/bin/gunicorn') ? '/usr/bin/gunicorn' : undefined);
}

function findNginx(): string | undefined {
  return onPath('nginx') ?? (isExecutable('/usr/sbin/nginx') ? '/usr/sbin/nginx' : undefined);
}

/** php-fpm on PATH, or Debian's versioned /usr/sbin/php-fpmX.Y (the newest). */
function findPhpFpm(): string | undefined {
  const onPathFpm = onPath('php-fpm');
  if (onPathFpm !== undefined) return onPathFpm;
  try {
    const versioned = readdirSync('/usr/sbin')
      .filter((f) => /^php-fpm\d+(\.\d+)?$/.test(f))
      .sort((a, b) => b.localeCompare(a, 'en', { numeric: true }));
    return versioned.map((f) => join('/usr/sbin', f)).find(isExecutable);
  } catch {
    return undefined;
  }
}

/** What each server needs: the Debian package that brings it, and how to find it once there. */
const NEEDED = {
  gunicorn: { pkg: 'gunicorn', find: findGunicorn, missing: 'gunicorn is still not on PATH after installing it' },
  postgresBin: {
    pkg: 'postgresql',
    find: findPostgresBin,
    missing: `no directory with ${PG_PROGRAMS.join(', ')} after installing postgresql`,
  },
  nginx: {
    pkg: 'nginx-light',
    find: findNginx,
    missing: 'nginx is neither on PATH nor /usr/sbin/nginx after installing nginx-light',
  },
  phpFpm: {
    pkg: 'php-fpm',
    find: findPhpFpm,
    missing: 'no php-fpm on PATH nor /usr/sbin/php-fpmX.Y after installing php-fpm',
  },
} as const;

/**
 * Finds gunicorn, PostgreSQL, nginx and php-fpm, installing the Debian packages that are missing (apt-get update,
 * then apt-get install -y --no-install-recommends). Not root, or no apt-get: throws with the command to run.
 */
export function ensureInstalled(log: (line: string) => void): Installed {
  const keys = Object.keys(NEEDED) as (keyof typeof NEEDED)[];
  const missing = keys.filter((k) => NEEDED[k].find() === undefined).map((k) => NEEDED[k].pkg);
  if (missing.length > 0) {
    const command = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
    const root = process.getuid?.() === 0;
    const aptGet = onPath('apt-get');
    if (!root || aptGet === undefined) {
      throw new HarnessError(
        `missing ${missing.join(' and ')} and cannot install ${root ? '(no apt-get)' : '(not root)'}: run \`${command}\``,
      );
    }
    log(`installing ${missing.join(' ')} (Debian packages): apt-get update && ${command}`);
    try {
      execFileSync(aptGet, ['update'], { stdio: 'inherit' });
      execFileSync(aptGet, ['install', '-y', '--no-install-recommends', ...missing], {
        stdio: 'inherit',
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
    } catch (error) {
      throw new HarnessError(`\`${command}\` failed: ${String(error)}`);
    }
  }
  const found = (k: keyof typeof NEEDED): string => {
    const path = NEEDED[k].find();
    if (path === undefined) throw new HarnessError(NEEDED[k].missing);
    return path;
  };
  return {
    gunicorn: found('gunicorn'),
    postgresBin: found('postgresBin'),
    nginx: found('nginx'),
    phpFpm: found('phpFpm'),
  };
}

/** A free TCP port on 127.0.0.1 (bound to 0, read, released). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The last few KB a child wrote, for the error message when it does not start. */
function tail(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-8_192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose parent is `pid` (from /proc/N/stat: pid (comm) state ppid ...). */
export function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[1]) === pid) children.push(Number(entry));
    } catch {}
  }
  return children;
}

async function waitFor(what: string, timeoutMs: number, check: () => boolean, detail: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!check()) {
    if (performance.now() > deadline) throw new HarnessError(`${what} (waited ${timeoutMs} ms)\n${detail()}`);
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------
// gunicorn

/** A WSGI app of one endpoint: sleep, then 200 "ok". Sync workers serve one request at a time. */
const WSGI_APP = `import time

SLEEP_S = float(__import__("os").environ["E2E_SLEEP_MS"]) / 1000.0


def app(environ, start_response):
    time.sleep(SLEEP_S)
    body = b"ok"
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
`;

export interface Gunicorn {
  readonly url: string;
  readonly masterPid: number;
  /** Live worker processes (the master's children). */
  workers(): number;
  /**
   * Moves to `n` workers one signal at a time (SIGTTIN adds one, SIGTTOU removes one: gunicorn's
   * documented signals), waiting for each to take effect; a signal that arrives while the last
   * one is still pending merges with it, so one goes per step.
   */
  setWorkers(n: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startGunicorn(
  gunicornPath: string,
  options: { workers: number; sleepMs: number },
  cleanup: Cleanup,
): Promise<Gunicorn> {
  const dir = mkdtempSync(join(tmpdir(), 'resilix-gunicorn-'));
  writeFileSync(join(dir, 'app.py'), WSGI_APP);
  const child = spawn(
    gunicornPath,
    [
      '--workers',
      String(options.workers),
      '--worker-class',
      'sync',
      '--bind',
      '127.0.0.1:0',
      '--backlog',
      '2048',
      '--chdir',
      dir,
      '--worker-tmp-dir',
      dir,
      '--log-level',
      'info',
      'app:app',
    ],
    {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, E2E_SLEEP_MS: String(options.sleepMs), PYTHONDONTWRITEBYTECODE: '1' },
    },
  );
  const output = tail(child);
  const pid = child.pid;
  if (pid === undefined) throw new HarnessError(`gunicorn did not start (${gunicornPath})`);
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  const stopSync = () => {
    try {
      if (!exited) process.kill(-pid, 'SIGKILL');
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = cleanup.add(
    'gunicorn',
    async () => {
      if (!exited) {
        process.kill(-pid, 'SIGTERM');
        const deadline = performance.now() + 10_000;
        while (!exited && performance.now() < deadline) await sleep(50);
        if (!exited) process.kill(-pid, 'SIGKILL');
      }
      rmSync(dir, { recursive: true, force: true });
    },
    stopSync,
  );
  let port = 0;
  await waitFor(
    'gunicorn did not report its address',
    15_000,
    () => {
      if (exited) throw new HarnessError(`gunicorn exited while starting:\n${output()}`);
      const m = /Listening at: http:\/\/127\.0\.0\.1:(\d+)/.exec(output());
      if (m !== null) port = Number(m[1]);
      return port > 0;
    },
    output,
  );
  const workers = () => childrenOf(pid).length;
  await waitFor(
    `gunicorn did not boot ${options.workers} workers`,
    15_000,
    () => workers() === options.workers,
    output,
  );
  const url = `http://127.0.0.1:${port}/`;
  return {
    url,
    masterPid: pid,
    workers,
    async setWorkers(n: number) {
      while (workers() !== n) {
        const before = workers();
        process.kill(pid, before < n ? 'SIGTTIN' : 'SIGTTOU');
        await waitFor(
          `gunicorn did not go from ${before} workers towards ${n}`,
          5_000,
          () => workers() !== before,
          output,
        );
      }
    },
    stop,
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL

export interface Postgres {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  stop(): Promise<void>;
}

/** Who runs the cluster: PostgreSQL refuses to run as root, so root hands it to `postgres` (or `nobody`). */
function clusterOwner(): { uid: number; gid: number; name: string } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ['postgres', 'nobody']) {
    try {
      const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim());
      return { uid, gid, name };
    } catch {}
  }
  throw new HarnessError('running as root, and neither a postgres nor a nobody user exists to own the cluster');
}

/**
 * initdb into a temporary directory, then pg_ctl start on a free port of 127.0.0.1 with the unix
 * socket in that directory. max_connections 220: the pool of 200 plus superuser slots.
 */
export async function startPostgres(bin: string, cleanup: Cleanup): Promise<Postgres> {
  const dir = mkdtempSync(join(tmpdir(), 'resilix-postgres-'));
  const owner = clusterOwner();
  const as = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };
  if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  const data = join(dir, 'data');
  const run = (program: string, args: string[]) =>
    execFileSync(join(bin, program), args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...as });
  const pgCtl = (args: string[]) => run('pg_ctl', ['-D', data, ...args]);
  let started = false;
  const stopSync = () => {
    if (started) {
      try {
        pgCtl(['-m', 'immediate', '-w', 'stop']);
      } catch {
        try {
          const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
          if (pid > 0) process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = cleanup.add(
    'postgres',
    async () => {
      if (started) {
        pgCtl(['-m', 'fast', '-w', '-t', '20', 'stop']);
        started = false;
      }
      rmSync(dir, { recursive: true, force: true });
    },
    stopSync,
  );
  const user = 'postgres';
  try {
    run('initdb', ['-D', data, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-sync']);
  } catch (error) {
    throw new HarnessError(`initdb failed${owner ? ` (as ${owner.name})` : ''}: ${stderrOf(error)}`);
  }
  const port = await freePort();
  // jit=off: whether PostgreSQL JIT-compiles the query depends on its cost estimate, so the calibration
  // measured a query of 10 ms (JIT compile included) at one n and 2.4 ms at the next (no JIT), and a run
  // could mix both: a bimodal service time the knee and the limiter both read as noise.
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=220 -c jit=off`;
  try {
    started = true;
    pgCtl(['-l', join(dir, 'server.log'), '-w', '-t', '30', '-o', serverOptions, 'start']);
  } catch (error) {
    let log = '';
    try {
      log = readFileSync(join(dir, 'server.log'), 'utf8').slice(-4_000);
    } catch {}
    throw new HarnessError(`pg_ctl start failed on port ${port}: ${stderrOf(error)}\n${log}`);
  }
  const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  if (!(pid > 0) || !alive(pid)) throw new HarnessError('postgres reported started but its postmaster is not running');
  return { host: '127.0.0.1', port, user, stop };
}

function stderrOf(error: unknown): string {
  const e = error as { stderr?: string; message?: string };
  return (e.stderr ?? '').trim() || (e.message ?? String(error));
}

// ---------------------------------------------------------------------------------------------
// nginx + php-fpm

/** One endpoint: sleep, then "ok". A php-fpm child serves one request at a time. */
const PHP_APP = `<?php
usleep((int) getenv('E2E_SLEEP_US'));
header('Content-Type: text/plain');
echo 'ok';
`;

export interface PhpFpm {
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * php-fpm with a static pool of `children` (each serves one request at a time; the rest wait in its socket's
 * backlog) behind nginx, which speaks HTTP to us and FastCGI to php-fpm over a unix socket: the classic PHP
 * deployment. Both run in the foreground, each in its own process group, in a temporary directory. As root, php-fpm
 * needs -R and its children run as nobody; nginx's workers run as root so that they reach the directory.
 */
export async function startPhpFpm(
  installed: Pick<Installed, 'nginx' | 'phpFpm'>,
  options: { children: number; sleepMs: number },
  cleanup: Cleanup,
): Promise<PhpFpm> {
  const dir = mkdtempSync(join(tmpdir(), 'resilix-php-fpm-'));
  chmodSync(dir, 0o755);
  const root = process.getuid?.() === 0;
  const socket = join(dir, 'php-fpm.sock');
  writeFileSync(join(dir, 'app.php'), PHP_APP);
  writeFileSync(
    join(dir, 'php-fpm.conf'),
    [
      '[global]',
      `pid = ${join(dir, 'php-fpm.pid')}`,
      `error_log = ${join(dir, 'php-fpm.log')}`,
      'daemonize = no',
      '[app]',
      ...(root ? ['user = nobody', 'group = nogroup'] : []),
      `listen = ${socket}`,
      'listen.mode = 0666',
      'listen.backlog = 2048',
      'pm = static',
      `pm.max_children = ${options.children}`,
      'clear_env = no',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  writeFileSync(
    join(dir, 'nginx.conf'),
    `${root ? 'user root;\n' : ''}daemon off;
worker_processes 1;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'nginx-error.log')} warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${join(dir, 'body')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  proxy_temp_path ${join(dir, 'proxy')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
  server {
    listen 127.0.0.1:${port} backlog=2048;
    location / {
      fastcgi_pass unix:${socket};
      fastcgi_param SCRIPT_FILENAME ${join(dir, 'app.php')};
      fastcgi_param REQUEST_METHOD $request_method;
      fastcgi_param QUERY_STRING $query_string;
      fastcgi_param SERVER_PROTOCOL $server_protocol;
    }
  }
}
`,
  );
  const spawnIn = (path: string, args: string[], env: NodeJS.ProcessEnv) =>
    spawn(path, args, { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  const children: { name: string; child: ChildProcess; output: () => string; exited: boolean }[] = [];
  const stopSync = () => {
    for (const c of children) {
      try {
        if (!c.exited && c.child.pid !== undefined) process.kill(-c.child.pid, 'SIGKILL');
      } catch {}
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const stop = cleanup.add(
    'nginx + php-fpm',
    async () => {
      for (const c of children) {
        if (!c.exited && c.child.pid !== undefined) process.kill(-c.child.pid, 'SIGTERM');
      }
      const deadline = performance.now() + 10_000;
      while (children.some((c) => !c.exited) && performance.now() < deadline) await sleep(50);
      stopSync();
    },
    stopSync,
  );
  const start = (name: string, path: string, args: string[], env: NodeJS.ProcessEnv = {}) => {
    const child = spawnIn(path, args, env);
    const entry = { name, child, output: tail(child), exited: false };
    child.once('exit', () => {
      entry.exited = true;
    });
    children.push(entry);
    return entry;
  };
  const logOf = (file: string) => () => {
    try {
      return readFileSync(join(dir, file), 'utf8').slice(-4_000);
    } catch {
      return '';
    }
  };
  const fpm = start(
    'php-fpm',
    installed.phpFpm,
    ['--nodaemonize', '--fpm-config', join(dir, 'php-fpm.conf'), '--php-ini', '/dev/null', ...(root ? ['-R'] : [])],
    { E2E_SLEEP_US: String(options.sleepMs * 1_000) },
  );
  const fpmDetail = () => `${fpm.output()}${logOf('php-fpm.log')()}`;
  await waitFor(
    `php-fpm did not start ${options.children} children`,
    15_000,
    () => {
      if (fpm.exited) throw new HarnessError(`php-fpm exited while starting:\n${fpmDetail()}`);
      return fpm.child.pid !== undefined && childrenOf(fpm.child.pid).length === options.children;
    },
    fpmDetail,
  );
  const nginx = start('nginx', installed.nginx, [
    '-p',
    dir,
    '-c',
    join(dir, 'nginx.conf'),
    '-e',
    join(dir, 'nginx-error.log'),
  ]);
  const nginxDetail = () => `${nginx.output()}${logOf('nginx-error.log')()}`;
  const url = `http://127.0.0.1:${port}/`;
  let answered = false;
  let probing = false;
  const probe = () => {
    probing = true;
    fetch(url, { signal: AbortSignal.timeout(1_000) })
      .then(async (r) => {
        answered = r.status === 200 && (await r.text()) === 'ok';
      })
      .catch(() => {})
      .finally(() => {
        probing = false;
      });
  };
  await waitFor(
    `nginx + php-fpm did not answer 200 "ok" on ${url}`,
    15_000,
    () => {
      if (nginx.exited) throw new HarnessError(`nginx exited while starting:\n${nginxDetail()}`);
      if (fpm.exited) throw new HarnessError(`php-fpm exited:\n${fpmDetail()}`);
      if (!answered && !probing) probe();
      return answered;
    },
    () => `${nginxDetail()}\n${fpmDetail()}`,
  );
  return { url, stop };
}
