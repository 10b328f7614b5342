import { SampleBuffer } from './samples';
import type { EventHandler, Simulator } from './simulator';

/** A named stretch of a scenario's schedule ("healthy", "cliff", "recovered"). */
export interface Phase {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
}

/** What the recorder reads at every sampling tick. */
export interface Probe {
  /** The admission limit (summed over clients when there are several). */
  limit(): number;
  /** Calls admitted by the clients and not yet finished (summed over clients). */
  inflight(): number;
  /** Calls waiting in the clients' limiter queues. */
  limiterQueued(): number;
  /** Calls the upstream holds: in service plus waiting in its own queue. */
  upstreamInflight(): number;
  /** Calls waiting in the upstream's queue (beyond its C servers). */
  upstreamQueue(): number;
}

/** Per-phase figures: what a scenario's criteria are written against. */
export interface PhaseMetrics {
  readonly name: string;
  readonly startMs: number;
  readonly endMs: number;
  /** Attempts offered to the clients (originals and retries). */
  readonly arrivals: number;
  /** Attempts refused by the limiter (shed, fast). */
  readonly shed: number;
  /** Attempts answered `ok` (the goodput). */
  readonly served: number;
  readonly overload: number;
  readonly failures: number;
  /** Attempts that hit the caller's deadline (in the upstream or still queued). */
  readonly timeouts: number;
  readonly queuedTimeouts: number;
  /** Attempts refused by a breaker. */
  readonly breakerRejected: number;
  readonly retries: number;
  readonly shedRate: number;
  /** Served calls per second. */
  readonly goodputPerSec: number;
  /** Caller-observed latency of served calls (queue wait included, to first byte for a stream). */
  readonly latencyP50Ms: number;
  readonly latencyP90Ms: number;
  readonly latencyP99Ms: number;
  /**
   * Upstream latency of served calls: from the moment the call reached the upstream (our queue
   * wait excluded) to its answer, or to the first byte of a stream.
   */
  readonly upstreamLatencyP50Ms: number;
  readonly upstreamLatencyP90Ms: number;
  readonly upstreamLatencyP99Ms: number;
  readonly limitMean: number;
  readonly limitMin: number;
  readonly limitMax: number;
  readonly limitEnd: number;
  readonly inflightMean: number;
  readonly inflightMax: number;
  readonly limiterQueuedMean: number;
  readonly upstreamInflightMean: number;
  readonly upstreamInflightMax: number;
  readonly upstreamQueueMean: number;
  readonly upstreamQueueMax: number;
  /** Served calls per client (fairness). */
  readonly servedByClient: readonly number[];
}

/** Time series for plots, one point per sampling tick. Rates and quantiles are per tick. */
export interface Series {
  readonly tMs: number[];
  readonly limit: number[];
  readonly inflight: number[];
  readonly limiterQueued: number[];
  readonly upstreamInflight: number[];
  readonly upstreamQueue: number[];
  /** Served-latency quantiles of calls finished during the tick (NaN when none: emitted as null). */
  readonly latencyP50Ms: number[];
  readonly latencyP99Ms: number[];
  readonly shedRate: number[];
  readonly goodputPerSec: number[];
  /** The limit of each client, when there are several (index: client). */
  readonly limitByClient: number[][];
}

const ARRIVALS = 0;
const SHED = 1;
const SERVED = 2;
const OVERLOAD = 3;
const FAILURES = 4;
const TIMEOUTS = 5;
const QUEUED_TIMEOUTS = 6;
const BREAKER_REJECTED = 7;
const RETRIES = 8;
const COUNTERS = 9;

const LIMIT_SUM = 0;
const LIMIT_MIN = 1;
const LIMIT_MAX = 2;
const LIMIT_END = 3;
const INFLIGHT_SUM = 4;
const INFLIGHT_MAX = 5;
const QUEUED_SUM = 6;
const UP_INFLIGHT_SUM = 7;
const UP_INFLIGHT_MAX = 8;
const UP_QUEUE_SUM = 9;
const UP_QUEUE_MAX = 10;
const TICKS = 11;
const GAUGES = 12;

/**
 * Counts what happens to calls, by phase, and samples the probe on a fixed virtual period for
 * time-averaged gauges and plot series. Recording is a counter increment (and a buffer push for a
 * served latency): no allocation per call.
 */
