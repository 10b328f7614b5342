import type { CallContext, Executor } from '../../src/core/call';
import type { Observation } from '../../src/core/observation';
import type { Permit } from '../../src/core/ports';
import {
  isBrokenCircuitError,
  isBulkheadFullError,
  isLimitExceededError,
  isTimeoutError,
} from '../../src/errors/index';
import type { Recorder } from '../engine/metrics';
import type { Random } from '../engine/random';
import type { EventHandler, Simulator } from '../engine/simulator';
import { ANSWER_FAILURE, ANSWER_OK, ANSWER_OVERLOAD, type Answer, type Upstream, type UpstreamSink } from './upstream';

/** What the harness needs from a limiter: the real `limiter()` and the sim's stand-ins fit. */
export interface LimiterLike {
  tryAcquire(): Permit | undefined;
  readonly limit: number;
  readonly inflight: number;
  readonly queued?: number;
}

/** Retries with capped exponential backoff and full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015). */
export interface RetryPolicy {
  /** Attempts in all, the original included. */
  maxAttempts: number;
  baseMs: number;
  capMs: number;
}

export interface ClientOptions {
  /**
   * The client's limiter. Without `executor`, calls go through `tryAcquire()` and
   * `permit.settle()` (the synchronous low-level pair: no queue, a refusal is a shed). With
   * neither, calls go straight to the upstream (no protection at all).
   */
  limiter?: LimiterLike;
  /** Run every call through `executor.execute(fn, { timeoutMs })`: the real user path. */
  executor?: Executor;
  /** The caller's deadline (execute mode). */
  timeoutMs?: number;
  /**
   * What the call does when its deadline passes (execute mode). true (default): it stops at once,
   * as fetch does on abort (the permit is released at the deadline; the upstream's work goes on,
   * doomed). false: it ignores `ctx.signal` and ends when the upstream does, holding its slot till
   * then (the caller still hears the TimeoutError at the deadline).
   */
  abortOnDeadline?: boolean;
  /** Streaming: call `ctx.mark()` at the first token (execute) or report latency to it (sync). */
  mark?: boolean;
  retry?: RetryPolicy;
  /**
   * The client's own event loop stalls (a GC pause, a CPU-bound handler): stalls start at random
   * (exponential gaps of mean `meanGapMs`) and last uniform(minMs, maxMs). While stalled, nothing
   * reaches the client: answers and new arrivals wait for the stall's end and are then handled
   * in order, with the clock read then, so their latency includes the stall (as on a real
   * machine). The library's deadline timers still fire on time (a simplification: on a real event
   * loop they would be late too).
   */
  stall?: StallModel;
}

export interface StallModel {
  readonly meanGapMs: number;
  readonly minMs: number;
  readonly maxMs: number;
}

/** The responses the simulated upstream resolves with (the default classifier reads `status`). */
const RESPONSE_OK = Object.freeze({ status: 200 });
const RESPONSE_OVERLOAD = Object.freeze({ status: 429 });
const RESPONSE_FAILURE = Object.freeze({ status: 500 });
const RESPONSES = [RESPONSE_OK, RESPONSE_OVERLOAD, RESPONSE_FAILURE] as const;

const FREE = 0;
const SYNC = 1;
const EXECUTE = 2;
/** The caller gave up (deadline); the upstream still holds the call (doomed work). */
const ABANDONED = 3;

/**
 * One execute()-mode call: its context, its promise's settle functions and its bookkeeping. The
 * callbacks are assigned in the constructor, not as arrow-function fields: tsx compiles with
 * esbuild's keepNames, which names every such field with a defineProperty per instance, and that
 * cost 12% of a sweep's CPU (one per simulated call).
 */
class ExecuteCall {
  id = -1;
  context: CallContext | undefined = undefined;
  resolve: ((value: { status: number }) => void) | undefined = undefined;
  reject: ((reason: unknown) => void) | undefined = undefined;
  firstByteAt = NaN;
  /** When the call reached the upstream (fn started), virtual ms. */
  startedAt = NaN;
  readonly run: (context: CallContext) => Promise<{ status: number }>;
  readonly onResult: (response: { status: number }) => void;
  readonly onError: (error: unknown) => void;
  private readonly onAbort: () => void;

