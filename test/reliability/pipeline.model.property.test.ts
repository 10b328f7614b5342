import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { VERDICTS, type Verdict } from '../../src/core/verdict';
/**
 * Lets every pending promise reaction run before the invariants are checked. A freed slot may wake
 * a chain of waiters, each refused in turn by a full bulkhead and handing its slot on to the next,
 * longer than any fixed number of microtask turns (CI found one past 10): a macrotask drains them all.
 */
function settleReactions(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
import { PipelineHarness, type Answer, type HowFnEnds, type PipelineSetup } from './support/pipeline-harness';

/**
 * Issue 11: model-based commands over the full pipeline breaker -> limiter -> bulkhead -> timeout,
 * with the real control loop (every algorithm). After every command: each call's promise settled
 * at most once; the limiter's in-flight and the bulkhead's active equal exactly the calls whose
 * work is still running (plus low-level permits held), so no permit leaks and none is freed early;
 * no admission over the limit in force; the limit inside its guardrails; the queue inside its
 * bound; only legal breaker transitions. At the end, with all work finished, everything settled
 * exactly once and nothing is held: in-flight 0, queue 0, bulkhead 0, no timer left armed.
 */

type Model = Record<string, never>;
type Cmd = fc.AsyncCommand<Model, PipelineHarness>;

/** Every verdict the library defines (src/core/verdict.ts), plus a classifier that throws. */
const FINISHES: ReadonlyArray<Verdict | 'classifier-throws'> = [...VERDICTS, 'classifier-throws'];

class Execute implements Cmd {
  constructor(
    readonly how: HowFnEnds,
    readonly timeoutMs: number | undefined,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    h.execute(this.how, this.timeoutMs);
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return `execute(${this.how}, ${String(this.timeoutMs)})`;
  }
}

class Finish implements Cmd {
  constructor(
    readonly pick: number,
    readonly verdict: Verdict | 'classifier-throws' | 'throw',
  ) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    const running = h.running();
    const call = running[this.pick % Math.max(1, running.length)];
    if (call !== undefined) {
      call.finish?.(this.verdict === 'throw' ? new Error('upstream 5xx') : ({ verdict: this.verdict } as Answer));
    }
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return `finish(#${this.pick}, ${this.verdict})`;
  }
}

class Abort implements Cmd {
  constructor(readonly pick: number) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    const open = h.calls.filter((c) => c.outerSettles === 0);
    open[this.pick % Math.max(1, open.length)]?.controller.abort(new Error('caller left'));
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return `abort(#${this.pick})`;
  }
}

class Advance implements Cmd {
  constructor(readonly ms: number) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    // In steps, so promise reactions run between timers about as they would in real time.
    let left = this.ms;
    while (left > 0) {
      const step = Math.min(left, 250);
      h.clock.advance(step);
      left -= step;
      await settleReactions();
    }
    h.checkInvariants();
  }
  toString(): string {
    return `advance(${this.ms})`;
  }
}

class Resize implements Cmd {
  constructor(readonly limit: number) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    const now = h.limiter.resize(this.limit);
    expect(now).toBe(Math.min(Math.max(this.limit, h.setup.minLimit), h.setup.maxLimit));
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return `resize(${this.limit})`;
  }
}

class Isolate implements Cmd {
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    h.isolations.push(h.breaker.isolate());
    expect(h.breaker.state).toBe('isolated');
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return 'isolate()';
  }
}

class ReleaseIsolation implements Cmd {
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    h.isolations.shift()?.dispose();
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return 'disposeIsolation()';
  }
}

class Reset implements Cmd {
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    h.breaker.reset();
    h.isolations.length = 0;
    expect(h.breaker.state).toBe('closed');
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return 'reset()';
  }
}

/** The low-level pair, beside the pipeline on the same limiter: tryAcquire, then settle (maybe twice). */
class TryAcquire implements Cmd {
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    const permit = h.limiter.tryAcquire();
    if (permit !== undefined) h.permits.push({ permit, settled: false });
    h.checkInvariants();
  }
  toString(): string {
    return 'tryAcquire()';
  }
}

class SettlePermit implements Cmd {
  constructor(
    readonly pick: number,
    readonly verdict: Verdict,
    readonly latencyMs: number,
    readonly twice: boolean,
  ) {}
  check(): boolean {
    return true;
  }
  async run(_m: Model, h: PipelineHarness): Promise<void> {
    const held = h.permits.filter((p) => !p.settled);
    const entry = held[this.pick % Math.max(1, held.length)];
    if (entry !== undefined) {
      entry.settled = true;
      entry.permit.settle({ verdict: this.verdict, latencyMs: this.latencyMs });
      // A second settle straight after is a no-op (the holder has not dropped it yet).
      if (this.twice) entry.permit.settle({ verdict: this.verdict, latencyMs: this.latencyMs });
    }
    await settleReactions();
    h.checkInvariants();
  }
  toString(): string {
    return `permit.settle(#${this.pick}, ${this.verdict}, ${this.latencyMs}${this.twice ? ', twice' : ''})`;
  }
}

