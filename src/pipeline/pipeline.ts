import type { BreakerSnapshot } from '../breaker/breaker';
import type { BulkheadSnapshot } from '../bulkhead/bulkhead';
import type { CallFn, ExecuteOptions, Executor } from '../core/call';
import type { Classifier } from '../core/classify';
import { CallEvents, type RefusalEvent } from '../core/call-events';
import type { Listener, Subscription } from '../core/events';
import type { Observation } from '../core/observation';
import { functionOption, knownOptions } from '../core/options';
import { isPolicy, POLICY_ORDER, type Policy, type PolicyKind, type RetryPort } from '../core/policy';
import type { BreakerPort, BulkheadPort, CallPlan, LimiterPort, TimeoutPort } from '../core/ports';
import { callPlan } from '../core/ports';
import { runCall } from '../core/run-call';
import type { LimiterSnapshot } from '../limiter/limiter';
import type { RetrySnapshot } from '../retry/retry';
import type { TimeoutSnapshot } from '../timeout/timeout';

export interface PipelineOptions {
  /** Classifies every call's outcome; a call's own `classify` overrides it. */
  classify?: Classifier | undefined;
}

/** One policy's snapshot; `kind` tells which (`if (s.kind === 'limiter') s.limit`). */
export type PolicySnapshot = RetrySnapshot | BreakerSnapshot | LimiterSnapshot | BulkheadSnapshot | TimeoutSnapshot;

export interface PipelineSnapshot {
  readonly kind: 'pipeline';
  /** Each policy's snapshot, outermost first. */
  readonly policies: readonly PolicySnapshot[];
}

/**
 * Policies composed in the canonical order retry -> breaker -> limiter -> bulkhead -> timeout. One
 * attempt passes each admission in turn and, when it settles, one Observation reaches every policy
 * that admitted it, innermost first. A retry policy, outermost, runs each attempt through all the
 * others again.
 */
export class Pipeline implements Executor {
  readonly policies: readonly Policy[];
  /** Mutable here only to take `events` when the first listener subscribes. */
  private readonly plan: { -readonly [K in keyof CallPlan]: CallPlan[K] };
  private readonly retry: RetryPort | undefined;

  constructor(policies: readonly Policy[], options: PipelineOptions = {}) {
    const byKind: Partial<Record<PolicyKind, Policy>> = {};
    let lastRank = -1;
    for (const [index, policy] of policies.entries()) {
      if (policy instanceof Pipeline) {
        throw new TypeError(
          `resilix: pipeline argument ${index} is a pipeline, not a policy; pipelines do not nest: pass its policies (\`...inner.policies\`)`,
        );
      }
      if (!isPolicy(policy)) {
        throw new TypeError(
          `resilix: pipeline argument ${index} is not a resilix policy; pass retry(), breaker(), limiter(), bulkhead() or timeout() results`,
        );
      }
      const rank = POLICY_ORDER.indexOf(policy.kind);
      if (byKind[policy.kind] !== undefined) {
        throw new TypeError(`resilix: pipeline has two ${policy.kind} policies; give each kind at most once`);
      }
      if (rank < lastRank) {
        throw new TypeError(
          `resilix: pipeline policies must come in the order ${POLICY_ORDER.join(' -> ')}; ` +
            `received ${policies.map((p) => p.kind).join(' -> ')}`,
        );
      }
      lastRank = rank;
      byKind[policy.kind] = policy;
    }
    if (policies.length === 0) throw new TypeError('resilix: pipeline needs at least one policy');
    const clock = policies[0]!.clock;
    if (policies.some((p) => p.clock !== clock)) {
      throw new TypeError('resilix: every policy in a pipeline must share one clock; pass the same `clock` to each');
    }
    knownOptions('pipeline', options, ['classify']);
    this.policies = Object.freeze([...policies]);
    this.plan = callPlan(
      clock,
      {
        breaker: byKind.breaker?.port as BreakerPort | undefined,
        limiter: byKind.limiter?.port as LimiterPort | undefined,
        bulkhead: byKind.bulkhead?.port as BulkheadPort | undefined,
        timeout: byKind.timeout?.port as TimeoutPort | undefined,
      },
      functionOption<Classifier>('pipeline', 'classify', options.classify),
    );
    this.retry = byKind.retry?.port as RetryPort | undefined;
  }

  /**
   * Runs `fn` through the policies. With a retry policy, `options.timeoutMs` is the budget of the
   * whole call (every attempt and wait included) and each attempt gets the timeout policy's
   * `timeoutMs` or what is left, whichever is shorter; without one, it is the call's deadline.
   */
  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    const retry = this.retry;
    return retry === undefined ? runCall(this.plan, fn, options) : retry.run(this.plan, fn, options);
  }

  /**
   * Hears every attempt this pipeline runs, when it settles (verdict, latency, attempt...), after
   * the policies learned from it: for telemetry, e.g. a latency histogram by attempt. The
   * Observation is one object the pipeline reuses for every call: it is valid only during the
   * listener, so copy what you keep (`{ ...observation }`). Calls a policy refused never ran and
   * are not reported here: `onRefuse` hears them. Costs one check per call while nobody listens.
   */
  onSettle(listener: Listener<Observation>): Subscription {
    return this.callEvents().settled.subscribe(listener);
  }

  /**
   * Hears every attempt one of this pipeline's policies refuses (which policy, why, the
   * `retryAfterMs` hint, the error the caller gets). The event is the listener's to keep.
   */
  onRefuse(listener: Listener<RefusalEvent>): Subscription {
    return this.callEvents().refused.subscribe(listener);
  }

  private callEvents(): CallEvents {
    this.plan.events ??= new CallEvents();
    return this.plan.events;
  }

  snapshot(): PipelineSnapshot {
    // Every policy a pipeline accepts is one of the four (isPolicy checks the kind), so its
    // snapshot is the matching member of the union.
    return { kind: 'pipeline', policies: this.policies.map((p) => p.snapshot() as PolicySnapshot) };
  }
}

/**
 * Composes policies in the canonical order retry -> breaker -> limiter -> bulkhead -> timeout. Any subset works; out-of-order policies are refused
 * with an error that names the order. A trailing options object sets the classifier:
 * `pipeline(breaker(), limiter(), { classify })`.
 */
export function pipeline(...args: Array<Policy | PipelineOptions>): Pipeline {
  const last: unknown = args[args.length - 1];
  // Only a plain options object is taken for options: anything else (null, an array, a pipeline)
  // stays an argument, and the policy check names it.
  const hasOptions =
    typeof last === 'object' &&
    last !== null &&
    !Array.isArray(last) &&
    !(last instanceof Pipeline) &&
    !isPolicy(last) &&
    !('kind' in last);
  const policies = (hasOptions ? args.slice(0, -1) : args) as Policy[];
  return new Pipeline(policies, hasOptions ? (last as PipelineOptions) : {});
}
