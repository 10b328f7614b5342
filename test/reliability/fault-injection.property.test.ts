import fc from 'fast-check';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { breaker, type CircuitBreaker } from '../../src/breaker/index';
import { bulkhead, type Bulkhead } from '../../src/bulkhead/bulkhead';
import type { CallContext, ExecuteOptions } from '../../src/core/call';
import type { Settled } from '../../src/core/classify';
import type { Verdict } from '../../src/core/verdict';
import type { AlgorithmName } from '../../src/limiter/controller';
import { limiter, type Limiter } from '../../src/limiter/limiter';
import type { QueueOrder } from '../../src/limiter/wait-queue';
import { pipeline, type Pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock } from '../helpers/fake-clock';
import { seeded } from './support/random';

/**
 * Issue 15: fault injection at every seam the library calls into. Each schedule is a random
 * sequence of calls, finishes, aborts, clock advances and resizes over the full pipeline
 * breaker -> limiter -> bulkhead -> timeout. It runs twice, on fresh state: once to count how
 * often the library calls each seam, then again with the chosen seam throwing once, at a random
 * one of those calls. Afterwards, with all work finished: every promise settled exactly once,
 * execute never threw synchronously, the limiter's in-flight and queue, the bulkhead and the
 * breaker's probes are back to 0, no timer is armed (but one whose clearTimer was the fault), and
 * the next call is served. `FAULT_RUNS` sets the schedules per seam (default 120).
 */

const SEAMS = [
  'clock.now',
  'clock.setTimer',
  'clock.clearTimer',
  'classifier',
  'listener:breaker.onStateChange',
  'listener:breaker.onOpen',
  'listener:breaker.onHalfOpen',
  'listener:breaker.onClose',
  'listener:limiter.onLimitChange',
  'listener:pipeline.onSettle',
  'signal.aborted',
  'signal.reason',
  'signal.addEventListener',
  'signal.removeEventListener',
  'fn.sync',
  'fn.async',
  'limiter.random',
  'result.status',
] as const;
type Seam = (typeof SEAMS)[number];

const RUNS_PER_SEAM = Number(process.env.FAULT_RUNS ?? 120);

class InjectedFault extends Error {
  constructor(readonly seam: Seam) {
    super(`injected fault at ${seam}`);
  }
}

/** Counts every call into each seam; throws once at the armed seam's chosen call. */
class Injector {
  readonly hits = new Map<Seam, number>();
  thrown = 0;
  constructor(
    private readonly seam: Seam | undefined = undefined,
    private readonly at = -1,
  ) {}
  hit(seam: Seam): void {
    const n = this.hits.get(seam) ?? 0;
    this.hits.set(seam, n + 1);
    if (seam === this.seam && n === this.at) {
      this.thrown++;
      throw new InjectedFault(seam);
    }
  }
}

/** The fake clock, every function through the injector; a fault throws before the work is done. */
class FaultClock extends FakeClock {
  /** Timers whose clearTimer was the fault: the library could not clear them; they may stay armed. */
  readonly orphans = new Set<number>();
  private readonly armed = new Set<number>();
  constructor(private readonly injector: Injector) {
    super(1_000);
  }
  override now(): number {
    this.injector.hit('clock.now');
    return super.now();
  }
  override setTimer(callback: () => void, delayMs: number): number {
    this.injector.hit('clock.setTimer');
    const id: number = super.setTimer(() => {
      this.armed.delete(id);
      this.orphans.delete(id);
      callback();
    }, delayMs);
    this.armed.add(id);
    return id;
  }
  override clearTimer(handle: unknown): void {
    try {
      this.injector.hit('clock.clearTimer');
    } catch (fault) {
      if (this.armed.has(handle as number)) this.orphans.add(handle as number);
      throw fault;
    }
    this.armed.delete(handle as number);
    super.clearTimer(handle);
  }
  /** Armed timers the library should have cleared: every armed one that is not an orphan. */
  get leakedTimers(): number {
    let leaked = 0;
    for (const id of this.armed) if (!this.orphans.has(id)) leaked++;
    return leaked;
  }
}

const REASON = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'reason')!.get!;

