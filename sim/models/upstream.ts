import type { Random } from '../engine/random';
import type { EventHandler, Simulator } from '../engine/simulator';
import type { Distribution } from './distributions';

/** How the upstream answered one call. */
export const ANSWER_OK = 0;
/** 429: the upstream says it is overloaded. */
export const ANSWER_OVERLOAD = 1;
/** A fast 5xx (an injected failure). */
export const ANSWER_FAILURE = 2;
export type Answer = typeof ANSWER_OK | typeof ANSWER_OVERLOAD | typeof ANSWER_FAILURE;

/** Where the upstream reports back. Call ids are the caller's; the upstream only carries them. */
export interface UpstreamSink {
  /** The first byte (a stream's first token) went out. Only in streaming mode. */
  firstByte(callId: number): void;
  /** The call is over: the last byte went out, or the upstream refused it. */
  done(callId: number, answer: Answer): void;
}

export interface UpstreamOptions {
  /** C: calls served at once. Beyond C, calls wait in the upstream's FIFO queue. */
  servers: number;
  /** The time one call holds a server (a stream: the time to first token). */
  service: Distribution;
  /**
   * Streaming: after the first token, the body keeps the connection (and its server) for this
   * long. The caller hears `firstByte` at the end of service and `done` after the body.
   */
  streamBody?: Distribution;
  /**
   * The upstream's own admission control: once this many calls per server are waiting (so the
   * bound moves with a capacity change), a new call is answered 429 at once instead of queued.
   */
  overloadQueuePerServer?: number;
  /**
   * One bad replica behind a load balancer: this share of calls is answered 429 at once, whatever
   * the load (adr/0095). Default 0.
   */
  refusalRate?: number;
  /** How long a 429 or an injected failure takes to come back, in ms (default 1). */
  fastAnswerMs?: number;
  /**
   * The seed-002 model instead of a queue: no servers, no waiting; a call that starts while
   * `inflight >= servers` is slowed by `penaltyPerExtra` of its service time per extra call
   * (latency = service * (1 + penaltyPerExtra * max(0, inflight - servers))).
   */
  penaltyPerExtra?: number;
}

const IDLE = 0;
const WAITING = 1;
const SERVING = 2;
const STREAMING = 3;

class Completion implements EventHandler {
  constructor(private readonly upstream: Upstream) {}
  fire(callId: number): void {
    this.upstream.finish(callId);
  }
}

class FirstByte implements EventHandler {
  constructor(private readonly upstream: Upstream) {}
  fire(callId: number): void {
    this.upstream.firstByteOut(callId);
  }
}

class FastAnswer implements EventHandler {
  constructor(private readonly upstream: Upstream) {}
  fire(encoded: number): void {
    this.upstream.fastAnswerOut(encoded);
  }
}

/**
 * The synthetic upstream: C servers with a service-time distribution and a FIFO queue beyond
 * them, so latency grows with in-flight (spec §10: "a synthetic upstream whose latency is a
 * function of concurrency"). Schedules move its capacity (`setServers`), its speed
 * (`setServiceScale`: a latency cliff, a permanent baseline shift, recovery) and its injected
 * failure rate. It knows nothing about limiters: it sees only call ids.
 */
export class Upstream {
  private servers: number;
  private serviceScale = 1;
  private failureRate = 0;
  private busy = 0;
  private state = new Uint8Array(1024);
  private queue = new Int32Array(1024);
  private queueHead = 0;
  private queueLength = 0;
  private readonly completion = new Completion(this);
  private readonly firstByteEvent = new FirstByte(this);
  private readonly fastAnswer = new FastAnswer(this);
  private readonly fastAnswerMs: number;
  private readonly overloadQueuePerServer: number;
  private readonly penalty: number | undefined;
  /** Calls that arrived, for the record. */
  received = 0;

  constructor(
    private readonly simulator: Simulator,
    private readonly random: Random,
    private readonly sink: UpstreamSink,
    private readonly options: UpstreamOptions,
  ) {
    this.servers = options.servers;
    this.fastAnswerMs = options.fastAnswerMs ?? 1;
    this.overloadQueuePerServer = options.overloadQueuePerServer ?? Infinity;
    this.penalty = options.penaltyPerExtra;
  }

