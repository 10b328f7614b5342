/**
 * What one call in flight holds on the heap, object by object: 1 000 calls started through an
 * executor and left pending (fn returns a promise that never settles), then a census of the
 * objects they left (bench/heap-census.ts). The per-call allocation of a call that settles is this
 * plus what settling makes (bench/alloc-profile.ts shows both, by function).
 *
 *   npx tsx bench/call-census.ts [which...]     which: breaker, blb, full, retry-full, fetch (all by default)
 */
import { census, censusTable } from './heap-census';
import { loadResilix } from './resilix';

const CALLS = 1_000;

async function main(): Promise<void> {
  const { module: r } = await loadResilix('src');
  // Pending upstream calls: their promises stay reachable (as a socket keeps a real one), so the
  // calls waiting on them do too. In the warm-up they answer at once.
  const pending: Array<() => void> = [];
  let answer = true;
  const never = (): Promise<number> =>
    answer ? Promise.resolve(1) : new Promise<number>((resolve) => pending.push(() => resolve(1)));
  const ok = new Response(null);
  const neverFetch = (): Promise<Response> =>
    answer ? Promise.resolve(ok) : new Promise<Response>((resolve) => pending.push(() => resolve(ok)));
  const wide = () => r.limiter({ initialLimit: CALLS, minLimit: CALLS, maxLimit: 2 * CALLS });
  const configs: Record<string, () => (i: number) => Promise<unknown>> = {
    breaker: () => {
      const b = r.breaker();
      return () => b.execute(never);
    },
    blb: () => {
      const p = r.pipeline(r.breaker(), wide(), r.bulkhead({ maxConcurrent: CALLS }));
      return () => p.execute(never);
    },
    full: () => {
      const p = r.pipeline(r.breaker(), wide(), r.bulkhead({ maxConcurrent: CALLS }), r.timeout({ timeoutMs: 1e9 }));
      return () => p.execute(never);
    },
    'retry-full': () => {
      const p = r.pipeline(
        r.retry(),
        r.breaker(),
        wide(),
        r.bulkhead({ maxConcurrent: CALLS }),
        r.timeout({ timeoutMs: 1e9 }),
      );
      return () => p.execute(never);
    },
    fetch: () => {
      const f = r.resilientFetch(r.pipeline(r.breaker(), wide()), { fetch: neverFetch });
      return () => f('https://api.example.com/v1/items');
    },
  };
  const chosen = process.argv.slice(2);
  for (const name of chosen.length === 0 ? Object.keys(configs) : chosen) {
    const make = configs[name];
    if (make === undefined) throw new Error(`no config ${name}; configs: ${Object.keys(configs).join(', ')}`);
    const start = make();
    answer = true;
    for (let i = 0; i < 2_000; i++) await start(i); // warm up: compile, grow pools, settle the shapes
    answer = false;
    const { rows, held } = await census(() => Array.from({ length: CALLS }, (_, i) => start(i)));
    for (const settle of pending.splice(0)) settle();
    await Promise.all(held as Array<Promise<unknown>>);
    console.log(`\n${name}: one call in flight (${CALLS} held)\n`);
    console.log(censusTable(rows, CALLS, 1));
  }
}

void main();