export class Recorder implements EventHandler {
  readonly phases: readonly Phase[];
  private phaseIndex = 0;
  private readonly counters: Float64Array;
  private readonly gauges: Float64Array;
  private readonly latencies: SampleBuffer[];
  private readonly upstreamLatencies: SampleBuffer[];
  private readonly servedByClient: Float64Array;
  private readonly tick = new SampleBuffer(256);
  private tickArrivals = 0;
  private tickShed = 0;
  private tickServed = 0;
  private probe: Probe | undefined;
  private limitByClient: (() => number[]) | undefined;
  private simulator: Simulator | undefined;
  readonly series: Series = {
    tMs: [],
    limit: [],
    inflight: [],
    limiterQueued: [],
    upstreamInflight: [],
    upstreamQueue: [],
    latencyP50Ms: [],
    latencyP99Ms: [],
    shedRate: [],
    goodputPerSec: [],
    limitByClient: [],
  };

  constructor(
    phases: readonly Phase[],
    private readonly clients: number,
    private readonly sampleEveryMs: number,
  ) {
    if (phases.length === 0) throw new RangeError('sim: a recorder needs at least one phase');
    this.phases = phases;
    this.counters = new Float64Array(phases.length * COUNTERS);
    this.gauges = new Float64Array(phases.length * GAUGES);
    for (let p = 0; p < phases.length; p++) {
      this.gauges[p * GAUGES + LIMIT_MIN] = Infinity;
      this.gauges[p * GAUGES + LIMIT_MAX] = -Infinity;
    }
    this.latencies = phases.map(() => new SampleBuffer(4096));
    this.upstreamLatencies = phases.map(() => new SampleBuffer(4096));
    this.servedByClient = new Float64Array(phases.length * clients);
  }

  /** Starts sampling on `simulator`; phase boundaries advance the phase the counters go to. */
  start(simulator: Simulator, probe: Probe, limitByClient?: () => number[]): void {
    this.simulator = simulator;
    this.probe = probe;
    this.limitByClient = limitByClient;
    for (let p = 1; p < this.phases.length; p++) {
      simulator.at(this.phases[p]!.startMs, () => {
        this.phaseIndex = p;
      });
    }
    simulator.schedule(this.phases[0]!.startMs + this.sampleEveryMs, this, 0);
  }

  get currentPhase(): number {
    return this.phaseIndex;
  }

  arrival(): void {
    this.counters[this.phaseIndex * COUNTERS + ARRIVALS]!++;
    this.tickArrivals++;
  }

  retry(): void {
    this.counters[this.phaseIndex * COUNTERS + RETRIES]!++;
  }

  shed(): void {
    this.counters[this.phaseIndex * COUNTERS + SHED]!++;
    this.tickShed++;
  }

  breakerRejected(): void {
    this.counters[this.phaseIndex * COUNTERS + BREAKER_REJECTED]!++;
  }

  /** A served call: `latencyMs` as the caller saw it, `upstreamMs` at the upstream alone. */
  served(client: number, latencyMs: number, upstreamMs: number): void {
    const p = this.phaseIndex;
    this.counters[p * COUNTERS + SERVED]!++;
    this.servedByClient[p * this.clients + client]!++;
    this.latencies[p]!.push(latencyMs);
    this.upstreamLatencies[p]!.push(upstreamMs);
    this.tick.push(latencyMs);
    this.tickServed++;
  }

  overload(): void {
    this.counters[this.phaseIndex * COUNTERS + OVERLOAD]!++;
  }

  failure(): void {
    this.counters[this.phaseIndex * COUNTERS + FAILURES]!++;
  }

  timeout(queued: boolean): void {
    this.counters[this.phaseIndex * COUNTERS + TIMEOUTS]!++;
    if (queued) this.counters[this.phaseIndex * COUNTERS + QUEUED_TIMEOUTS]!++;
  }

