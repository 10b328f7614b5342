/**
 * Per-key memory of a KeyRegistry (spec §9.4: one limiter per key, each with a quantile estimator
 * and a correlation window, must stay small enough that the 1 000-key cap is not a memory
 * problem; target <= 2 KB per key, <= 2 MB for 1 000 keys).
 *
 *   node --expose-gc --import tsx scripts/measure-key-memory.ts            (about 5 minutes)
 *   RUNS=3 COUNTS=1000 node --expose-gc --import tsx scripts/measure-key-memory.ts   (about 20 s)
 *   COMPONENTS=1 node --expose-gc --import tsx scripts/measure-key-memory.ts        (what a key is made of)
 *   TIMING=1 node --import tsx scripts/measure-key-memory.ts                        (time of a hit, a miss, a refusal)
 *   (npx tsx scripts/measure-key-memory.ts works too: gc is then reached through V8's flags)
 *
 * For each configuration and key count: collect garbage, read the heap, fill a registry with that
 * many keys (key strings included: the registry holds them), optionally run traffic through every
 * key so every lazy structure exists, collect again, read again; divide by the count. The median
 * of RUNS runs is reported. Typed arrays above 64 bytes live outside the JS heap in V8, so the
 * figure is heapUsed + arrayBuffers.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import {
  breaker,
  bulkhead,
  type Clock,
  type Executor,
  KeyRegistry,
  limiter,
  originKey,
  pipeline,
  timeout,
} from '../src/index';
import { MedianFilter, RollingCorrelation, WindowQuantile } from '../src/internal';

const RUNS = Number(process.env.RUNS ?? 5);
const COUNTS = (process.env.COUNTS ?? '1000,10000').split(',').map(Number);
const TRAFFIC_ROUNDS = 100; // calls per key when warmed: 10 s of virtual time, several windows closed
const ROUND_MS = 100; // the spec's default update interval: one limiter window step per round

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

async function measureOnce(config: Config, count: number, warmed: boolean): Promise<number> {
  const clock = new VirtualClock();
  const shared = config.shared ? config.make(clock) : undefined;
  const before = retainedBytes();
  let registry: KeyRegistry | undefined = new KeyRegistry({
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
      await Promise.all(keys.map((key) => registry!.execute(key, call)));
      clock.time += ROUND_MS;
    }
  }
  const after = retainedBytes();
  if (registry.size !== count) throw new Error(`expected ${count} keys, held ${registry.size}`);
  registry = undefined;
  return (after - before) / count;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Bytes per instance of one building block, 10 000 instances held in an array. */
function measureComponents(): void {
  const n = 10_000;
  const parts: Array<[string, () => unknown]> = [
    ['limiter()', () => limiter()],
    ['breaker()', () => breaker()],
    ['bulkhead()', () => bulkhead({ maxConcurrent: 8 })],
    ['WindowQuantile (p90, 64 exact slots)', () => new WindowQuantile({ quantile: 0.9 })],
    ['RollingCorrelation(50)', () => new RollingCorrelation(50)],
    ['MedianFilter(3)', () => new MedianFilter(3)],
    ['Float64Array(50)', () => new Float64Array(50)],
    ['Float64Array(3)', () => new Float64Array(3)],
    ['Uint32Array(10)', () => new Uint32Array(10)],
    ['Uint32Array(30)', () => new Uint32Array(30)],
    ['number[10] of doubles', () => new Array<number>(10).fill(0.5)],
    ['key string "https://host-N.example.com"', () => `https://host-${Math.random()}.example.com`.slice(0, 28)],
  ];
  console.log('| building block | bytes each |');
  console.log('|---|---:|');
  for (const [name, make] of parts) {
    for (let i = 0; i < 100; i++) make(); // compile and warm first: code is not per-instance cost
    const before = retainedBytes();
    const held = new Array<unknown>(n);
    for (let i = 0; i < n; i++) held[i] = make();
    const after = retainedBytes();
    // Minus the holding array's own slot (8 bytes on a 64-bit heap without pointer compression).
    console.log(`| ${name} | ${((after - before) / n - 8).toFixed(0)} |`);
    held.length = 0;
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
  if (process.env.COMPONENTS === '1') {
    measureComponents();
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