/** A real AbortSignal whose four accessors the library uses go through the injector. */
function instrumentedSignal(injector: Injector): { controller: AbortController; signal: AbortSignal } {
  const controller = new AbortController();
  const signal = controller.signal;
  const proto = AbortSignal.prototype;
  const aborted = Object.getOwnPropertyDescriptor(proto, 'aborted')!.get!;
  const reason = Object.getOwnPropertyDescriptor(proto, 'reason')!.get!;
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  Object.defineProperties(signal, {
    aborted: {
      get: () => {
        injector.hit('signal.aborted');
        return aborted.call(signal);
      },
    },
    reason: {
      get: () => {
        injector.hit('signal.reason');
        return reason.call(signal);
      },
    },
    addEventListener: {
      value: (...args: Parameters<AbortSignal['addEventListener']>) => {
        injector.hit('signal.addEventListener');
        add(...args);
      },
    },
    removeEventListener: {
      value: (...args: Parameters<AbortSignal['removeEventListener']>) => {
        injector.hit('signal.removeEventListener');
        remove(...args);
      },
    },
  });
  return { controller, signal };
}

interface Setup {
  /** Whether the pipeline has a classifier; without one the default classifier reads `status`. */
  pipelineClassify: boolean;
  algorithm: AlgorithmName;
  limit: number;
  /** The queue's initial factor (max factor 3): 1 puts every queued arrival in the gradual zone. */
  initialFactor: number;
  maxConcurrent: number;
  queueOrder: QueueOrder;
  seed: number;
}

type FnKind = 'deferred' | 'sync-value' | 'sync-throw' | 'reads-signal';
type Budget = 'policy' | 'short' | 'long' | 'none';
type Command =
  | { kind: 'call'; signal: 'none' | 'signal' | 'null'; budget: Budget; fn: FnKind; classify: boolean; mark: boolean }
  | { kind: 'finish'; pick: number; outcome: Verdict | 'reject' }
  | { kind: 'finishAll'; outcome: Verdict | 'reject' }
  | { kind: 'abort'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'resize'; limit: number };

const BUDGET_MS: Record<Budget, number | undefined> = {
  policy: undefined,
  short: 30,
  long: 2 ** 31 + 5, // past one platform timer: exercises the chained deadline
  none: Infinity,
};

/** The HTTP status the default classifier reads back as each verdict. */
const STATUS: Record<Verdict, number> = {
  ok: 200,
  answered: 404,
  overload: 503,
  failure: 500,
  timeout: 500,
  rejected: 500,
  cancelled: 500,
};

interface TrackedCall {
  settles: number;
  controller: AbortController | undefined;
  aborted: boolean;
  /** Each time fn ran for this call (once at most), a way to end its work. */
  finish: ((outcome: Verdict | 'reject') => void) | undefined;
  done: boolean;
}

interface Outcome {
  syncThrows: number;
  badSettles: number;
  unsettled: number;
  held: { inflight: number; queued: number; bulkhead: number; probes: number };
  leakedTimers: number;
  servedAfter: boolean;
  injected: number;
  hits: Map<Seam, number>;
}

