import type { Verdict } from '../../../../src/core/verdict';
import type { LimitController } from '../../../../src/limiter/controller';
import { mulberry32 } from '../../../helpers/mulberry32';
import { observeAt } from './feed';

/**
 * A tiny deterministic closed-loop model for tuning the control loop (not the simulator: that is
 * sim/, built separately). Virtual time; an upstream with `capacity` servers and a service time,
 * so a call started with n calls in flight takes service x max(1, n / capacity) x jitter
 * (processor sharing, frozen at the call's start); clients that call again as soon as their call
 * settles (closed loop) or arrivals at a fixed rate (open loop); admission is a plain counter
 * against `controller.limit` with an unbounded FIFO wait. Observations go straight to the
 * controller, with `latencyMs` excluding the wait, as the real limiter reports them.
 */

/** mulberry32: a small seeded PRNG, good enough for jitter. */
export const seeded = mulberry32;

export interface UpstreamState {
  /** Calls the upstream serves at full speed at once (its concurrency capacity). */
  capacity: number;
  /** Service time of one call at or below capacity, ms. */
  serviceMs: number;
  /** Closed loop: clients, each with one call in flight or waiting. 0 with an open loop. */
  clients: number;
  /** Open loop: arrivals per minute (evenly spaced with jitter). 0 with a closed loop. */
  arrivalsPerMinute: number;
  /** Share of calls that fail fast (verdict `failure`, latency `failureLatencyMs`). */
  fastFailureShare: number;
  failureLatencyMs: number;
  /** The verdict fast failures settle with (default 'failure'; 'ok' models a limiter that samples them). */
  failureVerdict: Verdict;
  /** Calls longer than this end as `timeout` at the deadline. Infinity: none. */
  deadlineMs: number;
}

export interface ModelOptions {
  controller: LimitController;
  seed: number;
  durationMs: number;
  initial: Partial<UpstreamState> & { capacity: number; serviceMs: number };
  /** Changes applied at given times. */
  schedule?: Array<{ atMs: number; set: Partial<UpstreamState> }>;
  /** Relative jitter of the service time (lognormal sigma). Default 0.1. */
  jitter?: number;
  /** Sample the limit every this many ms. Default 1000. */
  sampleEveryMs?: number;
}

export interface Sample {
  atMs: number;
  limit: number;
  baselineMs: number | undefined;
  latencyMs: number | undefined;
  inflight: number;
}

export interface ModelRun {
  samples: Sample[];
  /** Completion times of successful calls (for throughput). */
  completions: Float64Array;
  completed: number;
  /** Largest queuedMs seen (the wait in our own queue). */
  maxQueuedMs: number;
}

/** A binary min-heap of completion events on parallel arrays. */
class EventHeap {
  times: number[] = [];
  payload: number[] = [];
  get size(): number {
    return this.times.length;
  }
  push(time: number, data: number): void {
    const times = this.times;
    const payload = this.payload;
    let index = times.length;
    times.push(time);
    payload.push(data);
    while (index > 0) {
      const parent = (index - 1) >> 1;
      if (times[parent]! <= time) break;
      times[index] = times[parent]!;
      payload[index] = payload[parent]!;
      index = parent;
    }
    times[index] = time;
    payload[index] = data;
  }
  peekTime(): number {
    return this.times[0]!;
  }
  /** Removes the earliest event; returns its payload. */
  pop(): number {
    const times = this.times;
    const payload = this.payload;
    const top = payload[0]!;
    const lastTime = times.pop()!;
    const lastData = payload.pop()!;
    const size = times.length;
    if (size === 0) return top;
    let index = 0;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && times[right]! < times[left]! ? right : left;
      if (times[child]! >= lastTime) break;
      times[index] = times[child]!;
      payload[index] = payload[child]!;
      index = child;
    }
    times[index] = lastTime;
    payload[index] = lastData;
    return top;
  }
}