  constructor(
    clients: Clients,
    readonly client: number,
    readonly tag: number,
    readonly attempt: number,
    readonly issuedAt: number,
  ) {
    this.run = (context) => {
      this.context = context;
      return new Promise((resolve, reject) => {
        this.resolve = resolve;
        this.reject = reject;
        const options = clients.clientOptions[this.client]!;
        if (options.timeoutMs !== undefined && options.abortOnDeadline !== false) {
          context.signal.addEventListener('abort', this.onAbort);
        }
        this.id = clients.startExecuteCall(this);
      });
    };
    this.onAbort = () => {
      // As fetch does: the caller's promise rejects at once; the upstream's work goes on.
      clients.abandon(this.id);
      this.reject!(this.context!.signal.reason);
    };
    this.onResult = (response) => {
      clients.recordAnswer(
        this,
        response.status === 200 ? ANSWER_OK : response.status === 429 ? ANSWER_OVERLOAD : ANSWER_FAILURE,
      );
    };
    this.onError = (error) => clients.recordError(this, error);
  }
}

class StallStarts implements EventHandler {
  constructor(
    private readonly clients: Clients,
    private readonly simulator: Simulator,
    private readonly random: Random,
    private readonly model: StallModel,
  ) {}
  start(client: number): void {
    this.simulator.schedule(this.simulator.now() + this.random.exponential(this.model.meanGapMs), this, client);
  }
  fire(client: number): void {
    const { minMs, maxMs } = this.model;
    this.clients.stallUntil(client, this.simulator.now() + minMs + this.random.next() * (maxMs - minMs));
    this.start(client);
  }
}

class RetryDue implements EventHandler {
  constructor(private readonly clients: Clients) {}
  fire(slot: number): void {
    this.clients.retryDue(slot);
  }
}

/**
 * The callers: one or many clients, each with its own limiter (or executor), sharing one
 * upstream. Load models call `issue()`; the harness admits the call, sends it upstream, settles
 * the permit with what came back, records the outcome, and retries when asked to.
 *
 * The synchronous path keeps its per-call state in parallel arrays indexed by a recycled call id,
 * so a call allocates only the Observation it settles.
 */
export class Clients implements UpstreamSink {
  readonly clientOptions: readonly ClientOptions[];
  private upstream!: Upstream;
  private state = new Uint8Array(1024);
  private callClient = new Int32Array(1024);
  private callTag = new Int32Array(1024);
  private callAttempt = new Int32Array(1024);
  private callIssuedAt = new Float64Array(1024);
  private callStartedAt = new Float64Array(1024);
  private callFirstByteAt = new Float64Array(1024);
  private permits: (Permit | undefined)[] = [];
  private executeCalls: (ExecuteCall | undefined)[] = [];
  private freeIds = new Int32Array(1024);
  private freeCount = 0;
  private nextId = 0;
  private readonly inflightByClient: Int32Array;
  private readonly retryEvent = new RetryDue(this);
  private retryClient: number[] = [];
  private retryTag: number[] = [];
  private retryAttempt: number[] = [];
  private retryFree: number[] = [];
  /** Called when a caller's call is over for good (served, or failed with no retry left): closed-loop load listens. */
  onFinished: ((client: number, tag: number) => void) | undefined = undefined;
  /** Calls refused by a limiter, by client (tests read it). */
  readonly shedByClient: Int32Array;
  /** The first time a limiter shed a call, per client (NaN: never). */
  readonly firstShedAt: Float64Array;
  /** Until when each client's event loop is stalled (virtual ms; <= now: running). */
  private readonly stalledUntil: Float64Array;
  /** Stalls so far, all clients. */
  stalls = 0;

  constructor(
    private readonly simulator: Simulator,
    private readonly random: Random,
    private readonly recorder: Recorder,
    clients: readonly ClientOptions[],
  ) {
    this.clientOptions = clients;
    this.inflightByClient = new Int32Array(clients.length);
    this.shedByClient = new Int32Array(clients.length);
    this.firstShedAt = new Float64Array(clients.length).fill(NaN);
    this.stalledUntil = new Float64Array(clients.length);
    clients.forEach((options, client) => {
      if (options.stall !== undefined)
        new StallStarts(this, simulator, random.fork(7000 + client), options.stall).start(client);
    });
  }

  /** @internal A stall of `client` lasts until `untilMs`. */
  stallUntil(client: number, untilMs: number): void {
    if (untilMs > this.stalledUntil[client]!) this.stalledUntil[client] = untilMs;
    this.stalls++;
  }

  /** Defers `run` to the end of `client`'s stall; false when the client is not stalled. */
  private deferIfStalled(client: number, run: () => void): boolean {
    const until = this.stalledUntil[client]!;
    if (!(until > this.simulator.now())) return false;
    this.simulator.at(until, run);
    return true;
  }

