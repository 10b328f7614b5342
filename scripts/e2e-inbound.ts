/**
 * `npm run e2e:inbound`: issue 14's second trial, re-run the way its reporter ran it. An inbound
 * `node:http` app calls its upstream through `resilientFetch(new KeyRegistry({ create: () =>
 * limiter() }))` and answers 503 with Retry-After when resilix sheds; 100 connections hammer it from
 * its first second. The issue saw the limit learn its baseline under load, climb to 36 against a
 * capacity of 8 and cycle 6..26 (docs/real-servers.md, "The inbound app").
 *
 * Three processes, as in production: the load (100 closed-loop connections; a 503 brings its
 * connection back 10 ms later without reading Retry-After, as a load tool does), the app (this
 * process, with the limiter), and the upstream (demo/upstream.ts in a process of its own: C calls at
 * a time, a FIFO beyond; it counts its own in-flight).
 *
 * For each upstream: the no-load latency (1 connection, 5 s); the goodput of a fixed cap at C
 * (100 connections, 15 s, counted from 5 s): what C calls at once serve on this machine; then the
 * defaults from a cold start (100 connections, 60 s). Criteria, from 20 s to the end (issue 14's
 * cold start and real-server bounds): the upstream's own in-flight mean <= 1.5 C; served upstream
 * p90 (time inside fn, as the limiter measures it) <= 2x no-load p90; goodput >= 0.85 x the fixed
 * cap's; limit median in [0.7, 2] x C.
 *
 *   npm run e2e:inbound                  every upstream (about 5 minutes)
 *   npx tsx scripts/e2e-inbound.ts 8x50  one upstream: capacity 8, 50 ms
 *   E2E_TRACE=1 npx tsx scripts/e2e-inbound.ts 8x50  also prints every limit change
 *
 * Prints every figure beside its criterion and writes them to reports/e2e-inbound.json. Exit 0
 * when every criterion is met or listed as known in scripts/e2e-real-known.ts (key
 * `inbound C x ms / defaults / criterion`), 1 when one that is not listed fails, 2 when a process
 * could not start or answer.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUpstream } from '../demo/upstream';
import { isResilixError, KeyRegistry, type Limiter, limiter, resilientFetch, retryAfterHeader } from '../src/index';
import { KNOWN_REAL_SERVER_FAILURES, knownKey } from './e2e-real-known';
import { ascending, fixed, quantile, quantiles } from './e2e-real-metrics';
import { HarnessError } from './e2e-real-servers';

const PLAN = {
  /** The trial: 100 connections from the first second. */
  connections: 100,
  /** The issue watched its trial for 60 s. */
  runMs: 60_000,
  /** Figures from 20 s on: a cold start at 3x or more gets 20 s to find the capacity. */
  settleMs: 20_000,
  noLoadMs: 5_000,
  referenceMs: 15_000,
  referenceWarmMs: 5_000,
  /** As e2e:real's SHED_PAUSE_MS: a refused connection comes back 10 ms later. */
  shedPauseMs: 10,
  sampleEveryMs: 100,
  /** A load call, or the upstream's first line, that takes longer means a process does not answer (exit 2). */
  callTimeoutMs: 10_000,
  /** The 8 x 50 ms; a short service time, where the app's own event loop is a large share; a larger capacity. */
  upstreams: [
    { capacity: 8, serviceMs: 50 },
    { capacity: 12, serviceMs: 25 },
    { capacity: 32, serviceMs: 30 },
  ],
} as const;

const BOUNDS = { inflight: 1.5, p90: 2, goodput: 0.85, limitLow: 0.7, limitHigh: 2 } as const;

// ---------------------------------------------------------------------------------------------
// The two child roles: `--upstream C ms` and `--load url ms connections`.

async function upstreamRole(capacity: number, serviceMs: number): Promise<void> {
  const upstream = await startUpstream({ capacity, serviceMs });
  // [Unix ms, in-flight, CPU time used so far in ms]
  const samples: [number, number, number][] = [];
  setInterval(() => samples.push([Date.now(), upstream.stats().inflight, cpuMs()]), PLAN.sampleEveryMs);
  console.log(JSON.stringify({ url: upstream.url }));
  // The parent closes stdin when it is done: the samples go out on stdout, then the process ends.
  process.stdin.resume();
  process.stdin.on('end', () => {
    process.stdout.write(`${JSON.stringify({ samples })}\n`, () => process.exit(0));
  });
}

