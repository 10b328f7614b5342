/**
 * Per-key memory of a KeyRegistry (spec §9.4: one limiter per key, each with a quantile estimator
 * and, in the spec, a correlation window, gone with the covariance reset (adr/0045, adr/0047), must
 * stay small enough that the 1 000-key cap is not a memory problem; target <= 2 KB per key, <= 2 MB
 * for 1 000 keys). Uses resilix as users get it: through
 * its public entry (issue 19), built by tsup with the production settings (bench/resilix.ts).
 * Imported straight from src/ under tsx, every closure made per key also carried an own `name`
 * property (tsx transpiles with esbuild's keepNames): 512 bytes per limiter no build has.
 * FROM_SRC=1 measures src/ under tsx anyway.
 *
 *   node --expose-gc --import tsx scripts/measure-key-memory.ts            (about 5 minutes)
 *   RUNS=3 COUNTS=1000 node --expose-gc --import tsx scripts/measure-key-memory.ts   (about 20 s)
 *   BREAKDOWN=1 npx tsx scripts/measure-key-memory.ts                     (where every byte of a key goes)
 *   TIMING=1 node --import tsx scripts/measure-key-memory.ts              (time of a hit, a miss, a refusal)
 *   (npx tsx scripts/measure-key-memory.ts works too: gc is then reached through V8's flags)
 *
 * Totals: for each configuration and key count, collect garbage, read the heap, fill a registry
 * with that many keys (key strings included: the registry holds them), optionally run traffic
 * through every key so every lazy structure exists, collect again, read again; divide by the
 * count. The median of RUNS runs is reported. Typed arrays above 64 bytes live outside the JS heap
 * in V8, so the figure is heapUsed + arrayBuffers.
 *
 * Breakdown: the same registry of 1 000 keys after traffic, then a census of every object it
 * left on the heap, by kind (bench/heap-census.ts: two heap snapshots, self sizes, each byte
 * counted once in the object that holds it), per key.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { census, censusTable } from '../bench/heap-census';
import { loadResilix } from '../bench/resilix';
import type { Clock, Executor, KeyRegistry as Registry } from '../src/index';

const resilix = process.env.FROM_SRC === '1' ? await import('../src/index') : (await loadResilix('src')).module;
const { breaker, bulkhead, KeyRegistry, limiter, originKey, pipeline, timeout } = resilix;

const RUNS = Number(process.env.RUNS ?? 5);
const COUNTS = (process.env.COUNTS ?? '1000,10000').split(',').map(Number);
const TRAFFIC_ROUNDS = 100; // calls per key when warmed: 10 s of virtual time, several windows closed
const ROUND_MS = 100; // the spec's default update interval: one limiter window step per round
const BREAKDOWN_KEYS = 1_000;

function findGc(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (typeof existing === 'function') return existing;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}
const gc = findGc();

function retainedBytes(): number {
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

/** A virtual clock: time moves only when the script moves it (no timers are armed here). */
class VirtualClock implements Clock {
  time = 0;
  now(): number {
    return this.time;
  }
  setTimer(): unknown {
    throw new Error('measure-key-memory: no deadline timers expected');
  }
  clearTimer(): void {}
}

interface Config {
  name: string;
  make: (clock: Clock) => Executor;
  /** Executors shared by every key: what the registry alone costs. */
  shared?: boolean;
}

const CONFIGS: Config[] = [
  {
    name: 'registry entry only (one shared executor)',
    make: (clock) => bulkhead({ maxConcurrent: 8, clock }),
    shared: true,
  },
  {
    name: 'pipeline(bulkhead(), timeout())',
    make: (clock) => pipeline(bulkhead({ maxConcurrent: 8, clock }), timeout({ timeoutMs: Infinity, clock })),
  },
  { name: 'pipeline(breaker())', make: (clock) => pipeline(breaker({ clock })) },
  { name: 'pipeline(limiter())', make: (clock) => pipeline(limiter({ clock })) },
  { name: 'pipeline(breaker(), limiter())', make: (clock) => pipeline(breaker({ clock }), limiter({ clock })) },
];

/** A registry of `count` keys, after `TRAFFIC_ROUNDS` calls through each when `warmed`. */
async function filledRegistry(config: Config, count: number, warmed: boolean, clock: VirtualClock) {
  const shared = config.shared ? config.make(clock) : undefined;
  const registry = new KeyRegistry({
    maxKeys: count,
    create: () => shared ?? config.make(clock),
  });
  for (let i = 0; i < count; i++) registry.get(`https://host-${i}.example.com`);
  if (warmed) {
    const keys = registry.keys();
    const call = () => {
      clock.time += 1; // 1 ms of latency for every call
      return 'ok';
    };
    for (let round = 0; round < TRAFFIC_ROUNDS; round++) {
      await Promise.all(keys.map((key) => registry.execute(key, call)));
      clock.time += ROUND_MS;
    }
  }
  if (registry.size !== count) throw new Error(`expected ${count} keys, held ${registry.size}`);
  return registry;
}