  connect(upstream: Upstream): void {
    this.upstream = upstream;
  }

  get count(): number {
    return this.clientOptions.length;
  }

  /** Calls admitted and not yet finished, all clients together. */
  get inflight(): number {
    let sum = 0;
    for (let i = 0; i < this.inflightByClient.length; i++) sum += this.inflightByClient[i]!;
    return sum;
  }

  inflightOf(client: number): number {
    return this.inflightByClient[client]!;
  }

  /** A new call from `client` (an arrival, or a closed-loop user's next call). */
  issue(client: number, tag: number, attempt = 1): void {
    if (this.deferIfStalled(client, () => this.issue(client, tag, attempt))) return;
    const recorder = this.recorder;
    recorder.arrival();
    if (attempt > 1) recorder.retry();
    const options = this.clientOptions[client]!;
    if (options.executor !== undefined) {
      const call = new ExecuteCall(this, client, tag, attempt, this.simulator.now());
      options.executor.execute(call.run, { timeoutMs: options.timeoutMs, attempt }).then(call.onResult, call.onError);
      return;
    }
    let permit: Permit | undefined;
    if (options.limiter !== undefined) {
      permit = options.limiter.tryAcquire();
      if (permit === undefined) {
        this.noteShed(client);
        recorder.shed();
        this.afterFailure(client, tag, attempt);
        return;
      }
    }
    const id = this.allocate();
    this.state[id] = SYNC;
    this.callClient[id] = client;
    this.callTag[id] = tag;
    this.callAttempt[id] = attempt;
    const now = this.simulator.now();
    this.callIssuedAt[id] = now;
    this.callStartedAt[id] = now;
    this.callFirstByteAt[id] = NaN;
    this.permits[id] = permit;
    this.inflightByClient[client]!++;
    this.upstream.request(id);
  }

  /** @internal */
  startExecuteCall(call: ExecuteCall): number {
    const id = this.allocate();
    this.state[id] = EXECUTE;
    this.executeCalls[id] = call;
    this.callClient[id] = call.client;
    this.callStartedAt[id] = this.simulator.now();
    call.startedAt = this.simulator.now();
    this.inflightByClient[call.client]!++;
    this.upstream.request(id);
    return id;
  }

  /** @internal The caller stopped waiting; the id stays taken until the upstream lets go of it. */
  abandon(id: number): void {
    if (this.state[id] !== EXECUTE) return;
    this.state[id] = ABANDONED;
    this.inflightByClient[this.callClient[id]!]!--;
  }

  firstByte(id: number): void {
    const state = this.state[id];
    if ((state === SYNC || state === EXECUTE) && this.deferIfStalled(this.callClient[id]!, () => this.firstByte(id)))
      return;
    if (state === SYNC) {
      this.callFirstByteAt[id] = this.simulator.now();
    } else if (state === EXECUTE) {
      const call = this.executeCalls[id]!;
      call.firstByteAt = this.simulator.now();
      if (this.clientOptions[call.client]!.mark === true) call.context!.mark();
    }
  }

  done(id: number, answer: Answer): void {
    const state = this.state[id];
    if ((state === SYNC || state === EXECUTE) && this.deferIfStalled(this.callClient[id]!, () => this.done(id, answer)))
      return;
    if (state === EXECUTE) {
      const call = this.executeCalls[id]!;
      this.executeCalls[id] = undefined;
      this.inflightByClient[call.client]!--;
      this.release(id);
      call.resolve!(RESPONSES[answer]);
      return;
    }
    if (state === ABANDONED) {
      this.executeCalls[id] = undefined;
      this.release(id);
      return;
    }
    const now = this.simulator.now();
    const client = this.callClient[id]!;
    const startedAt = this.callStartedAt[id]!;
    const firstByteAt = this.callFirstByteAt[id]!;
    const permit = this.permits[id];
    const tag = this.callTag[id]!;
    const attempt = this.callAttempt[id]!;
    const issuedAt = this.callIssuedAt[id]!;
    this.permits[id] = undefined;
    this.inflightByClient[client]!--;
    this.release(id);
    if (permit !== undefined) {
      const marked = firstByteAt === firstByteAt && this.clientOptions[client]!.mark === true;
      const observation: Observation = {
        verdict: answer === ANSWER_OK ? 'ok' : answer === ANSWER_OVERLOAD ? 'overload' : 'failure',
        latencyMs: (marked ? firstByteAt : now) - startedAt,
        durationMs: now - startedAt,
      };
      permit.settle(observation);
    }
    this.recordOutcome(client, tag, attempt, issuedAt, startedAt, firstByteAt, answer);
  }

