import { describe, expect, it } from 'vitest';
import { HEADER, formatRow, runOverloadExperiment, type OverloadResult } from './support/overload-experiment';

/**
 * The experiment behind adr/0040-queue-order-lifo.md. Seeded and deterministic: an upstream that
 * serves 10 calls at once (log-normal service time, median 100 ms, sigma 0.5), Poisson arrivals at
 * 3x its capacity for 60 s, a limiter with a fixed limit of 10 and queueing (2, 3), every call with
 * the same deadline. Run with `npx vitest run test/limiter/admission/queue-order.test.ts` to see
 * the table.
 */
const BASE = {
  seed: 42,
  capacity: 10,
  medianServiceMs: 100,
  serviceSigma: 0.5,
  overload: 3,
  durationMs: 60_000,
};

const DEADLINES_MS = [150, 250, 400, 1_000, 60_000];

describe('queue order under 3x overload with deadlines (FIFO vs LIFO)', () => {
  const results = new Map<string, OverloadResult>();
  const get = (order: 'fifo' | 'lifo', deadlineMs: number): OverloadResult => results.get(`${order}@${deadlineMs}`)!;

  it('runs the seeded experiment and prints the table', async () => {
    const rows: string[] = [HEADER];
    for (const deadlineMs of DEADLINES_MS) {
      for (const queueOrder of ['fifo', 'lifo'] as const) {
        const result = await runOverloadExperiment({ ...BASE, queueOrder, deadlineMs });
        results.set(`${queueOrder}@${deadlineMs}`, result);
        rows.push(formatRow(result));
      }
    }
    console.log(`queue order, seed ${BASE.seed}, 3x overload, 60 s\n${rows.join('\n')}`);
    expect(results.size).toBe(10);
  });

  it('LIFO serves at least 30% more calls in time when the deadline is 2.5x the median service time', () => {
    expect(get('lifo', 250).goodputPerSecond).toBeGreaterThan(1.3 * get('fifo', 250).goodputPerSecond);
  });

  it('LIFO at least doubles goodput when the deadline is 1.5x the median service time', () => {
    expect(get('lifo', 150).goodputPerSecond).toBeGreaterThan(2 * get('fifo', 150).goodputPerSecond);
  });

  it('LIFO cuts the median latency of the calls it serves by a quarter at every deadline, by half from 250 ms', () => {
    for (const deadlineMs of DEADLINES_MS) {
      const ratio = get('lifo', deadlineMs).servedP50Ms / get('fifo', deadlineMs).servedP50Ms;
      expect(ratio).toBeLessThan(deadlineMs >= 250 ? 0.55 : 0.75);
    }
  });

  it('LIFO wastes far less upstream work on calls that time out after they started', () => {
    expect(get('lifo', 250).wastedUpstreamShare).toBeLessThan(0.25 * get('fifo', 250).wastedUpstreamShare);
  });

  it('costs no goodput when deadlines are generous', () => {
    const fifo = get('fifo', 1_000).goodputPerSecond;
    expect(Math.abs(get('lifo', 1_000).goodputPerSecond - fifo)).toBeLessThan(0.01 * fifo);
  });

  it('has the cost LIFO is known for: without a real deadline, the unlucky wait far longer', () => {
    // the price, measured: a 60 s budget lets a waiter at the bottom of the stack starve
    expect(get('lifo', 60_000).servedMaxMs).toBeGreaterThan(10 * get('fifo', 60_000).servedMaxMs);
    expect(get('lifo', 60_000).servedP99Ms).toBeGreaterThan(get('fifo', 60_000).servedP99Ms);
  });

  it('is reproducible: the same seed gives the same numbers', async () => {
    const short = { ...BASE, durationMs: 5_000, deadlineMs: 250, queueOrder: 'lifo' as const };
    expect(await runOverloadExperiment(short)).toEqual(await runOverloadExperiment(short));
  });
});