/** Standard normal from two uniforms (Box-Muller). */
function normal(random: () => number): number {
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const _ARRIVAL = -1;

export function runModel(options: ModelOptions): ModelRun {
  const { controller, durationMs } = options;
  const random = seeded(options.seed);
  const jitter = options.jitter ?? 0.1;
  const sampleEveryMs = options.sampleEveryMs ?? 1000;
  const state: UpstreamState = {
    clients: 0,
    arrivalsPerMinute: 0,
    fastFailureShare: 0,
    failureLatencyMs: 1,
    failureVerdict: 'failure',
    deadlineMs: Infinity,
    ...options.initial,
  };
  const schedule = [...(options.schedule ?? [])].sort((a, b) => a.atMs - b.atMs);
  let nextChange = 0;

  const heap = new EventHeap();
  // Per call: start time, latency, verdict code, queued ms. Slots are recycled.
  const starts: number[] = [];
  const latencies: number[] = [];
  const verdicts: Verdict[] = [];
  const queued: number[] = [];
  const freeSlots: number[] = [];
  /** Waiting callers: their arrival times, FIFO. */
  const waiting: number[] = [];
  let waitingHead = 0;

  let inflight = 0;
  let now = 0;
  let maxQueuedMs = 0;
  const completions = new Float64Array(Math.max(1024, Math.ceil(durationMs)));
  let completionTimes = completions;
  let completed = 0;
  const samples: Sample[] = [];
  let nextSampleAt = 0;

  const start = (arrivedAt: number): void => {
    inflight++;
    const slot = freeSlots.length > 0 ? freeSlots.pop()! : starts.length;
    let latency: number;
    let verdict: Verdict = 'ok';
    if (state.fastFailureShare > 0 && random() < state.fastFailureShare) {
      latency = state.failureLatencyMs;
      verdict = state.failureVerdict;
    } else {
      const load = Math.max(1, inflight / state.capacity);
      latency = state.serviceMs * load * Math.exp(jitter * normal(random));
      if (latency > state.deadlineMs) {
        latency = state.deadlineMs;
        verdict = 'timeout';
      }
    }
    starts[slot] = now;
    latencies[slot] = latency;
    verdicts[slot] = verdict;
    queued[slot] = now - arrivedAt;
    if (now - arrivedAt > maxQueuedMs) maxQueuedMs = now - arrivedAt;
    heap.push(now + latency, slot);
  };

  const admitWaiting = (): void => {
    while (waitingHead < waiting.length && inflight < controller.limit) {
      start(waiting[waitingHead++]!);
    }
    if (waitingHead > 4096 && waitingHead * 2 > waiting.length) {
      waiting.splice(0, waitingHead);
      waitingHead = 0;
    }
  };

  const arrive = (): void => {
    waiting.push(now);
    admitWaiting();
  };

  const applySchedule = (): void => {
    while (nextChange < schedule.length && schedule[nextChange]!.atMs <= now) {
      const previousClients = state.clients;
      Object.assign(state, schedule[nextChange]!.set);
      nextChange++;
      for (let extra = previousClients; extra < state.clients; extra++) arrive();
    }
  };

  // Closed loop: every client arrives at time 0. Open loop: the first arrival event.
  for (let client = 0; client < state.clients; client++) arrive();
  const arrivalGapMs = (): number => {
    const mean = 60_000 / state.arrivalsPerMinute;
    return mean * (0.5 + random()); // evenly spaced, +-50% jitter
  };
  let nextArrivalAt = state.arrivalsPerMinute > 0 ? arrivalGapMs() : Infinity;

  for (;;) {
    const nextCompletion = heap.size > 0 ? heap.peekTime() : Infinity;
    const nextScheduled = nextChange < schedule.length ? schedule[nextChange]!.atMs : Infinity;
    const next = Math.min(nextCompletion, nextArrivalAt, nextSampleAt, nextScheduled);
    if (next > durationMs) break;
    now = next;
    if (now === nextSampleAt) {
      const snapshot = controller.snapshot();
      samples.push({
        atMs: now,
        limit: controller.limit,
        baselineMs: snapshot.baselineMs,
        latencyMs: snapshot.latencyMs,
        inflight,
      });
      nextSampleAt += sampleEveryMs;
      continue;
    }
    if (now === nextScheduled) {
      applySchedule();
      if (state.arrivalsPerMinute > 0 && nextArrivalAt === Infinity) nextArrivalAt = now + arrivalGapMs();
      if (state.arrivalsPerMinute === 0) nextArrivalAt = Infinity;
      continue;
    }
    if (now === nextArrivalAt) {
      arrive();
      nextArrivalAt = state.arrivalsPerMinute > 0 ? now + arrivalGapMs() : Infinity;
      continue;
    }
    const slot = heap.pop();
    const verdict = verdicts[slot]!;
    observeAt(
      controller,
      { verdict, latencyMs: latencies[slot]!, durationMs: latencies[slot]!, queuedMs: queued[slot]! },
      now,
      inflight,
    );
    inflight--;
    freeSlots.push(slot);
    if (verdict === 'ok') {
      if (completed === completionTimes.length) {
        const grown = new Float64Array(completionTimes.length * 2);
        grown.set(completionTimes);
        completionTimes = grown;
      }
      completionTimes[completed++] = now;
    }
    // Closed loop: the client calls again at once.
    if (state.clients > 0 && state.arrivalsPerMinute === 0) {
      if (inflight + (waiting.length - waitingHead) < state.clients) waiting.push(now);
    }
    admitWaiting();
  }
  return { samples, completions: completionTimes, completed, maxQueuedMs };
}

export interface Span {
  meanLimit: number;
  minLimit: number;
  maxLimit: number;
  /** Half the peak-to-peak swing of the limit, relative to its mean. */
  oscillation: number;
  /** Successful completions per second. */
  throughput: number;
  meanLatencyMs: number;
  lastBaselineMs: number;
}

/** Statistics of the limit over [fromMs, toMs). */
export function span(run: ModelRun, fromMs: number, toMs: number): Span {
  let sum = 0;
  let count = 0;
  let low = Infinity;
  let high = -Infinity;
  let latencySum = 0;
  let latencyCount = 0;
  let lastBaselineMs = Number.NaN;
  for (const sample of run.samples) {
    if (sample.atMs < fromMs || sample.atMs >= toMs) continue;
    sum += sample.limit;
    count++;
    if (sample.limit < low) low = sample.limit;
    if (sample.limit > high) high = sample.limit;
    if (sample.latencyMs !== undefined) {
      latencySum += sample.latencyMs;
      latencyCount++;
    }
    if (sample.baselineMs !== undefined) lastBaselineMs = sample.baselineMs;
  }
  let done = 0;
  for (let index = 0; index < run.completed; index++) {
    const at = run.completions[index]!;
    if (at >= fromMs && at < toMs) done++;
  }
  const mean = sum / count;
  return {
    meanLimit: mean,
    minLimit: low,
    maxLimit: high,
    oscillation: (high - low) / 2 / mean,
    throughput: done / ((toMs - fromMs) / 1000),
    meanLatencyMs: latencySum / latencyCount,
    lastBaselineMs,
  };
}

export function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : String(value);
}

/**
 * The time from `fromMs` after which every sample up to `toMs` stays within `tolerance` of
 * `target` (relative); NaN if it never settles.
 */
export function settledAfter(run: ModelRun, fromMs: number, toMs: number, target: number, tolerance: number): number {
  let settledAt = Number.NaN;
  for (const sample of run.samples) {
    if (sample.atMs < fromMs || sample.atMs >= toMs) continue;
    const inside = Math.abs(sample.limit - target) <= tolerance * target;
    if (!inside) settledAt = Number.NaN;
    else if (Number.isNaN(settledAt)) settledAt = sample.atMs;
  }
  return settledAt - fromMs;
}

/** The lowest limit sampled in [fromMs, toMs). */
export function lowestLimit(run: ModelRun, fromMs: number, toMs: number): number {
  let lowest = Infinity;
  for (const sample of run.samples) {
    if (sample.atMs >= fromMs && sample.atMs < toMs && sample.limit < lowest) lowest = sample.limit;
  }
  return lowest;
}

/** Prints one measured figure beside its criterion. */
export function report(scenario: string, figures: string): void {
  console.log(`[closed-loop] ${scenario}: ${figures}`);
}