/** Lets every pending promise reaction run (a macrotask drains chains of any length). */
function settleReactions(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** One schedule, on fresh state, with the injector given. */
async function runSchedule(setup: Setup, commands: readonly Command[], injector: Injector): Promise<Outcome> {
  const clock = new FaultClock(injector);
  const b: CircuitBreaker = breaker({
    clock,
    minSamples: 4,
    lowTrafficMinSamples: 2,
    consecutiveFailures: 2,
    openMs: 50,
    halfOpenProbes: 1,
    windowMs: 5_000,
  });
  const l: Limiter = limiter({
    clock,
    algorithm: setup.algorithm,
    initialLimit: setup.limit,
    minLimit: 1,
    maxLimit: 6,
    updateIntervalMs: 0,
    minWindowMs: 0,
    minSamples: 2,
    queueOrder: setup.queueOrder,
    queueing: { initialFactor: setup.initialFactor, maxFactor: 3 },
    random: (() => {
      const next = seeded(setup.seed);
      return () => {
        injector.hit('limiter.random');
        return next();
      };
    })(),
  });
  const bh: Bulkhead = bulkhead({ maxConcurrent: setup.maxConcurrent, clock });
  const classify = (settled: Settled): Verdict | undefined => {
    injector.hit('classifier');
    if (settled.status !== 'fulfilled') return undefined;
    return (settled.value as { verdict: Verdict }).verdict;
  };
  const p: Pipeline = pipeline(
    b,
    l,
    bh,
    timeout({ timeoutMs: 100, clock }),
    setup.pipelineClassify ? { classify } : {},
  );
  /** What fn resolves or rejects with: its `status`, read by the default classifier, is a seam. */
  const answer = <T extends object>(subject: T, status: number): T =>
    Object.defineProperty(subject, 'status', {
      get: () => {
        injector.hit('result.status');
        return status;
      },
    });
  const listen = (seam: Seam) => () => injector.hit(seam);
  b.onStateChange(listen('listener:breaker.onStateChange'));
  b.onOpen(listen('listener:breaker.onOpen'));
  b.onHalfOpen(listen('listener:breaker.onHalfOpen'));
  b.onClose(listen('listener:breaker.onClose'));
  l.onLimitChange(listen('listener:limiter.onLimitChange'));
  p.onSettle(listen('listener:pipeline.onSettle'));

  const calls: TrackedCall[] = [];
  let syncThrows = 0;

  const start = (c: Extract<Command, { kind: 'call' }>): void => {
    const instrumented = c.signal === 'signal' ? instrumentedSignal(injector) : undefined;
    const call: TrackedCall = {
      settles: 0,
      controller: instrumented?.controller,
      aborted: false,
      finish: undefined,
      done: false,
    };
    calls.push(call);
    const options: ExecuteOptions = {
      // null is no signal at run time, as in fetch (the type says AbortSignal)
      signal: c.signal === 'null' ? (null as never) : instrumented?.signal,
      timeoutMs: BUDGET_MS[c.budget],
      classify: c.classify ? classify : undefined,
    };
    const fn = (ctx: CallContext): unknown => {
      injector.hit('fn.sync');
      try {
        injector.hit('fn.async');
      } catch (fault) {
        call.done = true;
        return Promise.reject(fault);
      }
      if (c.fn === 'sync-value') {
        call.done = true;
        return answer({ verdict: 'ok' }, 200);
      }
      if (c.fn === 'sync-throw') {
        call.done = true;
        throw answer(new Error('fn threw'), 500);
      }
      return new Promise((resolve, reject) => {
        call.finish = (outcome) => {
          if (call.done) return;
          call.done = true;
          if (c.mark) ctx.mark();
          if (outcome === 'reject') reject(answer(new Error('upstream error'), 502));
          else resolve(answer({ verdict: outcome }, STATUS[outcome]));
        };
        if (c.fn === 'reads-signal') {
          // Like fetch: the work ends when its signal aborts. ctx.signal may be the caller's own
          // (no deadline): the work uses the platform's accessors, so only the library's calls
          // go through the injector.
          const signal = ctx.signal;
          EventTarget.prototype.addEventListener.call(signal, 'abort', () => {
            if (call.done) return;
            call.done = true;
            reject(REASON.call(signal));
          });
        }
      });
    };
    let promise: Promise<unknown>;
    try {
      promise = p.execute(fn, options);
    } catch {
      syncThrows++;
      call.settles = 1;
      return;
    }
    promise.then(
      () => void call.settles++,
      () => void call.settles++,
    );
  };

  for (const c of commands) {
    switch (c.kind) {
      case 'call':
        start(c);
        break;
      case 'finish': {
        const running = calls.filter((x) => x.finish !== undefined && !x.done);
        running[c.pick % Math.max(1, running.length)]?.finish?.(c.outcome);
        break;
      }
      case 'finishAll':
        // Frees every slot at once: waiters are woken in the middle of the schedule.
        for (const call of calls) if (call.finish !== undefined && !call.done) call.finish(c.outcome);
        break;
      case 'abort': {
        // A call still pending if there is one: aborting a settled call exercises little.
        const withSignal = calls.filter((x) => x.controller !== undefined && !x.aborted);
        const pending = withSignal.filter((x) => x.settles === 0);
        const abortable = pending.length > 0 ? pending : withSignal;
        const target = abortable[c.pick % Math.max(1, abortable.length)];
        if (target !== undefined) {
          target.aborted = true;
          target.controller!.abort(new Error('caller left'));
        }
        break;
      }
      case 'advance':
        clock.advance(c.ms);
        break;
      case 'resize':
        l.resize(c.limit);
        break;
    }
    await settleReactions();
  }

  // Drain: finish all work, let queued calls run and finish theirs, and let time pass for
  // waiters whose deadlines are their way out. Bounded: a leak shows up as calls left unsettled.
  for (let round = 0; round < 60; round++) {
    for (const call of calls) if (call.finish !== undefined && !call.done) call.finish('ok');
    await settleReactions();
    if (calls.every((x) => x.settles > 0 && (x.finish === undefined || x.done)) && l.queued === 0) break;
    clock.advance(round < 30 ? 50 : 1_000);
    await settleReactions();
  }

  const outcome: Outcome = {
    syncThrows,
    badSettles: calls.filter((x) => x.settles > 1).length,
    unsettled: calls.filter((x) => x.settles === 0).length,
    held: {
      inflight: l.inflight,
      queued: l.queued,
      bulkhead: bh.active,
      probes: b.snapshot().probesInFlight,
    },
    leakedTimers: clock.leakedTimers,
    servedAfter: false,
    injected: injector.thrown,
    // The calls into each seam up to here: the fault is placed among them, never in the check below.
    hits: new Map(injector.hits),
  };
  // The library still serves: past any open period, the next call (a probe, if need be) runs.
  clock.advance(10 * 60_000);
  let served = false;
  p.execute(() => ({ verdict: 'ok' })).then(
    () => {
      served = true;
    },
    () => {},
  );
  await settleReactions();
  outcome.servedAfter = served;
  return outcome;
}

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('call' as const),
      signal: fc.constantFrom(
        'none' as const,
        'signal' as const,
        'signal' as const,
        'signal' as const,
        'null' as const,
      ),
      // long budgets often: waiters then outlive a heartbeat, and are served or aborted mid-wait
      budget: fc.constantFrom<Budget>('policy', 'short', 'long', 'long', 'none', 'none'),
      fn: fc.constantFrom<FnKind>('deferred', 'deferred', 'reads-signal', 'sync-value', 'sync-throw'),
      classify: fc.boolean(),
      mark: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('finish' as const),
      pick: fc.nat(20),
      // failures often enough that the breaker opens, half-opens and closes in many schedules
      outcome: fc.constantFrom<Verdict | 'reject'>('ok', 'ok', 'answered', 'overload', 'failure', 'failure', 'reject'),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('finishAll' as const),
      outcome: fc.constantFrom<Verdict | 'reject'>('ok', 'failure'),
    }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat(20) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.constantFrom(1, 10, 29, 30, 99, 100, 250, 250, 1_000, 1_000, 12_000),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resize' as const), limit: fc.integer({ min: 1, max: 6 }) }) },
);

