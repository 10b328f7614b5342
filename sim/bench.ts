/**
 * The simulator's own speed, apart from any scenario's criteria: the engine with a fixed-limit
 * stand-in, then with the real limiter, on the synchronous path (C = 50, lognormal 20 ms).
 *
 *   npx tsx sim/bench.ts
 *
 * Reports calls per CPU-second (CPU time, not wall time: on a shared machine the wall clock
 * measures the neighbours). Wall-clock and CPU reads happen here only, never in the engine.
 */
import { limiter } from '../src/limiter/limiter';
import type { LimiterLike } from './models/clients';
import { lognormal } from './models/distributions';
import { FixedLimit } from './models/fixed-limit';
import { World } from './models/world';
import { runUnderPoisson } from './scenarios/common';

async function measure(
  label: string,
  perSecond: number,
  make: (world: { clock: World['simulator'] }) => LimiterLike,
): Promise<void> {
  const world = new World({
    seed: 1,
    phases: [{ name: 'run', startMs: 0, endMs: 200_000 }],
    sampleEveryMs: 100,
    upstream: { servers: 50, service: lognormal(20, 0.3) },
    clients: (tools) => [{ limiter: make({ clock: tools.clock }) }],
  });
  const cpu = process.cpuUsage();
  await runUnderPoisson(world, perSecond);
  const used = process.cpuUsage(cpu);
  const seconds = (used.user + used.system) / 1e6;
  const p = world.recorder.summarize()[0]!;
  console.log(
    `${label.padEnd(44)} ${(p.arrivals / 1e6).toFixed(2)}M calls (${((100 * p.shed) / p.arrivals).toFixed(0)}% shed) in ` +
      `${seconds.toFixed(2)} CPU-s: ${(p.arrivals / seconds / 1e6).toFixed(2)}M calls/s`,
  );
}

// Warm the JIT once so the first figure is not the compiler's.
await measure('warm-up', 2000, () => new FixedLimit(100));
await measure('engine + fixed stand-in, 95% load', 2300, () => new FixedLimit(100));
await measure('engine + fixed stand-in, 8x overload', 20_000, () => new FixedLimit(100));
await measure('engine + real limiter (vegas), 95% load', 2300, ({ clock }) => limiter({ clock, random: () => 0.5 }));
await measure('engine + real limiter (vegas), 8x overload', 20_000, ({ clock }) =>
  limiter({ clock, random: () => 0.5 }),
);