  /** @internal An execute()-mode call resolved with the upstream's answer. */
  recordAnswer(call: ExecuteCall, answer: Answer): void {
    this.recordOutcome(call.client, call.tag, call.attempt, call.issuedAt, call.startedAt, call.firstByteAt, answer);
  }

  /** @internal An execute()-mode call rejected: shed, deadline, or breaker. */
  recordError(call: ExecuteCall, error: unknown): void {
    const recorder = this.recorder;
    if (isLimitExceededError(error) || isBulkheadFullError(error)) {
      this.noteShed(call.client);
      recorder.shed();
    } else if (isTimeoutError(error)) {
      recorder.timeout(error.queued);
    } else if (isBrokenCircuitError(error)) {
      recorder.breakerRejected();
    } else {
      throw error instanceof Error ? error : new Error(String(error));
    }
    this.afterFailure(call.client, call.tag, call.attempt);
  }

  private recordOutcome(
    client: number,
    tag: number,
    attempt: number,
    issuedAt: number,
    startedAt: number,
    firstByteAt: number,
    answer: Answer,
  ): void {
    const recorder = this.recorder;
    if (answer === ANSWER_OK) {
      const end = firstByteAt === firstByteAt ? firstByteAt : this.simulator.now();
      recorder.served(client, end - issuedAt, end - startedAt);
      this.onFinished?.(client, tag);
      return;
    }
    if (answer === ANSWER_OVERLOAD) recorder.overload();
    else recorder.failure();
    this.afterFailure(client, tag, attempt);
  }

  private noteShed(client: number): void {
    this.shedByClient[client]!++;
    if (this.firstShedAt[client] !== this.firstShedAt[client]) this.firstShedAt[client] = this.simulator.now();
  }

  private afterFailure(client: number, tag: number, attempt: number): void {
    const retry = this.clientOptions[client]!.retry;
    if (retry === undefined || attempt >= retry.maxAttempts) {
      this.onFinished?.(client, tag);
      return;
    }
    const ceiling = Math.min(retry.capMs, retry.baseMs * 2 ** (attempt - 1));
    const slot = this.retryFree.length > 0 ? this.retryFree.pop()! : this.retryClient.length;
    this.retryClient[slot] = client;
    this.retryTag[slot] = tag;
    this.retryAttempt[slot] = attempt + 1;
    this.simulator.schedule(this.simulator.now() + this.random.next() * ceiling, this.retryEvent, slot);
  }

  /** @internal */
  retryDue(slot: number): void {
    const client = this.retryClient[slot]!;
    const tag = this.retryTag[slot]!;
    const attempt = this.retryAttempt[slot]!;
    this.retryFree.push(slot);
    this.issue(client, tag, attempt);
  }

  private allocate(): number {
    if (this.freeCount > 0) return this.freeIds[--this.freeCount]!;
    const id = this.nextId++;
    if (id === this.state.length) this.grow();
    return id;
  }

  private release(id: number): void {
    this.state[id] = FREE;
    if (this.freeCount === this.freeIds.length) {
      const grown = new Int32Array(this.freeIds.length * 2);
      grown.set(this.freeIds);
      this.freeIds = grown;
    }
    this.freeIds[this.freeCount++] = id;
  }

  private grow(): void {
    const size = this.state.length * 2;
    const growU8 = (a: Uint8Array<ArrayBuffer>): Uint8Array<ArrayBuffer> => {
      const b = new Uint8Array(size);
      b.set(a);
      return b;
    };
    const growI32 = (a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> => {
      const b = new Int32Array(size);
      b.set(a);
      return b;
    };
    const growF64 = (a: Float64Array<ArrayBuffer>): Float64Array<ArrayBuffer> => {
      const b = new Float64Array(size);
      b.set(a);
      return b;
    };
    this.state = growU8(this.state);
    this.callClient = growI32(this.callClient);
    this.callTag = growI32(this.callTag);
    this.callAttempt = growI32(this.callAttempt);
    this.callIssuedAt = growF64(this.callIssuedAt);
    this.callStartedAt = growF64(this.callStartedAt);
    this.callFirstByteAt = growF64(this.callFirstByteAt);
  }
}