async function loadRole(url: string, ms: number, connections: number): Promise<void> {
  const until = performance.now() + ms;
  const counts = { ok: 0, shed: 0, errors: 0, cpuMs: 0 };
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (performance.now() < until) {
        try {
          const res = await fetch(url, { signal: AbortSignal.timeout(PLAN.callTimeoutMs) });
          await res.arrayBuffer();
          if (res.status === 200) counts.ok++;
          else counts.shed++;
          if (res.status !== 200) await sleep(PLAN.shedPauseMs);
        } catch {
          counts.errors++;
          await sleep(PLAN.shedPauseMs);
        }
      }
    }),
  );
  counts.cpuMs = cpuMs();
  console.log(JSON.stringify(counts));
}

/** This process's CPU time (user + system) so far, ms. */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1_000;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The parent: the app, and the runs.

function child(args: string[]): ChildProcessWithoutNullStreams {
  const script = process.argv[1]!;
  return spawn(process.execPath, [...process.execArgv, script, ...args], { stdio: 'pipe' });
}

/** Each JSON line the child prints, in order; resolves at its exit, rejects on a non-zero one. */
function linesOf(proc: ChildProcessWithoutNullStreams, onLine?: (value: unknown) => void): Promise<unknown[]> {
  const values: unknown[] = [];
  let failure: HarnessError | undefined;
  let buffer = '';
  let errors = '';
  proc.stderr.on('data', (d: Buffer) => {
    errors += d.toString();
  });
  proc.stdout.on('data', (d: Buffer) => {
    buffer += d.toString();
    for (let i = buffer.indexOf('\n'); i >= 0; i = buffer.indexOf('\n')) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        proc.kill();
        failure = new HarnessError(`a child printed a line that is not JSON: ${line.slice(0, 200)}`);
        continue;
      }
      values.push(value);
      onLine?.(value);
    }
  });
  return new Promise((resolve, reject) => {
    proc.on('error', reject);
    // 'close', not 'exit': stdout may still hold the last line when the process exits.
    proc.on('close', (code) => {
      if (failure !== undefined) reject(failure);
      else if (code === 0) resolve(values);
      else reject(new HarnessError(`child exited ${code}: ${errors.trim()}`));
    });
  });
}

interface App {
  readonly url: string;
  readonly gate: () => Limiter | undefined;
  /** Each served call: when it ended (ms, performance.now()) and its time inside fn. */
  readonly served: { at: number; latencyMs: number }[];
  close(): Promise<void>;
}