const setupArb: fc.Arbitrary<Setup> = fc.record({
  // fixed half the time: an adaptive limit soon grows past the load and nobody queues
  algorithm: fc.constantFrom<AlgorithmName>('vegas', 'aimd', 'fixed', 'fixed'),
  limit: fc.integer({ min: 1, max: 3 }),
  initialFactor: fc.constantFrom(1, 2),
  maxConcurrent: fc.integer({ min: 1, max: 5 }),
  queueOrder: fc.constantFrom<QueueOrder>('fifo', 'lifo'),
  seed: fc.nat(),
  pipelineClassify: fc.boolean(),
});

const schedules = { count: 0 };
const injectedBySeam = new Map<Seam, number>();

beforeEach(() => {
  // Faults the library catches and carries on from are reported; keep the run's output readable.
  vi.spyOn(console, 'error').mockImplementation(() => {});
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('one fault at every seam the library calls into, at a random point of a random schedule', () => {
  it.each(SEAMS.map((s) => [s]))('releases everything and settles every call when %s throws', async (seam) => {
    let injectedHere = 0;
    await fc.assert(
      fc.asyncProperty(
        setupArb,
        fc.array(commandArb, { minLength: 4, maxLength: 60, size: 'max' }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        async (setup, commands, where) => {
          // The dry run counts the calls into each seam; the same schedule then throws at one of them.
          const dry = await runSchedule(setup, commands, new Injector());
          const count = dry.hits.get(seam) ?? 0;
          const at = count > 0 ? Math.floor(where * count) : -1;
          const outcome = await runSchedule(setup, commands, new Injector(seam, at));
          schedules.count++;
          injectedHere += outcome.injected;
          expect(outcome.syncThrows).toBe(0);
          expect(outcome.badSettles).toBe(0);
          expect(outcome.unsettled).toBe(0);
          expect(outcome.held).toEqual({ inflight: 0, queued: 0, bulkhead: 0, probes: 0 });
          expect(outcome.leakedTimers).toBe(0);
          expect(outcome.servedAfter).toBe(true);
          // The fault fired whenever the schedule reached the seam at all.
          expect(outcome.injected).toBe(count > 0 ? 1 : 0);
        },
      ),
      { numRuns: RUNS_PER_SEAM },
    );
    injectedBySeam.set(seam, injectedHere);
    // Not vacuous: a fair share of the schedules reach every seam (the rarest, the limiter's coin
    // in the gradual zone and a breaker closing after a probe, about one in four and one in three).
    expect(injectedHere).toBeGreaterThanOrEqual(Math.ceil(RUNS_PER_SEAM / 8));
  });
});

afterAll(() => {
  if (process.env.FAULT_REPORT === '1') {
    const total = [...injectedBySeam.values()].reduce((a, b) => a + b, 0);
    console.log(
      `fault injection: ${schedules.count} schedules, ${total} faults injected`,
      Object.fromEntries(injectedBySeam),
    );
  }
});
