import type { Verdict } from '../../../../src/core/verdict';
import type { LimitChange, LimitController } from '../../../../src/limiter/controller';
import { observeAt } from './feed';

/**
 * A scripted closed loop in virtual time, for tests that need exact numbers (support/model.ts is
 * the statistical one). `clients` callers each call again as soon as their call settles; a call
 * starts when in-flight is under `controller.limit` (a plain counter, FIFO waiters). The script
 * decides each call's latency from the in-flight at its start (itself included); a call with
 * `holdMs` marks at its latency (`observeMark`, a stream's first token) and settles `holdMs` later
 * with `marked` set, as the limiter's admission does. Deterministic: no randomness at all.
 */

export interface ScriptedCall {
  latencyMs: number;
  /** Time the permit is held after the mark (a stream's body). 0: no mark. */
  holdMs?: number;
  verdict?: Verdict;
}

export interface CallStart {
  /** Clock time the call starts, ms. */
  now: number;
  /** Calls in flight once it started, itself included. */
  inflight: number;
  /** Calls started before it. */
  index: number;
}

export interface ScriptedOptions {
  controller: LimitController;
  durationMs: number;
  /** Callers; a function of time lets demand change (a pause: 0). */
  clients: number | ((now: number) => number);
  call: (start: CallStart) => ScriptedCall;
}

export interface ScriptedRun {
  changes: LimitChange[];
  /** Calls that settled, by verdict. */
  settled: number;
  /** The most calls in flight at once. */
  peakInflight: number;
}

interface Pending {
  at: number;
  /** 'mark' then 'settle' for a marked call; 'settle' only otherwise. */
  kind: 'mark' | 'settle';
  startedAt: number;
  /** Calls in flight at its admission, itself included (the pipeline's `observation.inflight`). */
  inflight: number;
  call: ScriptedCall;
  seq: number;
}

/** An upstream of 16 servers at 100 ms: processor sharing above 16 calls in flight. */
export const knee = ({ inflight }: CallStart): ScriptedCall => ({ latencyMs: 100 * Math.max(1, inflight / 16) });

export function runScripted(options: ScriptedOptions): ScriptedRun {
  const { controller, durationMs, call } = options;
  const clientsAt = typeof options.clients === 'number' ? () => options.clients as number : options.clients;
  const changes: LimitChange[] = [];
  const subscription = controller.changes.subscribe((change) => changes.push(change));
  const pending: Pending[] = [];
  let seq = 0;
  let inflight = 0;
  let waiting = 0;
  let started = 0;
  let settled = 0;
  let peakInflight = 0;
  let now = 0;

  const admit = (): void => {
    // Callers that are not in flight wait; a pause (fewer clients) lets calls in flight finish.
    waiting = Math.max(0, clientsAt(now) - inflight);
    while (waiting > 0 && inflight < controller.limit) {
      waiting--;
      inflight++;
      if (inflight > peakInflight) peakInflight = inflight;
      const scripted = call({ now, inflight, index: started++ });
      const holdMs = scripted.holdMs ?? 0;
      pending.push({
        at: now + scripted.latencyMs,
        kind: holdMs > 0 ? 'mark' : 'settle',
        startedAt: now,
        inflight,
        call: scripted,
        seq: seq++,
      });
    }
  };

  admit();
  for (;;) {
    let next = -1;
    for (let i = 0; i < pending.length; i++) {
      const p = pending[i]!;
      const best = next < 0 ? undefined : pending[next]!;
      if (best === undefined || p.at < best.at || (p.at === best.at && p.seq < best.seq)) next = i;
    }
    if (next < 0) {
      // Nothing in flight: wait for demand, in 1 ms steps, until the run ends.
      if (now >= durationMs) break;
      now += 1;
      admit();
      continue;
    }
    const event = pending[next]!;
    if (event.at > durationMs) break;
    now = event.at;
    const { call: scripted, inflight: admitted } = event;
    const holdMs = scripted.holdMs ?? 0;
    if (event.kind === 'mark') {
      controller.observeMark?.(scripted.latencyMs, now, inflight);
      event.kind = 'settle';
      event.at = now + holdMs;
      event.seq = seq++;
    } else {
      pending.splice(next, 1);
      observeAt(
        controller,
        {
          verdict: scripted.verdict ?? 'ok',
          latencyMs: scripted.latencyMs,
          durationMs: scripted.latencyMs + holdMs,
          inflight: admitted,
        },
        now,
        inflight,
        holdMs > 0,
      );
      inflight--;
      settled++;
    }
    admit();
  }
  subscription.dispose();
  return { changes, settled, peakInflight };
}

/** The limit after the last change at or before `atMs` (or `initial` before any). */
export function limitAt(changes: readonly LimitChange[], atMs: number, initial: number): number {
  let limit = initial;
  for (const change of changes) {
    if (change.at > atMs) break;
    limit = change.to;
  }
  return limit;
}
