import type { Executor } from './call';
import type { ResolvedClock } from './clock';
import type { BreakerPort, BulkheadPort, LimiterPort, TimeoutPort } from './ports';

/** The canonical order, outermost first (DESIGN.md §1, spec §8). */
export const POLICY_ORDER = Object.freeze(['breaker', 'limiter', 'bulkhead', 'timeout'] as const);
export type PolicyKind = (typeof POLICY_ORDER)[number];

/** Every policy runs calls alone, composes into a pipeline, and reports a snapshot. */
export interface Policy<Snapshot extends object = object> extends Executor {
  readonly kind: PolicyKind;
  snapshot(): Snapshot;
  /** @internal The clock the policy reads; a pipeline's policies must share one. */
  readonly clock: ResolvedClock;
  /** @internal The seam the call runner drives. */
  readonly port: BreakerPort | LimiterPort | BulkheadPort | TimeoutPort;
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
