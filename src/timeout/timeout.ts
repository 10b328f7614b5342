import type { CallFn, ExecuteOptions } from '../core/call';
import type { Classifier } from '../core/classify';
import { subscribeSettled, type CallEvents } from '../core/call-events';
import { resolveClock, type Clock, type ResolvedClock } from '../core/clock';
import type { Listener, Subscription } from '../core/events';
import type { Observation } from '../core/observation';
import { functionOption, knownOptions, optionsObject, requireNumber } from '../core/options';
import type { Policy } from '../core/policy';
import type { CallPlan, TimeoutPort } from '../core/ports';
import { callPlan } from '../core/ports';
import { runCall } from '../core/run-call';

export interface TimeoutOptions {
  /**
   * The default per-call budget in ms. Required: a timeout has no universal default. A call's
   * own `timeoutMs` overrides it, and time queued in the limiter is taken from it.
   */
  timeoutMs: number;
  clock?: Clock | undefined;
  classify?: Classifier | undefined;
}

export interface TimeoutSnapshot {
  readonly kind: 'timeout';
  readonly timeoutMs: number;
  /** Calls whose deadline passed while they ran (not while queued). */
  readonly timedOut: number;
}

/**
 * A per-call deadline, propagated to `fn` as `ctx.signal`. At the deadline the caller hears a
 * `TimeoutError` at once, but the call keeps its bulkhead and limiter slots until the work really
 * settles: real concurrency never exceeds what admission allowed.
 */
export class TimeoutPolicy implements Policy<TimeoutSnapshot>, TimeoutPort {
  readonly timeoutMs: number;
  /** @internal */
  readonly clock: ResolvedClock;
  /** @internal Per-call events, made on the first `onSettle`. */
  events: CallEvents | undefined = undefined;
  private timedOut = 0;
  private readonly classifier: Classifier | undefined;
  /** The plan of `execute` (this policy alone), made on its first call: in a pipeline it is never needed. */
  private ownPlan: CallPlan | undefined = undefined;

  constructor(options: TimeoutOptions) {
    const o = optionsObject<TimeoutOptions>('timeout', options);
    knownOptions('timeout', o, ['timeoutMs', 'clock', 'classify']);
    this.timeoutMs = requireNumber('timeout', 'timeoutMs', o.timeoutMs, { above: 0, infinite: true });
    this.clock = resolveClock(o.clock, 'timeout');
    this.classifier = functionOption<Classifier>('timeout', 'classify', o.classify);
  }

  get kind(): 'timeout' {
    return 'timeout';
  }

  /** @internal The seam the call runner drives: the policy itself. */
  get port(): TimeoutPort {
    return this;
  }

  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    this.ownPlan ??= callPlan(this.clock, { timeout: this }, this.classifier);
    return runCall(this.ownPlan, fn, options);
  }

  /**
   * Hears every call this timeout policy timed, when it settles, in a pipeline or alone (verdict
   * `timeout` when its deadline passed). The Observation is one object resilix reuses for every
   * call, valid only during the listener: copy what you keep. A timeout policy refuses nothing:
   * a budget spent queueing is the limiter's refusal (`queue-timeout`).
   */
  onSettle(listener: Listener<Observation>): Subscription {
    return subscribeSettled(this, listener);
  }

  /** @internal */
  recordTimeout(): void {
    this.timedOut++;
  }

  snapshot(): TimeoutSnapshot {
    return { kind: 'timeout', timeoutMs: this.timeoutMs, timedOut: this.timedOut };
  }
}

export function timeout(options: TimeoutOptions): TimeoutPolicy {
  return new TimeoutPolicy(options);
}
