import { describe, expect, it } from 'vitest';
import type { Observation } from '../../../src/core/observation';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import type { LimitChange, LimitController } from '../../../src/limiter/controller';
import { type ModelRun, runModel, type UpstreamState } from './support/model';

/**
 * The control loop has two settle paths (adr/0087): a short one V8 inlines into the settle, and a
 * full one for marked calls, idle gaps and the windows after a drain. A stream's mark takes the full
 * path at every call, so a slow start, its drain and its settling run there for streams and on the
 * short path for plain calls. With no hold after the mark (the settle at the mark's instant) the
 * two must decide the same, change for change.
 */

/** A controller that hands each settle to `inner` through `settle` (at the settle's time). */
function feeding(
  inner: LimitControlLoop,
  settle: (observation: Observation, now: number, inflight: number, marked?: boolean) => boolean,
): LimitController {
  return {
    get limit() {
      return inner.limit;
    },
    minLimit: inner.minLimit,
    maxLimit: inner.maxLimit,
    changes: inner.changes,
    settledAt: 0,
    observe(observation: Observation, inflight: number, marked?: boolean): boolean {
      return settle(observation, this.settledAt, inflight, marked);
    },
    setLimit: (limit, now) => inner.setLimit(limit, now),
    snapshot: () => inner.snapshot(),
  };
}

/** Feeds every sample as a mark and then its settle at the same instant; other verdicts as they are. */
function markingEverySample(inner: LimitControlLoop): LimitController {
  return feeding(inner, (observation, now, inflight, marked) => {
    let changed = false;
    if (observation.verdict === 'ok' || observation.verdict === 'answered') {
      changed = inner.observeMark(observation.latencyMs, now, inflight);
      marked = true;
    }
    inner.settledAt = now;
    return inner.observe(observation, inflight, marked) || changed;
  });
}

/** Feeds every `ok` as `answered` (a response the caller classed as an error: still a latency sample). */
function answeringEverySample(inner: LimitControlLoop): LimitController {
  return feeding(inner, (observation, now, inflight, marked) => {
    inner.settledAt = now;
    const answered = observation.verdict === 'ok' ? { ...observation, verdict: 'answered' as const } : observation;
    return inner.observe(answered, inflight, marked);
  });
}

function run(
  mark: boolean | 'answered',
  initial: Partial<UpstreamState> & { capacity: number; serviceMs: number },
  schedule = [],
) {
  const loop = new LimitControlLoop(resolveControlConfig({}));
  const changes: LimitChange[] = [];
  loop.changes.subscribe((change) => changes.push(change));
  const model: ModelRun = runModel({
    controller: mark === 'answered' ? answeringEverySample(loop) : mark ? markingEverySample(loop) : loop,
    seed: 7,
    durationMs: 60_000,
    initial,
    schedule,
    jitter: 0.2,
    sampleEveryMs: 500,
  });
  // The estimate to 1e-9: the two paths sum the same latencies in another order (the last bit differs).
  const { estimate, ...snapshot } = loop.snapshot();
  return { changes, limits: model.samples.map((s) => s.limit), snapshot, estimate };
}

describe('the control loop: the full settle path decides as the short one', () => {
  it('a closed loop past capacity: the slow start, its drain, the settling and the baseline window', () => {
    const upstream = { capacity: 20, serviceMs: 100, clients: 80 };
    const plain = run(false, upstream);
    const marked = run(true, upstream);
    // The run goes through every phase the full path has code for.
    const reasons = new Set(plain.changes.map((change) => change.reason));
    expect(reasons).toContain('slow-start');
    expect(reasons).toContain('drain');
    expect(plain.snapshot.slowStart).toBe(false);
    expect(plain.snapshot.windows).toBeGreaterThan(10);
    expect(marked.changes).toEqual(plain.changes);
    expect(marked.limits).toEqual(plain.limits);
    expect(marked.snapshot).toEqual(plain.snapshot);
    expect(marked.estimate).toBeCloseTo(plain.estimate, 9);
  });

  it('a latency jump (the upstream 4x slower at 30 s): its drain and re-measure', () => {
    const upstream = { capacity: 20, serviceMs: 50, clients: 60 };
    const slower = [{ atMs: 30_000, set: { serviceMs: 200 } }];
    const plain = run(false, upstream, slower as never);
    const marked = run(true, upstream, slower as never);
    expect(plain.changes.filter((change) => change.at > 30_000).length).toBeGreaterThan(0);
    expect(marked.changes).toEqual(plain.changes);
    expect(marked.snapshot).toEqual(plain.snapshot);
    expect(marked.estimate).toBeCloseTo(plain.estimate, 9);
  });

  it("steers an upstream that answers every call with an error the caller classed 'answered' as one that answers 'ok'", () => {
    const upstream = { capacity: 20, serviceMs: 100, clients: 80 };
    const plain = run(false, upstream);
    const answered = run('answered', upstream);
    expect(answered.changes).toEqual(plain.changes);
    expect(answered.snapshot).toEqual(plain.snapshot);
  });
});
