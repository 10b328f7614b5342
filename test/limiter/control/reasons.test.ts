import { describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/core/observation';
import { resolveControlConfig, type ControlOptions } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type {
  LimitChange,
  LimitChangeReason,
  LimitController,
  LimitControllerSnapshot,
} from '../../../src/limiter/controller';
import { feed, feedUntilClose, feedWindows, observeAt } from './support/feed';
import { runModel } from './support/model';
import { knee, runScripted } from './support/scripted';

/**
 * Every reason the control loop gives for a decision (controller.ts `LimitChangeReason`), each
 * produced by a scenario that drives the loop, not an algorithm alone. The list is checked against
 * the union at compile time: a new reason fails the type check until a scenario covers it.
 */

/** A loop that notes the reason of its last decision after every call into it. */
class Recording implements LimitController {
  readonly reasons = new Set<LimitChangeReason>();
  readonly inner: LimitControlLoop;
  constructor(options: ControlOptions = {}) {
    this.inner = new LimitControlLoop(resolveControlConfig(options));
  }
  get limit(): number {
    return this.inner.limit;
  }
  get minLimit(): number {
    return this.inner.minLimit;
  }
  get maxLimit(): number {
    return this.inner.maxLimit;
  }
  get changes() {
    return this.inner.changes;
  }
  get settledAt(): number {
    return this.inner.settledAt;
  }
  set settledAt(now: number) {
    this.inner.settledAt = now;
  }
  observe(observation: Observation, inflight: number, marked?: boolean): boolean {
    return this.note(this.inner.observe(observation, inflight, marked));
  }
  observeMark(latencyMs: number, now: number, inflight: number): boolean {
    return this.note(this.inner.observeMark(latencyMs, now, inflight));
  }
  setLimit(limit: number, now: number): boolean {
    return this.note(this.inner.setLimit(limit, now));
  }
  snapshot(): LimitControllerSnapshot {
    return this.inner.snapshot();
  }
  private note(changed: boolean): boolean {
    const reason = this.inner.snapshot().lastChange?.reason;
    if (reason !== undefined) this.reasons.add(reason);
    return changed;
  }
}

/** 16 servers at 100 ms (jitter 10%), 400 callers: a slow start, a drain, then steering. */
const steadyRuns = new Map<string, Recording>();
function steady(algorithm: 'vegas' | 'gradient2', durationMs: number): Recording {
  const key = `${algorithm} ${durationMs}`;
  let recording = steadyRuns.get(key);
  if (recording === undefined) {
    recording = new Recording({ algorithm });
    runModel({ controller: recording, seed: 7, durationMs, initial: { capacity: 16, serviceMs: 100, clients: 400 } });
    steadyRuns.set(key, recording);
  }
  return recording;
}

/** Past the slow start at 30 in flight and 100 ms; a window opens at `open`. */
function steering(options: ControlOptions = {}): { recording: Recording; open: number } {
  const recording = new Recording(options);
  const settled = feedWindows(recording, 2, 0, { inflight: 30 });
  return { recording, open: feedUntilClose(recording, settled, { inflight: 30 }) };
}

/** One 2 s window from `open` of 200 answers at 100 ms and, after every fifth, a refusal. */
function overloadWindow(recording: Recording, open: number): number {
  for (let i = 1; i <= 200; i++) {
    observeAt(recording, { verdict: 'ok', latencyMs: 100 }, open + i * 10 - 1, 10);
    if (i % 5 === 0) observeAt(recording, { verdict: 'overload', latencyMs: 1 }, open + i * 10, 10);
  }
  observeAt(recording, { verdict: 'ok', latencyMs: 100 }, open + 2_100, 10);
  return open + 2_100;
}

const SCENARIOS = {
  'slow-start': () => {
    const recording = new Recording();
    runScripted({ controller: recording, durationMs: 300, clients: 400, call: () => ({ latencyMs: 100 }) });
    return recording;
  },
  drain: () => {
    const recording = new Recording();
    runScripted({
      controller: recording,
      durationMs: 1_100,
      clients: 400,
      call: knee,
    });
    return recording;
  },
  'no-queue': () => steady('vegas', 60_000),
  'queue-below-alpha': () => steady('vegas', 60_000),
  'queue-within-band': () => steady('vegas', 60_000),
  'queue-above-beta': () => steady('vegas', 60_000),
  'invalid-band': () => steering({ alpha: () => Number.NaN }).recording,
  'latency-within-tolerance': () => steady('gradient2', 120_000),
  headroom: () => steady('gradient2', 120_000),
  'latency-above-tolerance': () => steady('gradient2', 120_000),
  'healthy-window': () => aimdPastItsSlowStart().recording,
  'no-samples': () => {
    const { recording, at } = aimdPastItsSlowStart();
    // A window of failures alone closes at maxWindowMs (30 s) with no latency sample.
    feed(recording, { count: 100, fromMs: at, toMs: at + 40_000, verdict: 'failure', latencyMs: 1 });
    return recording;
  },
  fixed: () => {
    const recording = new Recording({ algorithm: 'fixed', initialLimit: 7 });
    feedWindows(recording, 1, 0, { inflight: 7 });
    return recording;
  },
  overload: () => {
    const { recording, open } = steering();
    overloadWindow(recording, open);
    return recording;
  },
  timeout: () => {
    const { recording, open } = steering();
    feedUntilClose(recording, open + 1, { verdict: 'timeout', latencyMs: 5_000, stepMs: 40, inflight: 30 });
    return recording;
  },
  'overload-hold': () => {
    const { recording, open } = steering();
    feedWindows(recording, 2, overloadWindow(recording, open), { inflight: 10 });
    return recording;
  },
  'app-limited': () => {
    const recording = new Recording();
    feedWindows(recording, 10, 0, { inflight: 3 });
    return recording;
  },
  failures: () => {
    const { recording, open } = steering();
    for (let w = 0; w < 3; w++) {
      const at = open + w * 2_000;
      feed(recording, { count: 40, fromMs: at, toMs: at + 1_000, latencyMs: 100, inflight: 30 });
      feed(recording, {
        count: 60,
        fromMs: at + 1_000,
        toMs: at + 2_000,
        verdict: 'failure',
        latencyMs: 1,
        inflight: 30,
      });
    }
    return recording;
  },
  'warming-up': () => steering().recording,
  'baseline-raised': () => {
    const recording = new Recording();
    const settled = feedWindows(recording, 20, 0, { inflight: 30 }); // app-limited at 60
    const at = feedUntilClose(recording, settled, { inflight: 30 });
    feedWindows(recording, 1, at + 1, { inflight: 30, latencyMs: 300 }); // a latency jump
    return recording;
  },
  'at-min': () => {
    const { recording, open } = steering();
    feedWindows(recording, 30, open, { verdict: 'timeout', latencyMs: 5_000 });
    return recording;
  },
  'at-max': () => {
    const recording = new Recording({ maxLimit: 30 });
    feedWindows(recording, 2, 0);
    return recording;
  },
  manual: () => {
    const recording = new Recording();
    recording.setLimit(5, 0);
    return recording;
  },
} satisfies Partial<Record<LimitChangeReason, () => Recording>>;

/** Reasons in the union that the loop never gives (reported): an idle gap moves no limit (adr/0140). */
const NEVER_EMITTED = ['idle-restart', 'invalid-step'] as const satisfies readonly LimitChangeReason[];

// Compile-time: every reason is either covered by a scenario or listed as never emitted.
type Uncovered = Exclude<LimitChangeReason, keyof typeof SCENARIOS | (typeof NEVER_EMITTED)[number]>;
const everyReasonCovered: [Uncovered] extends [never] ? true : Uncovered = true;

/** aimd past its slow start (ended by a window of overloads), binding at the limit; the last settle at `at`. */
function aimdPastItsSlowStart(): { recording: Recording; at: number } {
  const recording = new Recording({ algorithm: 'aimd', initialLimit: 10 });
  let at = feedWindows(recording, 1, 0, { verdict: 'overload', latencyMs: 1, count: 20 });
  expect(recording.snapshot().slowStart).toBe(false);
  at = feedWindows(recording, 3, at);
  return { recording, at };
}

describe('every reason the control loop gives', () => {
  it('has a scenario for each reason in the union but those it never gives', () => {
    expect(everyReasonCovered).toBe(true);
    expect(Object.keys(SCENARIOS)).toHaveLength(23);
  });

  it.each(Object.entries(SCENARIOS))('gives %s', (reason, scenario) => {
    expect([...scenario().reasons]).toContain(reason);
  });

  it('gives none of the reasons it never emits, in any scenario', () => {
    const seen = new Set<LimitChangeReason>();
    for (const scenario of Object.values(SCENARIOS)) for (const reason of scenario().reasons) seen.add(reason);
    for (const reason of NEVER_EMITTED) expect(seen.has(reason)).toBe(false);
  });

  it('names nothing for an idle gap once steering: the limit and the baseline stay (adr/0031, adr/0140)', () => {
    const { recording, open } = steering();
    const changes: LimitChange[] = [];
    recording.changes.subscribe((change) => changes.push(change));
    const before = recording.snapshot();
    // After two minutes with nothing in flight, the first settle finds the limit binding: no slow start grows it.
    observeAt(recording, { verdict: 'ok', latencyMs: 100 }, open + 120_000, 200);
    expect(recording.snapshot()).toMatchObject({
      slowStart: false,
      limit: before.limit,
      baselineMs: before.baselineMs,
      latencyMs: undefined,
    });
    expect(changes).toEqual([]);
  });
});
