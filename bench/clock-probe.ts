/**
 * Where a clock reading is boxed: bytes per call of the clock alone and of the low-level pair with
 * clocks that return fractional readings (a whole-number reading is a small integer, never boxed).
 *
 *   npx tsx bench/clock-probe.ts
 */
import { AllocationMeter, bytesPerSyncCall } from './allocation';
import { loadResilix } from './resilix';

class FractionalClock {
  t = 1000.25;
  now(): number {
    this.t += 0.125; // in place: a double field holds its own box
    return this.t;
  }
}

async function main(): Promise<void> {
  const { module: r } = await loadResilix('src');
  const meter = new AllocationMeter();
  const field = { t: 0.5 };
  const ok = { verdict: 'ok', latencyMs: 1 } as const;
  const system = r.limiter();
  const fractional = r.limiter({ clock: new FractionalClock() });
  const rawFractional = new FractionalClock();
  const rows: Array<[string, () => void]> = [
    [
      'field = performance.now()',
      () => {
        field.t = performance.now();
      },
    ],
    [
      'field = systemClock.now()',
      () => {
        field.t = r.systemClock.now();
      },
    ],
    ['tryAcquire + settle, system clock', () => system.tryAcquire()!.settle(ok)],
    ['tryAcquire + settle(obs, 1000.25), system clock', () => system.tryAcquire()!.settle(ok, 1000.25)],
    ['tryAcquire + settle, fractional user clock', () => fractional.tryAcquire()!.settle(ok)],
    [
      'field = fractional clock, raw',
      () => {
        field.t = rawFractional.now();
      },
    ],
  ];
  for (const [name, fn] of rows) {
    console.log(`${process.version} ${name}: ${bytesPerSyncCall(meter, fn, 200_000, 200_000).toFixed(2)} B/call`);
  }
}

void main();
