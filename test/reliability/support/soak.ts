import { breaker } from '../../../src/breaker/index';
import { bulkhead } from '../../../src/bulkhead/bulkhead';
import type { Clock } from '../../../src/core/clock';
import type { Verdict } from '../../../src/core/verdict';
import { limiter } from '../../../src/limiter/limiter';
import { pipeline } from '../../../src/pipeline/pipeline';
import { timeout } from '../../../src/timeout/timeout';
import { seeded } from './random';

/**
 * The soak (issue 11): a million seeded calls through breaker -> limiter -> bulkhead -> timeout
 * with random verdicts, caller aborts, deadlines and synchronous faults, and a short outage in
 * every 100 000 calls that opens the breaker, on a virtual clock. It
 * counts what must be zero at the end (permits, bulkhead slots, waiters, armed timers, calls not
 * settled exactly once) and measures retained heap after warm-up and at the end.
 * `npm run soak` runs the full count (scripts/soak.ts); CI runs a reduced count
 * (test/reliability/soak.test.ts).
 */

interface Timer {
  at: number;
  seq: number;
  callback: () => void;
  live: boolean;
}

/** A virtual clock with a binary heap of timers and lazy cancellation. */
class HeapClock implements Clock {
  time = 0;
  private seq = 0;
  private heap: Timer[] = [];
  live = 0;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): Timer {
    const t: Timer = { at: this.time + Math.max(0, delayMs), seq: this.seq++, callback, live: true };
    const h = this.heap;
    h.push(t);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
    this.live++;
    return t;
  }

  clearTimer(handle: unknown): void {
    const t = handle as Timer;
    if (t.live) {
      t.live = false;
      this.live--;
    }
  }

  /** The time of the next live timer, or Infinity. */
  nextAt(): number {
    this.dropDead();
    return this.heap[0]?.at ?? Infinity;
  }

  /** Fires every live timer due at or before `until`, in order; moves time to `until`. */
  fireUntil(until: number): void {
    for (;;) {
      this.dropDead();
      const top = this.heap[0];
      if (top === undefined || top.at > until) break;
      this.pop();
      top.live = false;
      this.live--;
      this.time = top.at;
      top.callback();
    }
    this.time = Math.max(this.time, until);
  }

  private dropDead(): void {
    while (this.heap.length > 0 && !this.heap[0]!.live) this.pop();
  }

  private pop(): void {
    const h = this.heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && before(h[l]!, h[m]!)) m = l;
      if (r < h.length && before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
  }
}

function before(a: Timer, b: Timer): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export interface SoakOptions {
  calls: number;
  seed?: number;
  /** Concurrent clients, each starting its next call when the last one settles. Default 64: past the
   * initial limit of 20, so the queue and the shedding zone are both in play. */
  clients?: number;
  /** Called about every tenth of the run. */
  onProgress?: (done: number) => void;
}

export interface SoakResult {
  readonly calls: number;
  readonly seed: number;
  readonly wallMs: number;
  readonly virtualMs: number;
  /** Limiter permits still held + bulkhead slots still held + waiters still queued. */
  readonly leakedPermits: number;
  readonly pendingTimers: number;
  /** Calls whose promise did not settle exactly once. */
  readonly badSettles: number;
  /** MB after GC: before the pipeline exists, after 10 % of the calls (warm), and at the end. */
  readonly heapMB: { readonly start: number; readonly warm: number; readonly end: number };
  readonly outcomes: Readonly<Record<string, number>>;
  readonly breakerOpens: number;
  readonly finalLimit: number;
}

type Behaviour = 'ok' | 'answered' | 'overload' | 'failure' | 'throw-sync' | 'plain' | 'slow' | 'hang-then-abort';

/** Weights out of 1000: mostly healthy, with every fault the issue lists. */
/** An outage lasts this long: at one call in flight (5-65 ms each) dozens fail, more than the breaker's 10 in a row. */
const OUTAGE_MS = 3_000;

const BEHAVIOURS: ReadonlyArray<readonly [Behaviour, number]> = [
  ['ok', 800],
  ['answered', 60],
  ['overload', 10],
  ['failure', 50],
  ['throw-sync', 20],
  ['plain', 40],
  ['slow', 10], // past the deadline: a timeout
  ['hang-then-abort', 10], // the caller aborts it
];

function pick(random: () => number): Behaviour {
  let x = random() * 1000;
  for (const [b, w] of BEHAVIOURS) {
    x -= w;
    if (x < 0) return b;
  }
  return 'ok';
}

export async function heapUsedMB(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  for (let i = 0; i < 3; i++) {
    gc?.();
    await new Promise((r) => setImmediate(r));
  }
  return Math.round((process.memoryUsage().heapUsed / 1_048_576) * 10) / 10;
}

/** Makes `globalThis.gc` available without a command-line flag (Node only). */
export async function exposeGc(): Promise<void> {
  if (typeof (globalThis as { gc?: unknown }).gc === 'function') return;
  const v8 = await import('node:v8');
  const vm = await import('node:vm');
  v8.setFlagsFromString('--expose-gc');
  (globalThis as { gc?: unknown }).gc = vm.runInNewContext('gc');
}