/** The app: its handler calls the upstream through resilientFetch and a KeyRegistry. */
async function startApp(upstreamUrl: string, make: () => Limiter): Promise<App> {
  let gate: Limiter | undefined;
  const served: App['served'] = [];
  const registry = new KeyRegistry({
    create: () => {
      const l = make();
      l.onSettle((o) => {
        if (o.verdict === 'ok') served.push({ at: performance.now(), latencyMs: o.latencyMs });
      });
      // E2E_TRACE=1: every limit change, to read why a run held where it did (not part of the figures).
      if (process.env.E2E_TRACE) {
        const startedAt = performance.now();
        l.onLimitChange((c) => {
          const b = l.snapshot().baselineMs;
          console.log(
            `    ${fixed((c.at - startedAt) / 1_000, 2)} s ${c.from} -> ${c.to} ${c.reason} (baseline ${fixed(b ?? Number.NaN, 1)} ms)`,
          );
        });
      }
      gate = l;
      return l;
    },
  });
  const api = resilientFetch(registry);
  const server = createServer((_req, res) => {
    api(`${upstreamUrl}/work`)
      .then(async (upstream) => {
        await upstream.arrayBuffer();
        res.writeHead(upstream.status, { 'content-type': 'text/plain' });
        res.end('ok');
      })
      // A refusal before the call (503, Retry-After), or the upstream failing, the body included (502).
      .catch((error: unknown) => {
        if (res.headersSent) {
          res.destroy();
        } else if (isResilixError(error)) {
          res.writeHead(503, { 'retry-after': retryAfterHeader(error), 'content-type': 'text/plain' });
          res.end('overloaded, retry later\n');
        } else {
          res.writeHead(502, { 'content-type': 'text/plain' });
          res.end('upstream failed\n');
        }
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    gate: () => gate,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

interface Run {
  /** performance.now() when the load started. */
  readonly startedAt: number;
  readonly served: App['served'];
  /** [ms since the start, limit] every 100 ms. */
  readonly limits: [number, number][];
  readonly load: { ok: number; shed: number; errors: number; cpuMs: number };
  /** This process's (the app's) CPU time over the run, ms. */
  readonly appCpuMs: number;
}

async function runLoad(upstreamUrl: string, make: () => Limiter, ms: number, connections: number): Promise<Run> {
  const app = await startApp(upstreamUrl, make);
  const limits: [number, number][] = [];
  const startedAt = performance.now();
  const cpuAtStart = cpuMs();
  const sampler = setInterval(() => {
    const gate = app.gate();
    if (gate !== undefined) limits.push([performance.now() - startedAt, gate.snapshot().limit]);
  }, PLAN.sampleEveryMs);
  try {
    const load = child(['--load', app.url, String(ms), String(connections)]);
    // A load that has not finished its calls long after its time is a process that does not answer.
    const stuck = setTimeout(() => load.kill(), ms + 2 * PLAN.callTimeoutMs);
    const out = await linesOf(load).finally(() => clearTimeout(stuck));
    const appCpuMs = cpuMs() - cpuAtStart;
    const counts = out.at(-1) as Run['load'] | undefined;
    if (typeof counts?.ok !== 'number') throw new HarnessError('the load printed no counts');
    return { startedAt, served: app.served, limits, load: counts, appCpuMs };
  } finally {
    clearInterval(sampler);
    await app.close();
  }
}

/** Served calls per second and the p90 of their time inside fn, from `fromMs` to `toMs` of the run. */
function servedFigures(run: Run, fromMs: number, toMs: number): { goodput: number; p50: number; p90: number } {
  const inside = run.served.filter((s) => s.at - run.startedAt >= fromMs && s.at - run.startedAt < toMs);
  const q = quantiles(inside.map((s) => s.latencyMs));
  return { goodput: (inside.length * 1_000) / (toMs - fromMs), p50: q.p50, p90: q.p90 };
}

interface Criterion {
  readonly upstream: string;
  readonly name: string;
  readonly value: number;
  readonly bound: string;
  readonly pass: boolean;
}

async function trial(capacity: number, serviceMs: number): Promise<Criterion[]> {
  const label = `${capacity} x ${serviceMs} ms`;
  console.log(`upstream ${label} (capacity ${fixed((capacity * 1_000) / serviceMs, 0)}/s), in a process of its own`);
  const proc = child(['--upstream', String(capacity), String(serviceMs)]);
  let announce: (url: string) => void = () => {};
  const ready = new Promise<string>((resolve) => {
    announce = resolve;
  });
  const lines = linesOf(proc, (v) => {
    if (typeof v === 'object' && v !== null && 'url' in v) announce(String(v.url));
  });
  try {
    const url = await Promise.race([
      ready,
      lines.then(() => Promise.reject(new HarnessError('the upstream exited without its url'))),
      sleep(PLAN.callTimeoutMs).then(() =>
        Promise.reject(new HarnessError(`the upstream printed no url within ${PLAN.callTimeoutMs} ms`)),
      ),
    ]);
    const fixedAt = (cap: number) => () =>
      limiter({ algorithm: 'fixed', initialLimit: cap, minLimit: 1, maxLimit: Math.max(200, cap) });

    const noLoad = servedFigures(await runLoad(url, fixedAt(1), PLAN.noLoadMs, 1), 500, PLAN.noLoadMs);
    console.log(`  no load (1 connection): upstream p50 ${fixed(noLoad.p50, 1)} ms, p90 ${fixed(noLoad.p90, 1)} ms`);
    const ref = servedFigures(
      await runLoad(url, fixedAt(capacity), PLAN.referenceMs, PLAN.connections),
      PLAN.referenceWarmMs,
      PLAN.referenceMs,
    );
    console.log(`  fixed cap ${capacity} (${PLAN.connections} connections): goodput ${fixed(ref.goodput, 1)}/s`);

    const wallStart = Date.now();
    const run = await runLoad(url, () => limiter(), PLAN.runMs, PLAN.connections);
    const settled = servedFigures(run, PLAN.settleMs, PLAN.runMs);
    const limits = run.limits.filter(([t]) => t >= PLAN.settleMs).map(([, l]) => l);
    const limit = quantiles(limits);
    proc.stdin.end();
    const out = await lines;
    const samples = (out.at(-1) as { samples?: [number, number, number][] } | undefined)?.samples;
    if (!Array.isArray(samples)) throw new HarnessError('the upstream printed no samples');
    const counted = samples.filter(([t]) => t - wallStart >= PLAN.settleMs && t - wallStart < PLAN.runMs);
    const inflight = counted.reduce((n, [, v]) => n + v, 0) / counted.length;
    // Cores each process kept busy over the run: the load, the app (with the limiter), the upstream.
    const during = samples.filter(([t]) => t >= wallStart && t < wallStart + PLAN.runMs);
    const upstreamCpuMs = (during.at(-1)?.[2] ?? Number.NaN) - (during[0]?.[2] ?? Number.NaN);
    const cores = (ms: number) => fixed(ms / PLAN.runMs, 2);
    console.log(
      `  defaults (${PLAN.connections} connections, ${PLAN.runMs / 1_000} s; from ${PLAN.settleMs / 1_000} s): ` +
        `goodput ${fixed(settled.goodput, 1)}/s, upstream p50/p90 ${fixed(settled.p50, 1)}/${fixed(settled.p90, 1)} ms, ` +
        `limit median ${limit.p50} (p10 ${quantile(ascending(limits), 0.1)}, p90 ${limit.p90}), upstream in-flight mean ${fixed(inflight, 2)}; ` +
        `load: ${run.load.ok} served, ${run.load.shed} shed, ${run.load.errors} errors; ` +
        `cores busy: load ${cores(run.load.cpuMs)}, app ${cores(run.appCpuMs)}, upstream ${cores(upstreamCpuMs)} (of ${availableParallelism()})`,
    );
    const criteria: Criterion[] = [
      {
        upstream: label,
        name: 'upstream in-flight mean / C',
        value: inflight / capacity,
        bound: `<= ${BOUNDS.inflight}`,
        pass: inflight <= BOUNDS.inflight * capacity,
      },
      {
        upstream: label,
        name: 'upstream p90 / no-load p90',
        value: settled.p90 / noLoad.p90,
        bound: `<= ${BOUNDS.p90}`,
        pass: settled.p90 <= BOUNDS.p90 * noLoad.p90,
      },
      {
        upstream: label,
        name: `goodput / fixed cap ${capacity}'s`,
        value: settled.goodput / ref.goodput,
        bound: `>= ${BOUNDS.goodput}`,
        pass: settled.goodput >= BOUNDS.goodput * ref.goodput,
      },
      {
        upstream: label,
        name: 'limit median / C',
        value: limit.p50 / capacity,
        bound: `in [${BOUNDS.limitLow}, ${BOUNDS.limitHigh}]`,
        pass: limit.p50 >= BOUNDS.limitLow * capacity && limit.p50 <= BOUNDS.limitHigh * capacity,
      },
    ];
    for (const c of criteria) {
      console.log(`  ${c.pass ? 'met    ' : 'NOT MET'} ${c.name}: ${fixed(c.value, 2)} (${c.bound})`);
    }
    return criteria;
  } finally {
    if (proc.exitCode === null) proc.kill();
  }
}

function parseUpstream(arg: string): { capacity: number; serviceMs: number } {
  const m = /^(\d+)x(\d+)$/.exec(arg);
  if (m === null) throw new HarnessError(`unknown argument ${arg}; an upstream is CxMS, e.g. 8x50`);
  return { capacity: Number(m[1]), serviceMs: Number(m[2]) };
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--upstream') {
    await upstreamRole(Number(argv[1]), Number(argv[2]));
    return -1;
  }
  if (argv[0] === '--load') {
    await loadRole(argv[1]!, Number(argv[2]), Number(argv[3]));
    return 0;
  }
  const upstreams = argv.length > 0 ? argv.map(parseUpstream) : PLAN.upstreams;
  const criteria: Criterion[] = [];
  for (const u of upstreams) criteria.push(...(await trial(u.capacity, u.serviceMs)));
  const missed = criteria.filter((c) => !c.pass);
  const known = (c: Criterion) => knownKey(`inbound ${c.upstream}`, 'defaults', c.name) in KNOWN_REAL_SERVER_FAILURES;
  const unknown = missed.filter((c) => !known(c));
  const reports = join(dirname(fileURLToPath(import.meta.url)), '..', 'reports');
  mkdirSync(reports, { recursive: true });
  const report = {
    measuredAt: new Date().toISOString(),
    node: process.version,
    upstreams,
    plan: PLAN,
    bounds: BOUNDS,
    criteria: criteria.map((c) => ({ ...c, known: known(c) })),
  };
  writeFileSync(join(reports, 'e2e-inbound.json'), `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `e2e:inbound: ${criteria.length - missed.length} of ${criteria.length} criteria met (reports/e2e-inbound.json)`,
  );
  for (const c of missed) {
    const tag = known(c) ? 'not met (known, scripts/e2e-real-known.ts)' : 'NOT MET';
    console.log(`  ${tag}: ${c.upstream} / ${c.name}: ${fixed(c.value, 2)} (${c.bound})`);
  }
  for (const c of criteria.filter((x) => x.pass && known(x))) {
    console.log(`  listed as known and met this run: ${c.upstream} / ${c.name}: ${fixed(c.value, 2)}`);
  }
  return unknown.length === 0 ? 0 : 1;
}

// Anything thrown outside main's promise (a listener, a timer) is the harness failing: exit 2, not 1.
for (const event of ['uncaughtException', 'unhandledRejection'] as const) {
  process.on(event, (error: unknown) => {
    console.error(`e2e:inbound: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  });
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (error: unknown) => {
    console.error(`e2e:inbound: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(2);
  },
);