  /** The sampling tick. */
  fire(): void {
    const probe = this.probe!;
    const now = this.simulator!.now();
    // A tick summarises the interval that ends now: it belongs to the phase that interval lies in.
    const p = this.phaseAt(now - this.sampleEveryMs / 2);
    const g = p * GAUGES;
    const gauges = this.gauges;
    const limit = probe.limit();
    const inflight = probe.inflight();
    const queued = probe.limiterQueued();
    const upstreamInflight = probe.upstreamInflight();
    const upstreamQueue = probe.upstreamQueue();
    gauges[g + LIMIT_SUM]! += limit;
    if (limit < gauges[g + LIMIT_MIN]!) gauges[g + LIMIT_MIN] = limit;
    if (limit > gauges[g + LIMIT_MAX]!) gauges[g + LIMIT_MAX] = limit;
    gauges[g + LIMIT_END] = limit;
    gauges[g + INFLIGHT_SUM]! += inflight;
    if (inflight > gauges[g + INFLIGHT_MAX]!) gauges[g + INFLIGHT_MAX] = inflight;
    gauges[g + QUEUED_SUM]! += queued;
    gauges[g + UP_INFLIGHT_SUM]! += upstreamInflight;
    if (upstreamInflight > gauges[g + UP_INFLIGHT_MAX]!) gauges[g + UP_INFLIGHT_MAX] = upstreamInflight;
    gauges[g + UP_QUEUE_SUM]! += upstreamQueue;
    if (upstreamQueue > gauges[g + UP_QUEUE_MAX]!) gauges[g + UP_QUEUE_MAX] = upstreamQueue;
    gauges[g + TICKS]!++;

    const s = this.series;
    s.tMs.push(now);
    s.limit.push(limit);
    s.inflight.push(inflight);
    s.limiterQueued.push(queued);
    s.upstreamInflight.push(upstreamInflight);
    s.upstreamQueue.push(upstreamQueue);
    s.latencyP50Ms.push(this.tick.quantile(0.5));
    s.latencyP99Ms.push(this.tick.quantile(0.99));
    s.shedRate.push(this.tickArrivals === 0 ? 0 : this.tickShed / this.tickArrivals);
    s.goodputPerSec.push((this.tickServed * 1000) / this.sampleEveryMs);
    if (this.limitByClient !== undefined) s.limitByClient.push(this.limitByClient());
    this.tick.clear();
    this.tickArrivals = 0;
    this.tickShed = 0;
    this.tickServed = 0;

    const last = this.phases[this.phases.length - 1]!;
    if (now + this.sampleEveryMs <= last.endMs) this.simulator!.schedule(now + this.sampleEveryMs, this, 0);
  }

  private phaseAt(tMs: number): number {
    let p = 0;
    while (p < this.phases.length - 1 && tMs >= this.phases[p]!.endMs) p++;
    return p;
  }

  /** The figures of every phase. Call once the run is over. */
  summarize(): PhaseMetrics[] {
    return this.phases.map((phase, p) => {
      const c = (k: number): number => this.counters[p * COUNTERS + k]!;
      const g = (k: number): number => this.gauges[p * GAUGES + k]!;
      const ticks = g(TICKS);
      const avg = (k: number): number => (ticks === 0 ? NaN : g(k) / ticks);
      const latencies = this.latencies[p]!;
      const upstreamLatencies = this.upstreamLatencies[p]!;
      const seconds = (phase.endMs - phase.startMs) / 1000;
      return {
        name: phase.name,
        startMs: phase.startMs,
        endMs: phase.endMs,
        arrivals: c(ARRIVALS),
        shed: c(SHED),
        served: c(SERVED),
        overload: c(OVERLOAD),
        failures: c(FAILURES),
        timeouts: c(TIMEOUTS),
        queuedTimeouts: c(QUEUED_TIMEOUTS),
        breakerRejected: c(BREAKER_REJECTED),
        retries: c(RETRIES),
        shedRate: c(ARRIVALS) === 0 ? 0 : c(SHED) / c(ARRIVALS),
        goodputPerSec: c(SERVED) / seconds,
        latencyP50Ms: latencies.quantile(0.5),
        latencyP90Ms: latencies.quantile(0.9),
        latencyP99Ms: latencies.quantile(0.99),
        upstreamLatencyP50Ms: upstreamLatencies.quantile(0.5),
        upstreamLatencyP90Ms: upstreamLatencies.quantile(0.9),
        upstreamLatencyP99Ms: upstreamLatencies.quantile(0.99),
        limitMean: avg(LIMIT_SUM),
        limitMin: ticks === 0 ? NaN : g(LIMIT_MIN),
        limitMax: ticks === 0 ? NaN : g(LIMIT_MAX),
        limitEnd: ticks === 0 ? NaN : g(LIMIT_END),
        inflightMean: avg(INFLIGHT_SUM),
        inflightMax: ticks === 0 ? NaN : g(INFLIGHT_MAX),
        limiterQueuedMean: avg(QUEUED_SUM),
        upstreamInflightMean: avg(UP_INFLIGHT_SUM),
        upstreamInflightMax: ticks === 0 ? NaN : g(UP_INFLIGHT_MAX),
        upstreamQueueMean: avg(UP_QUEUE_SUM),
        upstreamQueueMax: ticks === 0 ? NaN : g(UP_QUEUE_MAX),
        servedByClient: Array.from(this.servedByClient.subarray(p * this.clients, (p + 1) * this.clients)),
      };
    });
  }
}
