import { breaker, type CircuitBreaker } from '../../../src/breaker/index';
import { isLegalTransition, type BreakerStateChange, type CircuitState } from '../../../src/breaker/state';
import { bulkhead, type Bulkhead } from '../../../src/bulkhead/bulkhead';
import type { Subscription } from '../../../src/core/events';
import type { Permit } from '../../../src/core/ports';
import type { Verdict } from '../../../src/core/verdict';
import type { AlgorithmName } from '../../../src/limiter/controller';
import { limiter, type Limiter } from '../../../src/limiter/limiter';
import type { QueueOrder } from '../../../src/limiter/wait-queue';
import { pipeline, type Pipeline } from '../../../src/pipeline/pipeline';
import { timeout } from '../../../src/timeout/timeout';
import { deferred, FakeClock, flush } from '../../helpers/fake-clock';
import { seeded } from './random';

/** What the test's `fn` resolves with: the verdict the pipeline's classifier will read off it. */
export interface Answer {
  readonly verdict: Verdict | 'classifier-throws';
}

export type HowFnEnds = 'deferred' | 'throws-sync' | 'returns-plain';

export interface PipelineSetup {
  algorithm: AlgorithmName;
  minLimit: number;
  maxLimit: number;
  initialLimit: number;
  maxConcurrent: number;
  timeoutMs: number;
  queueOrder: QueueOrder;
  initialFactor: number;
  maxFactor: number;
  seed: number;
}

/** One call the harness started, as the test sees it from outside. */
export interface TrackedCall {
  readonly id: number;
  readonly controller: AbortController;
  /** How many times the outer promise settled (must end at exactly 1). */
  outerSettles: number;
  /** fn ran (the call was admitted by every policy). */
  started: boolean;
  /** fn's work finished (its promise settled, or it returned or threw synchronously). */
  workDone: boolean;
  finish?: (answer: Answer | Error) => void;
}

/**
 * The full pipeline breaker -> limiter -> bulkhead -> timeout on a fake clock, with every
 * invariant of issue 11 watched from outside: the breaker's transitions through its event, the
 * limit at each admission through the limiter's permit hand-out, and the slots through the
 * public counters.
 */
export class PipelineHarness {
  readonly clock = new FakeClock(1_000);
  readonly breaker: CircuitBreaker;
  readonly limiter: Limiter;
  readonly bulkhead: Bulkhead;
  readonly pipeline: Pipeline;
  readonly calls: TrackedCall[] = [];
  readonly permits: Array<{ permit: Permit; settled: boolean }> = [];
  readonly isolations: Subscription[] = [];
  readonly violations: string[] = [];
  breakerState: CircuitState = 'closed';
  admissions = 0;
  private nextId = 0;

  constructor(readonly setup: PipelineSetup) {
    const clock = this.clock;
    this.breaker = breaker({
      clock,
      minSamples: 5,
      lowTrafficMinSamples: 3,
      consecutiveFailures: 3,
      openMs: 1_000,
      halfOpenProbes: 2,
      windowMs: 10_000,
      slowCallDurationMs: 2_000,
    });
    this.limiter = limiter({
      clock,
      algorithm: setup.algorithm,
      minLimit: setup.minLimit,
      maxLimit: setup.maxLimit,
      initialLimit: setup.initialLimit,
      updateIntervalMs: 0,
      minWindowMs: 0,
      minSamples: 2,
      queueing: { initialFactor: setup.initialFactor, maxFactor: setup.maxFactor },
      queueOrder: setup.queueOrder,
      random: seeded(setup.seed),
    });
    this.bulkhead = bulkhead({ maxConcurrent: setup.maxConcurrent, clock });
    this.pipeline = pipeline(
      this.breaker,
      this.limiter,
      this.bulkhead,
      timeout({ timeoutMs: setup.timeoutMs, clock }),
      {
        classify: (settled) => {
          if (settled.status !== 'fulfilled') return undefined;
          const answer = settled.value as Answer;
          if (answer.verdict === 'classifier-throws') throw new Error('classifier bug');
          return answer.verdict;
        },
      },
    );
    this.breaker.onStateChange((change: BreakerStateChange) => {
      if (change.from !== this.breakerState)
        this.violations.push(`breaker change from ${change.from}, state was ${this.breakerState}`);
      if (!isLegalTransition(change.from, change.to, change.reason)) {
        this.violations.push(`illegal breaker transition ${change.from} -> ${change.to} (${change.reason})`);
      }
      this.breakerState = change.to;
    });
    this.watchAdmissions();
  }

  /**
   * Every permit, fast path or queue, comes from admission's one hand-out; the check runs right
   * after it, at the moment of admission. A rename in src/ fails loudly here, not silently.
   */
  private watchAdmissions(): void {
    const target = this.limiter as unknown as { takePermit: () => Permit };
    if (typeof target.takePermit !== 'function') throw new Error('harness: admission hand-out not found (renamed?)');
    const original = target.takePermit.bind(this.limiter);
    target.takePermit = () => {
      const permit = original();
      this.admissions++;
      if (permit.inflight > this.limiter.limit) {
        this.violations.push(`admitted at inflight ${permit.inflight} over limit ${this.limiter.limit}`);
      }
      return permit;
    };
  }

