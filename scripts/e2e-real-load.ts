/**
 * Load for `npm run e2e:real` (scripts/e2e-real.ts), generated in the process that hosts the
 * limiter, as a user's service would: every call goes through `limiter.execute(fn, { timeoutMs })`.
 *
 * - Closed loop: N callers, each calling again as soon as its last call ended, or after `thinkMs`
 *   (callers who think between calls, adr/0141). A caller that was shed (or failed) pauses
 *   SHED_PAUSE_MS first, as a client does after a fast 503: without the pause the refused callers
 *   spin on the event loop and the run measures our CPU, not the upstream.
 * - Open loop: Poisson arrivals at a fixed rate (seeded exponential gaps), whether or not earlier
 *   calls finished.
 *
 * Every 100 ms a sampler records the limit, the calls inside fn (the upstream's in-flight from
 * us) and the queue. Each call records when it started and ended, how, and its time inside fn.
 */
import type { IncomingMessage } from 'node:http';
import { Agent, get } from 'node:http';
import { isLimitExceededError, isTimeoutError, type Limiter } from '../src/index';
import { seeded } from '../demo/upstream';
import { type CallRecord, exponentialGapMs, type Outcome, type Sample } from './e2e-real-metrics';

/** One upstream call; resolves when the upstream answered successfully, rejects otherwise. */
export interface Target {
  readonly name: string;
  call(signal: AbortSignal): Promise<void>;
}

export type Load =
  | { readonly kind: 'closed'; readonly callers: number; readonly thinkMs?: number }
  | { readonly kind: 'open'; readonly ratePerSecond: number; readonly seed: number };

export interface ScheduledEvent {
  readonly name: string;
  readonly atMs: number;
  readonly run: () => Promise<void>;
}

export interface RunOptions {
  readonly target: Target;
  readonly limiter: Limiter;
  readonly load: Load;
  readonly durationMs: number;
  /** The per-call budget, queueing included. */
  readonly deadlineMs: number;
  readonly events?: readonly ScheduledEvent[];
}

export interface RunRecord {
  readonly calls: CallRecord[];
  readonly samples: Sample[];
  readonly durationMs: number;
  /** When each scheduled event started (its signal was sent), ms since the run started. */
  readonly events: { readonly name: string; readonly atMs: number }[];
}

/** Ours: a refused client comes back after 10 ms (a fast 503 and a prompt retry). */
export const SHED_PAUSE_MS = 10;
export const SAMPLE_EVERY_MS = 100;

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function outcomeOf(error: unknown): Outcome {
  if (isLimitExceededError(error)) return 'shed';
  if (isTimeoutError(error)) return error.queued ? 'shed' : 'timeout';
  return 'error';
}

export async function runLoad(options: RunOptions): Promise<RunRecord> {
  const { target, limiter, load, durationMs, deadlineMs } = options;
  const calls: CallRecord[] = [];
  const samples: Sample[] = [];
  const events: { name: string; atMs: number }[] = [];
  const errors = new Map<string, number>();
  let upstreamInflight = 0;
  const t0 = performance.now();
  const now = () => performance.now() - t0;

  async function one(): Promise<Outcome> {
    // Written in place: a pg query goes on after its caller's deadline, and its time inside fn
    // arrives after the caller's outcome. A record still running has endMs NaN and counts nowhere.
    const record: Mutable<CallRecord> = { startMs: now(), endMs: Number.NaN, outcome: 'ok', upstreamMs: undefined };
    calls.push(record);
    try {
      await limiter.execute(
        async (ctx) => {
          const enteredMs = now();
          upstreamInflight++;
          try {
            await target.call(ctx.signal);
            record.upstreamMs = now() - enteredMs;
          } finally {
            upstreamInflight--;
          }
        },
        { timeoutMs: deadlineMs },
      );
    } catch (error) {
      record.outcome = outcomeOf(error);
      if (record.outcome === 'error') {
        const key = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
        errors.set(key, (errors.get(key) ?? 0) + 1);
      }
    }
    record.endMs = now();
    return record.outcome;
  }

  const sampler = setInterval(() => {
    samples.push({ tMs: now(), limit: limiter.limit, upstreamInflight, queued: limiter.queued });
  }, SAMPLE_EVERY_MS);
  const scheduled = (options.events ?? []).map(async (event) => {
    await sleep(Math.max(0, event.atMs - now()));
    events.push({ name: event.name, atMs: now() });
    await event.run();
  });

  const pending = new Set<Promise<unknown>>();
  try {
    if (load.kind === 'closed') {
      const thinkMs = load.thinkMs ?? 0;
      const caller = async () => {
        while (now() < durationMs) {
          const outcome = await one();
          if (outcome === 'shed' || outcome === 'error') await sleep(SHED_PAUSE_MS);
          else if (thinkMs > 0) await sleep(thinkMs);
        }
      };
      await Promise.all(Array.from({ length: load.callers }, caller));
    } else {
      const random = seeded(load.seed);
      let nextMs = exponentialGapMs(random, load.ratePerSecond);
      while (nextMs < durationMs) {
        const wait = nextMs - now();
        if (wait > 1) await sleep(wait - 1);
        else if (wait > 0) await sleep(0);
        while (nextMs <= now() && nextMs < durationMs) {
          const call = one().finally(() => pending.delete(call));
          pending.add(call);
          nextMs += exponentialGapMs(random, load.ratePerSecond);
        }
      }
      await Promise.all([...pending]);
    }
    await Promise.all(scheduled);
  } finally {
    clearInterval(sampler);
  }
  // Calls whose fn outlived the caller's deadline (a pg query runs on) are drained before the next
  // run starts, so one run's leftovers do not load the next.
  const drainBy = performance.now() + 10_000;
  while (upstreamInflight > 0 && performance.now() < drainBy) await sleep(10);
  if (errors.size > 0) {
    const list = [...errors].map(([k, n]) => `${n} x ${k}`).join('; ');
    console.log(`    (upstream errors: ${list.slice(0, 400)})`);
  }
  return { calls, samples, durationMs, events };
}

// ---------------------------------------------------------------------------------------------

/** An HTTP GET target over node:http with one keep-alive agent (gunicorn's sync workers close anyway). */
export function httpTarget(name: string, url: string): Target & { close(): void } {
  const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  return {
    name,
    call(signal: AbortSignal) {
      return new Promise<void>((resolve, reject) => {
        const request = get(url, { agent, signal }, (response: IncomingMessage) => {
          response.resume();
          response.once('error', reject);
          response.once('end', () => {
            if (response.statusCode === 200) resolve();
            else reject(new Error(`HTTP ${String(response.statusCode)}`));
          });
        });
        request.once('error', reject);
      });
    },
    close() {
      agent.destroy();
    },
  };
}
