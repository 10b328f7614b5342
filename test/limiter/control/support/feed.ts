import type { Verdict } from '../../../../src/core/verdict';
import type { Observation } from '../../../../src/core/observation';
import type { LimitController } from '../../../../src/limiter/controller';

export interface Stream {
  /** Settlements, evenly spaced over [fromMs, toMs). */
  count: number;
  fromMs: number;
  toMs: number;
  latencyMs?: number;
  verdict?: Verdict;
  /** In flight at each settlement, the settling call included. Default: the current limit. */
  inflight?: number;
  queuedMs?: number;
}

/**
 * One settle at `now`, as admission feeds it: the time through the controller's `settledAt` field,
 * then `observe` (adr/0087).
 */
export function observeAt(
  controller: LimitController,
  observation: Observation,
  now: number,
  inflight: number,
  marked?: boolean,
): boolean {
  controller.settledAt = now;
  return controller.observe(observation, inflight, marked);
}

/** Feeds a stream of identical settlements to a controller; returns how many changed the limit. */
export function feed(controller: LimitController, stream: Stream): number {
  let changes = 0;
  const step = (stream.toMs - stream.fromMs) / stream.count;
  for (let i = 0; i < stream.count; i++) {
    const now = stream.fromMs + i * step;
    const observation = {
      verdict: stream.verdict ?? 'ok',
      latencyMs: stream.latencyMs ?? 100,
      queuedMs: stream.queuedMs ?? 0,
    };
    if (observeAt(controller, observation, now, stream.inflight ?? controller.limit)) changes++;
  }
  return changes;
}

/**
 * Feeds `windows` windows of 2 s, starting at `fromMs`; returns the end time. By default each
 * window is a closed loop pinned at the limit, consistent with Little's law: limit x 2 000 /
 * latency settlements (goodput follows in-flight, as it does below an upstream's knee). With
 * `count`, that many settlements per window instead.
 */
export function feedWindows(
  controller: LimitController,
  windows: number,
  fromMs: number,
  stream: Omit<Stream, 'fromMs' | 'toMs' | 'count'> & { count?: number } = {},
): number {
  let at = fromMs;
  for (let w = 0; w < windows; w++) {
    const inflight = stream.inflight ?? controller.limit;
    const count = stream.count ?? Math.max(1, Math.round((inflight * 2_000) / (stream.latencyMs ?? 100)));
    feed(controller, { ...stream, count, fromMs: at, toMs: at + 2_000 });
    at += 2_000;
  }
  // One more settlement at the boundary closes the last window.
  observeAt(
    controller,
    { verdict: stream.verdict ?? 'ok', latencyMs: stream.latencyMs ?? 100 },
    at,
    stream.inflight ?? controller.limit,
  );
  return at;
}

/**
 * Feeds settlements every `stepMs` from `fromMs` until one closes a window; returns its time (the
 * next window opens there). For tests that need a window to start at a known time.
 */
export function feedUntilClose(
  controller: LimitController,
  fromMs: number,
  stream: { verdict?: Verdict; latencyMs?: number; inflight?: number; stepMs?: number } = {},
): number {
  const windows = controller.snapshot().windows;
  const stepMs = stream.stepMs ?? 10;
  const observation = { verdict: stream.verdict ?? 'ok', latencyMs: stream.latencyMs ?? 100 };
  for (let at = fromMs; ; at += stepMs) {
    observeAt(controller, observation, at, stream.inflight ?? controller.limit);
    if (controller.snapshot().windows > windows) return at;
  }
}