  /** Starts one call through the pipeline; `fn` ends as the test later decides. */
  execute(how: HowFnEnds, timeoutMs: number | undefined): TrackedCall {
    const call: TrackedCall = {
      id: this.nextId++,
      controller: new AbortController(),
      outerSettles: 0,
      started: false,
      workDone: false,
    };
    this.calls.push(call);
    const before = { inflight: this.limiter.inflight, queued: this.limiter.queued };
    const outer = this.pipeline.execute<Answer>(
      () => {
        call.started = true;
        if (how === 'throws-sync') {
          call.workDone = true;
          throw new Error('fn threw synchronously');
        }
        if (how === 'returns-plain') {
          call.workDone = true;
          return { verdict: 'ok' } as Answer;
        }
        const work = deferred<Answer>();
        call.finish = (answer) => {
          if (call.workDone) return;
          call.workDone = true;
          if (answer instanceof Error) work.reject(answer);
          else work.resolve(answer);
        };
        return work.promise;
      },
      { signal: call.controller.signal, ...(timeoutMs === undefined ? {} : { timeoutMs }) },
    );
    if (this.limiter.queued > before.queued) {
      // It joined the queue: running plus waiting stays within maxFactor x the limit.
      const n = this.limiter.inflight + this.limiter.queued;
      if (n > this.setup.maxFactor * this.limiter.limit) {
        this.violations.push(
          `queue over bound: ${n} running+waiting against ${this.setup.maxFactor} x ${this.limiter.limit}`,
        );
      }
    }
    outer.then(
      () => call.outerSettles++,
      () => call.outerSettles++,
    );
    return call;
  }

  /** Calls whose work is running (admitted, not finished), in start order. */
  running(): TrackedCall[] {
    return this.calls.filter((c) => c.started && !c.workDone);
  }

  /** The invariants that hold between any two commands. */
  checkInvariants(): void {
    const l = this.limiter;
    const heldByCalls = this.running().length;
    const heldByPermits = this.permits.filter((p) => !p.settled).length;
    for (const call of this.calls) {
      if (call.outerSettles > 1) this.violations.push(`call ${call.id} settled ${call.outerSettles} times`);
    }
    // Slots are held exactly while the work runs: a timed-out or aborted call keeps its slot.
    if (l.inflight !== heldByCalls + heldByPermits) {
      this.violations.push(
        `limiter inflight ${l.inflight}, but ${heldByCalls} calls and ${heldByPermits} permits hold slots`,
      );
    }
    if (this.bulkhead.active !== heldByCalls) {
      this.violations.push(`bulkhead active ${this.bulkhead.active}, but ${heldByCalls} calls run`);
    }
    if (this.bulkhead.active > this.bulkhead.maxConcurrent) this.violations.push('bulkhead over its ceiling');
    const snap = l.snapshot();
    if (!(Number.isInteger(l.limit) && l.limit >= this.setup.minLimit && l.limit <= this.setup.maxLimit)) {
      this.violations.push(`limit ${l.limit} outside [${this.setup.minLimit}, ${this.setup.maxLimit}]`);
    }
    if (!Number.isFinite(snap.estimate)) this.violations.push(`limit estimate ${snap.estimate}`);
    if (l.queued > this.setup.maxFactor * this.setup.maxLimit)
      this.violations.push(`queue ${l.queued} over its hard bound`);
    if (this.breaker.state !== this.breakerState) this.violations.push('breaker state changed without an event');
    const b = this.breaker.snapshot();
    if (b.probesInFlight < 0 || b.probesInFlight > 2)
      this.violations.push(`breaker probes in flight ${b.probesInFlight}`);
    // Fail at the command that broke it, so fast-check reports (and shrinks to) that command.
    if (this.violations.length > 0) throw new Error(`invariant broken: ${this.violations.join('; ')}`);
  }

  /**
   * Ends everything: releases isolation, finishes all work, lets every deadline and queue drain.
   * Afterwards nothing may be held.
   */
  async drain(): Promise<void> {
    for (const handle of this.isolations.splice(0)) handle.dispose();
    for (const p of this.permits) {
      if (!p.settled) {
        p.settled = true;
        p.permit.settle({ verdict: 'ok', latencyMs: 1 });
      }
    }
    for (let round = 0; round < 200; round++) {
      for (const call of this.running()) call.finish?.({ verdict: 'ok' });
      await flush(10);
      this.clock.advance(1_000);
      await flush(10);
      if (this.running().length === 0 && this.limiter.queued === 0 && this.calls.every((c) => c.outerSettles === 1))
        break;
    }
  }
}
