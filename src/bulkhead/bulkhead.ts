import type { CallFn, ExecuteOptions } from '../core/call';
import type { Classifier } from '../core/classify';
import { subscribeRefused, subscribeSettled, type CallEvents, type RefusalEvent } from '../core/call-events';
import { resolveClock, type Clock, type ResolvedClock } from '../core/clock';
import type { Listener, Subscription } from '../core/events';
import type { Observation } from '../core/observation';
import { functionOption, knownOptions, optionsObject, requireNumber } from '../core/options';
import type { Policy } from '../core/policy';
import type { BulkheadPort, CallPlan } from '../core/ports';
import { callPlan } from '../core/ports';
import { runCall, runPlain } from '../core/run-call';
import { BulkheadFullError } from '../errors/bulkhead-full-error';

export interface BulkheadOptions {
  /**
   * The fixed ceiling on concurrent calls. Required: the right number is the upstream's (or your
   * process's) and nobody else's; the adaptive limiter is the tool for finding it.
   */
  maxConcurrent: number;
  clock?: Clock | undefined;
  classify?: Classifier | undefined;
}

export interface BulkheadSnapshot {
  readonly kind: 'bulkhead';
  readonly maxConcurrent: number;
  readonly active: number;
  /** Calls refused since construction. */
  readonly rejected: number;
}

/**
 * A fixed ceiling on concurrency with no queue (the v0.2 shape): a full bulkhead refuses at once.
 * It has no queue because a fixed queue bound around a moving limit is the wrong shape (spec §7);
 * queueing lives in the limiter, where its bounds move with the limit.
 */
export class Bulkhead implements Policy<BulkheadSnapshot>, BulkheadPort {
  readonly maxConcurrent: number;
  /** @internal */
  readonly clock: ResolvedClock;
  /** @internal Per-call events, made on the first `onSettle` or `onRefuse`. */
  events: CallEvents | undefined = undefined;
  private activeCalls = 0;
  private rejectedCalls = 0;
  private readonly classifier: Classifier | undefined;
  /** The plan of `execute` (this bulkhead alone), made on its first call: in a pipeline it is never needed. */
  private ownPlan: CallPlan | undefined = undefined;

  constructor(options: BulkheadOptions) {
    const o = optionsObject<BulkheadOptions>('bulkhead', options);
    knownOptions('bulkhead', o, ['maxConcurrent', 'clock', 'classify']);
    this.maxConcurrent = requireNumber('bulkhead', 'maxConcurrent', o.maxConcurrent, {
      min: 1,
      integer: true,
      infinite: true,
    });
    this.clock = resolveClock(o.clock, 'bulkhead');
    this.classifier = functionOption<Classifier>('bulkhead', 'classify', o.classify);
  }

  get kind(): 'bulkhead' {
    return 'bulkhead';
  }

  /** @internal The seam the call runner drives: the bulkhead itself. */
  get port(): BulkheadPort {
    return this;
  }

  get active(): number {
    return this.activeCalls;
  }

  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    // No options, no classifier, nobody listening: nothing to time, classify or report.
    if (options === undefined && this.classifier === undefined && this.events === undefined) {
      return runPlain(this, fn);
    }
    this.ownPlan ??= callPlan(this.clock, { bulkhead: this }, this.classifier);
    return runCall(this.ownPlan, fn, options);
  }

  /**
   * Hears every call this bulkhead admitted that ran, when it settles, in a pipeline or alone: its
   * Observation, after the policies learned from it. The Observation is one object resilix reuses
   * for every call, valid only during the listener: copy what you keep. Costs one check per call
   * while nobody listens.
   */
  onSettle(listener: Listener<Observation>): Subscription {
    return subscribeSettled(this, listener);
  }

  /** Hears every call this bulkhead refuses, in a pipeline or alone (why, `retryAfterMs`, the error the caller gets). */
  onRefuse(listener: Listener<RefusalEvent>): Subscription {
    return subscribeRefused(this, listener);
  }

  /** @internal */
  tryEnter(): boolean {
    if (this.activeCalls >= this.maxConcurrent) {
      this.rejectedCalls++;
      return false;
    }
    this.activeCalls++;
    return true;
  }

  /** @internal */
  leave(): void {
    if (this.activeCalls > 0) this.activeCalls--;
  }

  /** @internal */
  rejection(): Error {
    return new BulkheadFullError(
      `resilix: the bulkhead is full (${this.activeCalls} of ${this.maxConcurrent} in use); the call was not made`,
    );
  }

  snapshot(): BulkheadSnapshot {
    return {
      kind: 'bulkhead',
      maxConcurrent: this.maxConcurrent,
      active: this.activeCalls,
      rejected: this.rejectedCalls,
    };
  }
}

export function bulkhead(options: BulkheadOptions): Bulkhead {
  return new Bulkhead(options);
}
