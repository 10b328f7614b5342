import type { Simulator as SimulatorType } from '../engine/simulator';
import { Simulator } from '../engine/simulator';
import { Random } from '../engine/random';
import { Recorder, type Phase } from '../engine/metrics';
import { Clients, type ClientOptions } from './clients';
import { Upstream, type UpstreamOptions } from './upstream';

export interface WorldOptions {
  readonly seed: number;
  /** Contiguous phases from 0 ms; the run ends with the last one. */
  readonly phases: readonly Phase[];
  /** Sampling period for gauges and plot series, in virtual ms. */
  readonly sampleEveryMs: number;
  readonly upstream: UpstreamOptions;
  /** Builds the clients once the clock and the seeded randomness exist. */
  readonly clients: (tools: WorldTools) => readonly ClientOptions[];
}

/** What a scenario's client factory gets: the clock to pass to every policy, and seeded randomness. */
export interface WorldTools {
  readonly clock: SimulatorType;
  /** An independent seeded stream of uniforms in [0, 1), in the shape `limiter({ random })` takes. */
  random(label: number): () => number;
}

/** Stream labels: each model draws from its own stream, so models do not perturb each other. */
const UPSTREAM_STREAM = 1;
const RETRY_STREAM = 2;
const LOAD_STREAM = 100;
const POLICY_STREAM = 1000;

/**
 * A scenario's world: the virtual clock, the upstream, the clients, and the recorder, all derived
 * from one seed.
 */
export class World {
  readonly simulator = new Simulator();
  readonly recorder: Recorder;
  readonly clients: Clients;
  readonly upstream: Upstream;
  readonly endMs: number;
  private readonly root: Random;
  private readonly usesPromises: boolean;

  constructor(options: WorldOptions) {
    const phases = options.phases;
    for (let i = 0; i < phases.length; i++) {
      const expectedStart = i === 0 ? 0 : phases[i - 1]!.endMs;
      if (phases[i]!.startMs !== expectedStart || phases[i]!.endMs <= phases[i]!.startMs) {
        throw new RangeError(`sim: phases must be contiguous from 0 ms; phase ${phases[i]!.name} is not`);
      }
    }
    this.endMs = phases[phases.length - 1]!.endMs;
    this.root = new Random(options.seed);
    const upstreamRandom = this.root.fork(UPSTREAM_STREAM);
    const retryRandom = this.root.fork(RETRY_STREAM);
    const simulator = this.simulator;
    const tools: WorldTools = {
      clock: simulator,
      random: (label) => this.root.fork(POLICY_STREAM + label).asFunction(),
    };
    const clientOptions = options.clients(tools);
    this.recorder = new Recorder(phases, clientOptions.length, options.sampleEveryMs);
    this.clients = new Clients(simulator, retryRandom, this.recorder, clientOptions);
    this.upstream = new Upstream(simulator, upstreamRandom, this.clients, options.upstream);
    this.clients.connect(this.upstream);
    this.usesPromises = clientOptions.some((c) => c.executor !== undefined);
    const clients = this.clients;
    const upstream = this.upstream;
    const limiters = clientOptions.map((c) => c.limiter);
    this.recorder.start(
      simulator,
      {
        limit: () => {
          let sum = 0;
          for (const l of limiters) sum += l === undefined ? NaN : l.limit;
          return sum;
        },
        inflight: () => clients.inflight,
        limiterQueued: () => {
          let sum = 0;
          for (const l of limiters) sum += l?.queued ?? 0;
          return sum;
        },
        upstreamInflight: () => upstream.inflight,
        upstreamQueue: () => upstream.waiting,
      },
      limiters.length > 1 ? () => limiters.map((l) => (l === undefined ? NaN : l.limit)) : undefined,
    );
  }

  /** A seeded stream for a load model (one per source, so sources are independent). */
  loadRandom(label: number): Random {
    return this.root.fork(LOAD_STREAM + label);
  }

  /** Runs to the end of the last phase. */
  async run(): Promise<void> {
    if (this.usesPromises) await this.simulator.runAsync(this.endMs);
    else this.simulator.run(this.endMs);
  }
}
