/**
 * Counts the bytes a piece of code allocates on the V8 heap, garbage collections included.
 *
 * A `heapUsed` delta undercounts: every scavenge in the interval throws away what it freed, so a
 * loop that allocates 100 MB of short-lived objects can show a delta near zero. We add the freed
 * bytes back: V8's `GCProfiler` (node:v8, Node >= 18.15) records the used size of every space
 * before and after each collection, so
 *
 *     allocated = used(end) - used(start) + sum over GCs of (used before GC - used after GC)
 *
 * Code spaces are left out: the JIT compiling a function is not the function allocating.
 * The fixed cost of taking the readings themselves (a few hundred bytes of statistics objects)
 * is measured on an empty interval and subtracted, so an allocation-free loop reads 0.
 */
import { GCProfiler, getHeapSpaceStatistics } from 'node:v8';
import { Counter, median } from './harness';

const CODE_SPACES = new Set(['code_space', 'code_large_object_space']);

interface SpaceReading {
  readonly spaceName: string;
  readonly spaceUsedSize: number;
}

function usedOutsideCode(spaces: readonly SpaceReading[]): number {
  let used = 0;
  for (const space of spaces) if (!CODE_SPACES.has(space.spaceName)) used += space.spaceUsedSize;
  return used;
}

function usedNow(): number {
  // getHeapSpaceStatistics() is snake_case; GCProfiler's readings are camelCase.
  let used = 0;
  for (const space of getHeapSpaceStatistics()) {
    if (!CODE_SPACES.has(space.space_name)) used += space.space_used_size;
  }
  return used;
}

/** One measured interval. `start()`, run the code, `stop()` returns the bytes it allocated. */
export class AllocationMeter {
  private profiler: GCProfiler | undefined = undefined;
  private usedAtStart = 0;
  private overhead = 0;
  /** Collections seen in the last interval. */
  collections = 0;

  constructor() {
    // The readings allocate a fixed amount of their own; measure it on empty intervals.
    const empty: number[] = [];
    for (let i = 0; i < 15; i++) {
      this.start();
      empty.push(this.stop());
    }
    this.overhead = median(empty);
  }

  start(): void {
    this.profiler = new GCProfiler();
    this.profiler.start();
    this.usedAtStart = usedNow();
  }

  stop(): number {
    const usedAtEnd = usedNow();
    const profiler = this.profiler;
    if (profiler === undefined) throw new Error('AllocationMeter.stop() before start()');
    this.profiler = undefined;
    const result = profiler.stop();
    let freed = 0;
    for (const gc of result.statistics) {
      freed += usedOutsideCode(gc.beforeGC.heapSpaceStatistics) - usedOutsideCode(gc.afterGC.heapSpaceStatistics);
    }
    this.collections = result.statistics.length;
    return usedAtEnd - this.usedAtStart + freed - this.overhead;
  }
}

/** Bytes per item of a loop function, run over `calls` items after a warm-up over `warmup` items. */
export async function bytesPerIteration(
  meter: AllocationMeter,
  loop: (iterations: Iterable<unknown>) => unknown,
  calls: number,
  warmup = calls,
): Promise<number> {
  const counter = new Counter(warmup);
  await loop(counter);
  counter.reset(calls);
  meter.start();
  await loop(counter);
  return meter.stop() / calls;
}

/** Bytes per call of a synchronous function, over `calls` calls, after `warmup` calls. */
export function bytesPerSyncCall(meter: AllocationMeter, fn: () => void, calls: number, warmup = calls): number {
  for (let i = 0; i < warmup; i++) fn();
  meter.start();
  for (let i = 0; i < calls; i++) fn();
  return meter.stop() / calls;
}