  /** Calls the upstream holds: in service, streaming and waiting. */
  get inflight(): number {
    return this.busy + this.queueLength;
  }

  get waiting(): number {
    return this.queueLength;
  }

  get capacity(): number {
    return this.servers;
  }

  setServers(servers: number): void {
    this.servers = servers;
    this.startWaiting();
  }

  /** Multiplies every service time drawn from now on (1 = the distribution as given). */
  setServiceScale(scale: number): void {
    this.serviceScale = scale;
  }

  /** Share of calls answered with a fast failure (5xx) from now on. */
  setFailureRate(rate: number): void {
    this.failureRate = rate;
  }

  /** A call arrives. */
  request(callId: number): void {
    this.received++;
    if (callId >= this.state.length) this.growState(callId);
    const refusalRate = this.options.refusalRate;
    if (refusalRate !== undefined && refusalRate > 0 && this.random.next() < refusalRate) {
      this.simulator.schedule(this.simulator.now() + this.fastAnswerMs, this.fastAnswer, callId * 4 + 1);
      return;
    }
    if (this.failureRate > 0 && this.random.next() < this.failureRate) {
      this.simulator.schedule(this.simulator.now() + this.fastAnswerMs, this.fastAnswer, callId * 4 + 2);
      return;
    }
    if (this.penalty !== undefined) {
      const extra = this.busy >= this.servers ? this.busy + 1 - this.servers : 0;
      this.busy++;
      this.state[callId] = SERVING;
      const serviceMs = this.options.service.sample(this.random) * this.serviceScale * (1 + this.penalty * extra);
      this.simulator.schedule(this.simulator.now() + serviceMs, this.completion, callId);
      return;
    }
    if (this.busy < this.servers && this.queueLength === 0) {
      this.begin(callId);
      return;
    }
    if (this.queueLength >= this.overloadQueuePerServer * this.servers) {
      this.simulator.schedule(this.simulator.now() + this.fastAnswerMs, this.fastAnswer, callId * 4 + 1);
      return;
    }
    this.enqueue(callId);
  }

  /** @internal */
  finish(callId: number): void {
    this.busy--;
    this.state[callId] = IDLE;
    this.startWaiting();
    this.sink.done(callId, ANSWER_OK);
  }

  /** @internal */
  firstByteOut(callId: number): void {
    this.state[callId] = STREAMING;
    const bodyMs = this.options.streamBody!.sample(this.random);
    this.simulator.schedule(this.simulator.now() + bodyMs, this.completion, callId);
    this.sink.firstByte(callId);
  }

  /** @internal */
  fastAnswerOut(encoded: number): void {
    const callId = Math.floor(encoded / 4);
    this.sink.done(callId, (encoded - callId * 4) as Answer);
  }

  private begin(callId: number): void {
    this.busy++;
    this.state[callId] = SERVING;
    const serviceMs = this.options.service.sample(this.random) * this.serviceScale;
    const at = this.simulator.now() + serviceMs;
    if (this.options.streamBody !== undefined) this.simulator.schedule(at, this.firstByteEvent, callId);
    else this.simulator.schedule(at, this.completion, callId);
  }

  private startWaiting(): void {
    while (this.busy < this.servers && this.queueLength > 0) {
      const callId = this.queue[this.queueHead]!;
      this.queueHead = (this.queueHead + 1) & (this.queue.length - 1);
      this.queueLength--;
      this.begin(callId);
    }
  }

  private enqueue(callId: number): void {
    if (this.queueLength === this.queue.length) {
      const grown = new Int32Array(this.queue.length * 2);
      for (let i = 0; i < this.queueLength; i++) grown[i] = this.queue[(this.queueHead + i) & (this.queue.length - 1)]!;
      this.queue = grown;
      this.queueHead = 0;
    }
    this.queue[(this.queueHead + this.queueLength) & (this.queue.length - 1)] = callId;
    this.queueLength++;
    this.state[callId] = WAITING;
  }

  private growState(callId: number): void {
    let size = this.state.length;
    while (size <= callId) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.state);
    this.state = grown;
  }
}
