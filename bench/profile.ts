/**
 * Profiles one benchmark case in a tight loop, with V8's sampling CPU profiler started around the
 * loop only (not around the build and module loading that precede it):
 *
 *   npx tsx bench/profile.ts <case-id> [seconds=5] [out=$TMPDIR/resilix-<case-id>.cpuprofile]
 *   npx tsx bench/profile-summary.ts $TMPDIR/resilix-<case-id>.cpuprofile
 *
 * The .cpuprofile opens in Chrome DevTools (Performance > Load profile) and VS Code. Equivalent to
 * `node --cpu-prof`, minus the start-up noise. Case ids: see bench/cases.ts.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildCases } from './cases';
import { Counter } from './harness';
import { loadResilix } from './resilix';

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

async function main(): Promise<void> {
  const [id = 'resilix-bulkhead', secondsArg = '5', outArg] = process.argv.slice(2);
  const out = outArg ?? join(tmpdir(), `resilix-${id}.cpuprofile`);
  const { module: resilix } = await loadResilix(process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src');
  const cases = buildCases(resilix);
  const target = cases.find((c) => c.id === id);
  if (target === undefined) throw new Error(`no case ${id}; cases: ${cases.map((c) => c.id).join(', ')}`);
  const counter = new Counter(0);
  await target.loop(counter.reset(200_000)); // warm-up: let the JIT settle before sampling

  const session = new Session();
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.setSamplingInterval', { interval: 50 }); // microseconds
  await post(session, 'Profiler.start');
  const started = performance.now();
  const until = started + Number(secondsArg) * 1000;
  let calls = 0;
  while (performance.now() < until) {
    await target.loop(counter.reset(50_000));
    calls += 50_000;
  }
  const elapsedMs = performance.now() - started;
  const { profile } = await post<{ profile: object }>(session, 'Profiler.stop');
  session.disconnect();
  for (const c of cases) c.close?.();

  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(profile));
  process.stderr.write(
    `${id}: ${calls} calls, ${((elapsedMs * 1e6) / calls).toFixed(0)} ns/call while profiled; ${out}\n`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
