import type { LimitChange, LimitChangeReason, LimitControllerSnapshot, Observation } from '../../../../src/index';
import { EventChannel, type LimitController } from '../../../../src/internal';

export interface ObserveCall {
  observation: Observation;
  now: number;
  inflight: number;
  /** The call reported its latency at a mark before (`observeMark`). */
  marked: boolean;
}

export interface MarkCall {
  latencyMs: number;
  now: number;
  inflight: number;
  /** The calls in flight at the marking call's admission (adr/0127). */
  admitted?: number | undefined;
}

/**
 * A test-only controller: a fixed limit that only the test moves. `setLimit` is what `resize`
 * drives; `limitAfterNextObserve` simulates a window closing inside a settle.
 */
export class StandInController implements LimitController {
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly changes = new EventChannel<LimitChange>();
  readonly observed: ObserveCall[] = [];
  readonly marks: MarkCall[] = [];
  /** When set, the next observe moves the limit here (as a window close would). */
  limitAfterNextObserve: number | undefined = undefined;
  private current: number;

  constructor(limit: number, guardrails: { minLimit?: number; maxLimit?: number } = {}) {
    this.current = limit;
    this.minLimit = guardrails.minLimit ?? 1;
    this.maxLimit = guardrails.maxLimit ?? 10_000;
  }

  get limit(): number {
    return this.current;
  }

  /** Set by admission before each `observe` (adr/0087). */
  settledAt = 0;

  observe(observation: Observation, inflight: number, marked = false): boolean {
    const now = this.settledAt;
    this.observed.push({ observation: { ...observation }, now, inflight, marked }); // Observations are reused after settle
    const next = this.limitAfterNextObserve;
    if (next === undefined) return false;
    this.limitAfterNextObserve = undefined;
    return this.move(next, now, 'no-queue');
  }

  observeMark(latencyMs: number, now: number, inflight: number, admitted?: number): boolean {
    this.marks.push({ latencyMs, now, inflight, admitted });
    return false;
  }

  setLimit(limit: number, now: number): boolean {
    return this.move(limit, now, 'manual');
  }

  snapshot(): LimitControllerSnapshot {
    return {
      algorithm: 'fixed',
      limit: this.current,
      estimate: this.current,
      minLimit: this.minLimit,
      maxLimit: this.maxLimit,
      baselineMs: undefined,
      latencyMs: undefined,
      slowStart: false,
      windows: 0,
      baselineRaises: 0,
      lastChange: undefined,
    };
  }

  private move(limit: number, at: number, reason: LimitChangeReason): boolean {
    const to = Math.min(this.maxLimit, Math.max(this.minLimit, Math.floor(limit)));
    const from = this.current;
    if (to === from) return false;
    this.current = to;
    this.changes.emit({ from, to, direction: to > from ? 'grow' : 'shrink', reason, at });
    return true;
  }
}
