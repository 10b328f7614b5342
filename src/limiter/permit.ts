import type { Observation } from '../core/observation';
import type { Permit } from '../core/ports';
import type { Admission } from './admission';

/** A pooled permit (ADR-0041): a second settle before reuse is a no-op; after reuse it is another call's permit. */
export class PooledPermit implements Permit {
  inflight = 0;
  /** @internal */
  active = false;
  /** @internal True once the call reported its latency through `mark`. */
  marked = false;
  /** @internal */
  nextFree: PooledPermit | undefined = undefined;

  constructor(private readonly owner: Admission) {}

  settle(observation: Observation, now?: number): void {
    if (!this.active) return;
    this.active = false;
    this.owner.release(this, observation, now);
  }

  mark(latencyMs: number, now?: number): void {
    if (!this.active || this.marked) return;
    this.marked = true;
    this.owner.mark(latencyMs, now, this.inflight);
  }
}
