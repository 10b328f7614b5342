import type { Observation } from '../../src/core/observation';
import type { Permit } from '../../src/core/ports';
import type { LimiterLike } from './clients';

/**
 * A fixed concurrency limit through the `tryAcquire`/`settle` pair, with no control loop: the
 * harness's own reference point, used by the engine's tests and by the speed figure (it isolates
 * the engine's cost from the limiter's). The scenarios use the real `limiter()`.
 */
export class FixedLimit implements LimiterLike {
  private active = 0;
  private readonly pool: FixedPermit[] = [];

  constructor(readonly limit: number) {}

  get inflight(): number {
    return this.active;
  }

  tryAcquire(): Permit | undefined {
    if (this.active >= this.limit) return undefined;
    this.active++;
    const permit = this.pool.pop() ?? new FixedPermit(this);
    permit.inflight = this.active;
    permit.live = true;
    return permit;
  }

  /** @internal */
  release(permit: FixedPermit): void {
    this.active--;
    this.pool.push(permit);
  }
}

class FixedPermit implements Permit {
  inflight = 0;
  live = false;
  constructor(private readonly owner: FixedLimit) {}
  settle(_observation: Observation): void {
    if (!this.live) return;
    this.live = false;
    this.owner.release(this);
  }
}
