import type { CallFn, ExecuteOptions, Executor } from './call';
import type { ResolvedClock } from './clock';
import type { BreakerPort, BulkheadPort, CallPlan, LimiterPort, TimeoutPort } from './ports';

/** The canonical order, outermost first (DESIGN.md §1, spec §8; retry outermost: issue 18). */
export const POLICY_ORDER = Object.freeze(['retry', 'breaker', 'limiter', 'bulkhead', 'timeout'] as const);
export type PolicyKind = (typeof POLICY_ORDER)[number];

/**
 * The retry policy's seam: it runs a call's attempts, each one through a pipeline's inner policies.
 * @internal
 */
export interface RetryPort {
  run<T>(plan: CallPlan, fn: CallFn<T>, options: ExecuteOptions | undefined): Promise<T>;
}

/** Every policy runs calls alone, composes into a pipeline, and reports a snapshot. */
export interface Policy<Snapshot extends object = object> extends Executor {
  readonly kind: PolicyKind;
  snapshot(): Snapshot;
  /** @internal The clock the policy reads; a pipeline's policies must share one. */
  readonly clock: ResolvedClock;
  /** @internal The seam the call runner drives. */
  readonly port: BreakerPort | LimiterPort | BulkheadPort | TimeoutPort | RetryPort;
}

export function isPolicy(value: unknown): value is Policy {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as { kind?: unknown }).kind === 'string' &&
    (POLICY_ORDER as readonly string[]).includes((value as { kind: string }).kind) &&
    typeof (value as { execute?: unknown }).execute === 'function' &&
    typeof (value as { port?: unknown }).port === 'object'
  );
}
