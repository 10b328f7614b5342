import type { Random } from '../engine/random';
import type { EventHandler, Simulator } from '../engine/simulator';
import type { Clients } from './clients';
import type { Distribution } from './distributions';

/** A piecewise-constant rate: from `atMs` on, `perSecond` arrivals per second. */
export interface RateStep {
  readonly atMs: number;
  readonly perSecond: number;
}

/**
 * Open-loop Poisson arrivals for one client, with a rate schedule. Open loop: arrivals do not
 * wait for answers, which is what overload looks like from the upstream's side (Schroeder,
 * Wierman and Harchol-Balter, "Open Versus Closed: A Cautionary Tale", NSDI 2006).
 *
 * Rate changes are exact: an exponential gap that would cross a step is cut at the step and
 * redrawn at the new rate (memorylessness makes that the same process).
 */
export class PoissonArrivals implements EventHandler {
  private step = 0;

  constructor(
    private readonly simulator: Simulator,
    private readonly random: Random,
    private readonly clients: Clients,
    private readonly client: number,
    private readonly rate: readonly RateStep[],
    private readonly untilMs: number,
  ) {
    if (rate.length === 0 || rate[0]!.atMs !== 0) throw new RangeError('sim: a rate schedule starts at 0 ms');
  }

  start(): void {
    this.scheduleFrom(this.simulator.now());
  }

  /** arg 1: a real arrival; arg 0: a rate step boundary (redraw). */
  fire(arrival: number): void {
    const now = this.simulator.now();
    if (arrival === 1) this.clients.issue(this.client, 0, 1);
    this.scheduleFrom(now);
  }

  private scheduleFrom(now: number): void {
    const rate = this.rate;
    while (this.step + 1 < rate.length && rate[this.step + 1]!.atMs <= now) this.step++;
    const perSecond = rate[this.step]!.perSecond;
    const boundary = this.step + 1 < rate.length ? rate[this.step + 1]!.atMs : Infinity;
    const next = perSecond > 0 ? now + this.random.exponential(1000 / perSecond) : Infinity;
    if (next >= boundary) {
      if (boundary < this.untilMs) this.simulator.schedule(boundary, this, 0);
      return;
    }
    if (next < this.untilMs) this.simulator.schedule(next, this, 1);
  }
}

/**
 * Closed-loop users for one client: each sends a call, waits for its outcome (with its retries),
 * thinks, and sends the next. The offered load falls as latency rises.
 */
export class ClosedLoopUsers implements EventHandler {
  constructor(
    private readonly simulator: Simulator,
    private readonly random: Random,
    private readonly clients: Clients,
    private readonly client: number,
    private readonly users: number,
    private readonly think: Distribution,
    private readonly untilMs: number,
  ) {}

  start(): void {
    const previous = this.clients.onFinished;
    this.clients.onFinished = (client, tag) => {
      if (client === this.client) this.finished(tag);
      else previous?.(client, tag);
    };
    // Stagger the first calls over one think time so the users do not start in lockstep.
    for (let user = 0; user < this.users; user++) {
      this.simulator.schedule(this.simulator.now() + this.think.sample(this.random), this, user);
    }
  }

  fire(user: number): void {
    this.clients.issue(this.client, user, 1);
  }

  private finished(user: number): void {
    const next = this.simulator.now() + this.think.sample(this.random);
    if (next < this.untilMs) this.simulator.schedule(next, this, user);
  }
}
