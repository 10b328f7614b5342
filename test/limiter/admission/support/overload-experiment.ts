import { isLimitExceededError } from '../../../../src/errors/limit-exceeded-error';
import { isTimeoutError } from '../../../../src/errors/timeout-error';
import { limiter as createLimiter } from '../../../../src/limiter/limiter';
import type { QueueOrder } from '../../../../src/limiter/wait-queue';
import { SimClock, seededRandom } from './sim-clock';

export interface OverloadExperiment {
  seed: number;
  queueOrder: QueueOrder;
  /** Concurrent calls the upstream serves; the limiter's fixed limit equals it. */
  capacity: number;
  /** Median service time of the upstream, ms (log-normal). */
  medianServiceMs: number;
  /** Log-normal shape: 0 is a fixed service time; 0.5 is a typical API's spread (p99 about 3x p50). */
  serviceSigma: number;
  /** Offered load as a multiple of capacity (capacity / mean service time). */
  overload: number;
  /** Every call's budget, ms, queueing included. */
  deadlineMs: number;
  durationMs: number;
}

export interface OverloadResult {
  queueOrder: QueueOrder;
  deadlineMs: number;
  offered: number;
  ok: number;
  shed: number;
  timedOutQueued: number;
  timedOutRunning: number;
  /** Successful calls per second. */
  goodputPerSecond: number;
  /** Share of the upstream's busy time spent on calls that then timed out. */
  wastedUpstreamShare: number;
  /** Arrival-to-answer latency of successful calls, ms. */
  servedP50Ms: number;
  servedP99Ms: number;
  servedMaxMs: number;
}

/**
 * One seeded run: Poisson arrivals at `overload` x the capacity of an upstream that serves
 * `capacity` calls at once, through a limiter with a fixed limit of `capacity` and the default
 * queueing factors (2, 3). Each call aborts its upstream work when its deadline fires (as fetch
 * does with ctx.signal), so a call that times out while running wastes the upstream time it used.
 */
export async function runOverloadExperiment(e: OverloadExperiment): Promise<OverloadResult> {
  const clock = new SimClock();
  const arrivals = seededRandom(e.seed);
  const service = seededRandom(e.seed ^ 0x5bd1e995);
  const coin = seededRandom(e.seed ^ 0x27d4eb2f);
  const limiter = createLimiter({
    algorithm: 'fixed',
    initialLimit: e.capacity,
    clock,
    queueing: { initialFactor: 2, maxFactor: 3 },
    queueOrder: e.queueOrder,
    random: coin,
  });
  const meanServiceMs = e.medianServiceMs * Math.exp((e.serviceSigma * e.serviceSigma) / 2);
  const arrivalRatePerMs = (e.overload * e.capacity) / meanServiceMs;
  const served: number[] = [];
  let offered = 0;
  let shed = 0;
  let timedOutQueued = 0;
  let timedOutRunning = 0;
  let busyMs = 0;
  let wastedMs = 0;
  let upstreamInflight = 0;
  let maxUpstreamInflight = 0;

  const call = (): void => {
    offered++;
    const arrivedAt = clock.now();
    let startedAt = NaN;
    limiter
      .execute(
        (ctx) =>
          new Promise<void>((resolve, reject) => {
            startedAt = clock.now();
            upstreamInflight++;
            maxUpstreamInflight = Math.max(maxUpstreamInflight, upstreamInflight);
            const serviceMs = e.medianServiceMs * Math.exp(e.serviceSigma * normal(service));
            const done = clock.setTimer(() => {
              upstreamInflight--;
              busyMs += serviceMs;
              resolve();
            }, serviceMs);
            ctx.signal.addEventListener('abort', () => {
              clock.clearTimer(done);
              upstreamInflight--;
              const used = clock.now() - startedAt;
              busyMs += used;
              wastedMs += used;
              reject(ctx.signal.reason);
            });
          }),
        { timeoutMs: e.deadlineMs },
      )
      .then(
        () => served.push(clock.now() - arrivedAt),
        (error: unknown) => {
          if (isLimitExceededError(error)) shed++;
          else if (isTimeoutError(error) && error.queued) timedOutQueued++;
          else if (isTimeoutError(error)) timedOutRunning++;
          else throw error;
        },
      );
  };

  const scheduleArrival = (): void => {
    const gapMs = -Math.log(1 - arrivals()) / arrivalRatePerMs;
    if (clock.now() + gapMs >= e.durationMs) return;
    clock.setTimer(() => {
      call();
      scheduleArrival();
    }, gapMs);
  };
  scheduleArrival();
  // Run past the last arrival until every call has finished one way or another.
  await clock.run(e.durationMs + 10 * e.deadlineMs);
  if (maxUpstreamInflight > e.capacity) throw new Error(`upstream saw ${maxUpstreamInflight} > ${e.capacity}`);
  if (limiter.inflight !== 0 || limiter.queued !== 0) throw new Error('the experiment leaked a slot');

  served.sort((a, b) => a - b);
  const at = (q: number): number => served[Math.min(served.length - 1, Math.floor(q * served.length))] ?? NaN;
  return {
    queueOrder: e.queueOrder,
    deadlineMs: e.deadlineMs,
    offered,
    ok: served.length,
    shed,
    timedOutQueued,
    timedOutRunning,
    goodputPerSecond: (served.length / e.durationMs) * 1000,
    wastedUpstreamShare: busyMs === 0 ? 0 : wastedMs / busyMs,
    servedP50Ms: at(0.5),
    servedP99Ms: at(0.99),
    servedMaxMs: served[served.length - 1] ?? NaN,
  };
}

/** A standard normal draw (Box-Muller, one of the pair). */
function normal(uniform: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

export function formatRow(r: OverloadResult): string {
  return [
    r.deadlineMs.toString().padStart(6),
    r.queueOrder.padEnd(5),
    r.offered.toString().padStart(6),
    r.goodputPerSecond.toFixed(1).padStart(8),
    r.ok.toString().padStart(6),
    r.shed.toString().padStart(6),
    r.timedOutQueued.toString().padStart(7),
    r.timedOutRunning.toString().padStart(7),
    `${(r.wastedUpstreamShare * 100).toFixed(1).padStart(6)}%`,
    r.servedP50Ms.toFixed(0).padStart(6),
    r.servedP99Ms.toFixed(0).padStart(6),
    r.servedMaxMs.toFixed(0).padStart(6),
  ].join(' |');
}

export const HEADER = ' dl ms |order|offered| goodput/s|    ok|  shed| tmo-q | tmo-run| waste | p50ms | p99ms | maxms';