const executeArb = fc
  .tuple(
    fc.constantFrom<HowFnEnds>('deferred', 'deferred', 'deferred', 'deferred', 'throws-sync', 'returns-plain'),
    fc.constantFrom<number | undefined>(undefined, undefined, 50, 5_000, Infinity),
  )
  .map(([how, t]) => new Execute(how, t));
const finishArb = fc
  .tuple(fc.nat(), fc.constantFrom<Verdict | 'classifier-throws' | 'throw'>(...FINISHES, 'throw', 'ok', 'ok'))
  .map(([pick, verdict]) => new Finish(pick, verdict));

/** fc.commands picks uniformly among these: arrivals and finishes are listed more than once to dominate. */
const commands = [
  executeArb,
  executeArb,
  executeArb,
  executeArb,
  finishArb,
  finishArb,
  finishArb,
  fc.nat().map((pick) => new Abort(pick)),
  fc
    .oneof(
      { weight: 6, arbitrary: fc.integer({ min: 1, max: 120 }) },
      { weight: 2, arbitrary: fc.integer({ min: 400, max: 2_500 }) },
      { weight: 1, arbitrary: fc.constantFrom(30_000, 61_000, 600_000) },
    )
    .map((ms) => new Advance(ms)),
  fc.integer({ min: 1, max: 40 }).map((limit) => new Resize(limit)),
  fc.constant(new Isolate()),
  fc.constant(new ReleaseIsolation()),
  fc.constant(new Reset()),
  fc.constant(new TryAcquire()),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom<Verdict>('ok', 'answered', 'overload', 'failure', 'timeout', 'rejected', 'cancelled'),
      fc.oneof(fc.integer({ min: 0, max: 3_000 }), fc.constantFrom(Number.NaN, -5, Infinity)),
      fc.boolean(),
    )
    .map(([pick, verdict, latencyMs, twice]) => new SettlePermit(pick, verdict, latencyMs, twice)),
];

const setupArb: fc.Arbitrary<PipelineSetup> = fc
  .record({
    algorithm: fc.constantFrom('vegas' as const, 'gradient2' as const, 'aimd' as const, 'fixed' as const),
    minLimit: fc.integer({ min: 1, max: 3 }),
    spread: fc.integer({ min: 0, max: 8 }),
    initialOffset: fc.nat(),
    maxConcurrent: fc.integer({ min: 1, max: 12 }),
    timeoutMs: fc.constantFrom(100, 500, 3_000),
    queueOrder: fc.constantFrom('fifo' as const, 'lifo' as const),
    initialFactor: fc.constantFrom(1, 2),
    extraFactor: fc.constantFrom(0, 1, 2),
    seed: fc.integer(),
  })
  .map((s) => {
    const maxLimit = s.minLimit + s.spread;
    return {
      algorithm: s.algorithm,
      minLimit: s.minLimit,
      maxLimit,
      initialLimit: s.minLimit + (s.initialOffset % (s.spread + 1)),
      maxConcurrent: s.maxConcurrent,
      timeoutMs: s.timeoutMs,
      queueOrder: s.queueOrder,
      initialFactor: s.initialFactor,
      maxFactor: s.initialFactor + s.extraFactor,
      seed: s.seed,
    };
  });

/** numRuns is set by RELIABILITY_RUNS for a longer local search; CI runs 150. */
const NUM_RUNS = Number(process.env.RELIABILITY_RUNS ?? 150);

describe('the full pipeline under any interleaving (model-based commands)', () => {
  const totals = { runs: 0, calls: 0, admissions: 0, started: 0, opens: 0, shed: 0, timedOut: 0 };
  it('never leaks or frees a slot early, never admits over the limit, and settles every call exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(setupArb, fc.commands(commands, { maxCommands: 80, size: 'max' }), async (setup, cmds) => {
        const harness = new PipelineHarness(setup);
        await fc.asyncModelRun(() => ({ model: {} as Model, real: harness }), cmds);
        expect(harness.violations).toEqual([]);
        await harness.drain();
        harness.checkInvariants();
        expect(harness.violations).toEqual([]);
        expect(harness.calls.map((c) => c.outerSettles).filter((n) => n !== 1)).toEqual([]);
        expect(harness.limiter.inflight).toBe(0);
        expect(harness.limiter.queued).toBe(0);
        expect(harness.bulkhead.active).toBe(0);
        expect(harness.clock.pendingTimers).toBe(0);
        totals.runs++;
        totals.calls += harness.calls.length;
        totals.admissions += harness.admissions;
        totals.started += harness.calls.filter((c) => c.started).length;
        totals.opens += harness.breaker.snapshot().opens;
        totals.shed += harness.limiter.snapshot().shed;
        totals.timedOut += harness.limiter.snapshot().timedOutInQueue;
      }),
      { numRuns: NUM_RUNS, ...(process.env.FC_SEED ? { seed: Number(process.env.FC_SEED) } : {}) },
    );
    if (process.env.RELIABILITY_DEBUG) console.log(totals);
    // The search reached the states that matter (not a vacuous pass).
    expect(totals.admissions).toBeGreaterThan(totals.runs);
    expect(totals.opens).toBeGreaterThan(0);
    expect(totals.shed).toBeGreaterThan(0);
  });
});
