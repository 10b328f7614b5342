/**
 * Where one benchmark case allocates: V8's sampling heap profiler, garbage included, over a
 * tight loop of the case, summarised as bytes per call by allocating function.
 *
 *   npx tsx bench/alloc-profile.ts <case-id> [calls=200000]
 *
 * Sampling (one sample per ~64 bytes on average) makes the per-function figures estimates; the
 * exact total comes from bench/allocation.ts and is printed alongside.
 */
import { Session } from 'node:inspector';
import { AllocationMeter, bytesPerIteration } from './allocation';
import { buildCases } from './cases';
import { Counter } from './harness';
import { loadResilix } from './resilix';

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SamplingNode[];
}

function post<T>(session: Session, method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => {
    session.post(method, params ?? {}, (error, result) => (error ? reject(error) : resolve(result as T)));
  });
}

async function main(): Promise<void> {
  const [id = 'resilix-bulkhead', callsArg = '200000'] = process.argv.slice(2);
  const calls = Number(callsArg);
  const { module: resilix } = await loadResilix(process.env.RESILIX_BENCH_ENTRY === 'dist' ? 'dist' : 'src');
  const cases = buildCases(resilix);
  const target = cases.find((c) => c.id === id);
  if (target === undefined) throw new Error(`no case ${id}; cases: ${cases.map((c) => c.id).join(', ')}`);
  const exact = await bytesPerIteration(new AllocationMeter(), target.loop, calls, calls);

  const session = new Session();
  session.connect();
  await post(session, 'HeapProfiler.enable');
  await post(session, 'HeapProfiler.startSampling', {
    samplingInterval: 64,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  await target.loop(new Counter(calls));
  const { profile } = await post<{ profile: { head: SamplingNode } }>(session, 'HeapProfiler.stopSampling');
  session.disconnect();
  for (const c of cases) c.close?.();

  const bySite = new Map<string, number>();
  let total = 0;
  const walk = (node: SamplingNode, path: string[]): void => {
    const f = node.callFrame;
    const where =
      f.url === ''
        ? ''
        : ` ${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/').replace(/^file:\/\/.*\//, '')}:${f.lineNumber + 1}`;
    const label = `${f.functionName || '(anonymous)'}${where}`;
    if (node.selfSize > 0) {
      // Attribute to the function and its caller: "new X" shows up as the constructor, say who called it.
      const key = path.length === 0 ? label : `${label}  <- ${path[path.length - 1]}`;
      bySite.set(key, (bySite.get(key) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    for (const child of node.children) walk(child, [...path, label]);
  };
  walk(profile.head, []);
  console.log(
    `${id}: ${exact.toFixed(1)} bytes/call exact (GCProfiler accounting); sampled ${(total / calls).toFixed(1)} bytes/call:`,
  );
  for (const [key, bytes] of [...bySite.entries()].sort((a, b) => b[1] - a[1]).slice(0, 25)) {
    console.log(`${(bytes / calls).toFixed(1).padStart(8)}  ${key}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