export async function runSoak(options: SoakOptions): Promise<SoakResult> {
  const seed = options.seed ?? 11;
  const total = options.calls;
  const clients = options.clients ?? 64;
  await exposeGc();
  const heapStart = await heapUsedMB();
  const wallStart = performance.now();

  const random = seeded(seed);
  const clock = new HeapClock();
  const b = breaker({ clock, openMs: 2_000, windowMs: 10_000 });
  const l = limiter({ clock, random: seeded(seed + 1) });
  const bh = bulkhead({ maxConcurrent: 150, clock });
  const p = pipeline(b, l, bh, timeout({ timeoutMs: 250, clock }), {
    classify: (s) => (s.status === 'fulfilled' ? (s.value as Verdict) : 'failure'),
  });
  let opens = 0;
  b.onOpen(() => opens++);

  const outcomes: Record<string, number> = {};
  let started = 0;
  let settledOnce = 0;
  let badSettles = 0;
  let heapWarm = Number.NaN;
  const progressEvery = Math.max(1, Math.floor(total / 10));
  const outagePeriod = Math.min(100_000, total);
  let outageUntil = -Infinity;

  const startCall = (): void => {
    if (started >= total) return;
    const n = ++started;
    // An outage of OUTAGE_MS of virtual time from the middle of every 100 000 calls (or of a shorter
    // run): 9 in 10 fail, so the breaker opens, probes and closes again. Timed, not counted in calls:
    // how many calls it spans depends on how many the limiter admits meanwhile.
    if (n % outagePeriod === Math.floor(outagePeriod / 2)) outageUntil = clock.time + OUTAGE_MS;
    const outage = clock.time < outageUntil;
    const behaviour = outage && random() < 0.9 ? 'failure' : pick(random);
    const latencyMs = 5 + Math.floor(random() * 60);
    let signal: AbortSignal | undefined;
    if (behaviour === 'hang-then-abort') {
      const controller = new AbortController();
      signal = controller.signal;
      clock.setTimer(() => controller.abort(new Error('caller left')), 20 + Math.floor(random() * 100));
    }
    let settles = 0;
    const done = (kind: string, retryAfterMs?: number) => {
      settles++;
      if (settles === 1) {
        settledOnce++;
        outcomes[kind] = (outcomes[kind] ?? 0) + 1;
        // The client thinks for a moment, then calls again; refused, it backs off as told (or 20-100 ms).
        const refused =
          kind === 'ERR_RESILIX_LIMIT_EXCEEDED' ||
          kind === 'ERR_RESILIX_CIRCUIT_OPEN' ||
          kind === 'ERR_RESILIX_BULKHEAD_FULL';
        const pauseMs = refused ? (retryAfterMs ?? 20 + Math.floor(random() * 80)) : 1 + Math.floor(random() * 5);
        clock.setTimer(startCall, pauseMs);
      } else badSettles++;
      if (n % progressEvery === 0) options.onProgress?.(n);
    };
    p.execute<Verdict>(
      (ctx) => {
        switch (behaviour) {
          case 'throw-sync':
            throw new Error('sync fault');
          case 'plain':
            return 'ok';
          case 'slow':
            return new Promise<Verdict>((resolve) => clock.setTimer(() => resolve('ok'), 300 + latencyMs));
          case 'hang-then-abort':
            // ends when the caller's abort reaches it through ctx.signal, as a well-behaved fn does
            return new Promise<Verdict>((_resolve, reject) => {
              ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
            });
          default:
            return new Promise<Verdict>((resolve) => clock.setTimer(() => resolve(behaviour), latencyMs));
        }
      },
      signal === undefined ? undefined : { signal },
    ).then(
      () => done('resolved'),
      (e: unknown) =>
        done((e as { code?: string }).code ?? (e as Error).message, (e as { retryAfterMs?: number }).retryAfterMs),
    );
  };

  for (let i = 0; i < clients; i++) startCall();
  // Drive virtual time: fire the timers due at the next instant, then let every promise reaction run.
  let lastWarmCheck = 0;
  // Microtask rounds between instants are cheap; a full macrotask turn every 256 instants lets any
  // longer reaction chain finish (a reaction that finishes an instant late is just another interleaving).
  for (let instant = 0; ; instant++) {
    if ((instant & 255) === 0) await new Promise((r) => setImmediate(r));
    else for (let i = 0; i < 12; i++) await undefined;
    let next = clock.nextAt();
    if (next === Infinity) {
      await new Promise((r) => setImmediate(r));
      next = clock.nextAt();
    }
    if (next === Infinity) break;
    clock.fireUntil(next);
    if (Number.isNaN(heapWarm) && started >= total / 10 && started - lastWarmCheck > 0) {
      lastWarmCheck = started;
      heapWarm = await heapUsedMB();
    }
  }
  // Settle-driven: nothing should be left, but give reactions a last chance.
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  const wallMs = Math.round(performance.now() - wallStart);
  const snapshot = l.snapshot();
  const result: SoakResult = {
    calls: started,
    seed,
    wallMs,
    virtualMs: clock.time,
    leakedPermits: l.inflight + bh.active + l.queued,
    pendingTimers: clock.live,
    badSettles: badSettles + (started - settledOnce),
    heapMB: { start: heapStart, warm: heapWarm, end: 0 },
    outcomes,
    breakerOpens: opens,
    finalLimit: snapshot.limit,
  };
  // Measured with the pipeline still reachable: what it retains after a million calls.
  const heapEnd = await heapUsedMB();
  void p;
  return { ...result, heapMB: { start: heapStart, warm: heapWarm, end: heapEnd } };
}