async function measureOnce(config: Config, count: number, warmed: boolean): Promise<number> {
  const before = retainedBytes();
  let registry: Registry | undefined = await filledRegistry(config, count, warmed, new VirtualClock());
  const after = retainedBytes();
  if (registry.size !== count) throw new Error('unreachable');
  registry = undefined;
  return (after - before) / count;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Every object a key leaves on the heap, by kind, for each configuration, after traffic. */
async function measureBreakdown(): Promise<void> {
  for (const config of CONFIGS) {
    // The registry is built in full (traffic included) between the census' two snapshots. Warm
    // the code first, so that feedback and lazily made shared state are not counted as the keys'.
    await filledRegistry(config, 50, true, new VirtualClock());
    const { rows } = await census(() => filledRegistry(config, BREAKDOWN_KEYS, true, new VirtualClock()));
    console.log(`\n${config.name}: one key of ${BREAKDOWN_KEYS}, after ${TRAFFIC_ROUNDS} calls each\n`);
    console.log(censusTable(rows, BREAKDOWN_KEYS, 2));
  }
}

/** Nanoseconds per operation, after a warm-up pass of the same length. Indicative, not a benchmark suite. */
function nsPerOp(n: number, op: (i: number) => void): number {
  for (let i = 0; i < n; i++) op(i);
  const start = process.hrtime.bigint();
  for (let i = 0; i < n; i++) op(i);
  return Number(process.hrtime.bigint() - start) / n;
}

function measureTiming(): void {
  const shared = bulkhead({ maxConcurrent: 1 });
  const held = Array.from({ length: 1000 }, (_, i) => `https://host-${i}.example.com`);
  const fresh = Array.from({ length: 400_000 }, (_, i) => `https://other-${i}.example.com`);
  const hits = new KeyRegistry({ create: () => shared, maxKeys: 1000 });
  for (const key of held) hits.get(key);
  const misses = new KeyRegistry({ create: () => shared, maxKeys: 1000 });
  const busyValue = { active: 1, execute: shared.execute.bind(shared) };
  const allBusy = new KeyRegistry<Executor>({ create: () => busyValue, maxKeys: 1000 });
  for (const key of held) allBusy.get(key);
  const urls = Array.from({ length: 1000 }, (_, i) => `https://api-${i % 10}.example.com/v1/items/${i}?q=1`);
  const urlObjects = urls.map((u) => new URL(u));
  const rows: Array<[string, number]> = [
    ['get on a held key (1 000 held)', nsPerOp(1_000_000, (i) => hits.get(held[i % 1000]!))],
    ['get on a new key, evicting the oldest idle one', nsPerOp(200_000, (i) => misses.get(fresh[i]!))],
    [
      'get on a new key at a full cap of 1 000 keys that must each be probed (throws)',
      nsPerOp(10_000, (i) => {
        try {
          allBusy.get(fresh[i]!);
        } catch {
          // TooManyKeysError: the case being timed
        }
      }),
    ],
    ['originKey(string)', nsPerOp(300_000, (i) => originKey(urls[i % 1000]!))],
    ['originKey(URL)', nsPerOp(300_000, (i) => originKey(urlObjects[i % 1000]!))],
  ];
  console.log(`node ${process.version}\n\n| operation | ns |\n|---|---:|`);
  for (const [name, ns] of rows) console.log(`| ${name} | ${ns.toFixed(0)} |`);
}

async function main(): Promise<void> {
  if (process.env.TIMING === '1') {
    measureTiming();
    return;
  }
  if (process.env.BREAKDOWN === '1') {
    await measureBreakdown();
    return;
  }
  console.log(`node ${process.version}, ${RUNS} runs per cell, median bytes per key (heapUsed + arrayBuffers)\n`);
  console.log('| configuration | keys | fresh B/key | after traffic B/key | after traffic, total |');
  console.log('|---|---:|---:|---:|---:|');
  for (const config of CONFIGS) {
    for (const count of COUNTS) {
      const fresh: number[] = [];
      const warmed: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        fresh.push(await measureOnce(config, count, false));
        warmed.push(await measureOnce(config, count, true));
      }
      const warm = median(warmed);
      const total = (warm * count) / 1024;
      const totalText = total >= 1024 ? `${(total / 1024).toFixed(2)} MB` : `${total.toFixed(0)} KB`;
      console.log(`| ${config.name} | ${count} | ${median(fresh).toFixed(0)} | ${warm.toFixed(0)} | ${totalText} |`);
    }
  }
}

void main();
