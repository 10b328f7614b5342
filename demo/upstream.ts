/**
 * The demo's upstream: a real HTTP server on loopback with a capacity it never tells anyone.
 *
 * It serves `capacity` requests at a time, each taking `serviceMs` (with a little seeded jitter);
 * requests beyond that wait their turn in a FIFO, so latency rises once in-flight passes the
 * capacity, the way a thread pool or a GPU batch does. Past `capacity + maxWaiting` it answers 503
 * with Retry-After at once. `setPhase` changes service time and capacity live (the latency cliff).
 *
 * Listens on 127.0.0.1 only, on an ephemeral port (0); `close()` ends every socket and timer.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface UpstreamPhase {
  /** Requests served at once at full speed: the secret. */
  capacity: number;
  /** Time one request takes once it is being served, in ms. */
  serviceMs: number;
}

export interface UpstreamOptions extends UpstreamPhase {
  /** Requests that may wait for a slot before the server answers 503. Default 200 (ours: deep enough that resilix, not the server, decides). */
  maxWaiting?: number;
  /** Relative jitter on service time, uniform in [-jitter, +jitter]. Default 0.1 (ours: p99 differs from p50). */
  jitter?: number;
  /** Seed for the jitter, so two runs see the same service times. Default 1. */
  seed?: number;
}

export interface UpstreamStats {
  /** Requests being served or waiting now. */
  readonly inflight: number;
  /** Requests being served now (never above capacity). */
  readonly serving: number;
  /** The most requests in flight at once since the last `takePeak()`. */
  readonly peakInflight: number;
  readonly served: number;
  /** Requests answered 503 because the server's own wait list was full. */
  readonly refused: number;
  /** Requests whose client hung up before the answer. */
  readonly abandoned: number;
}

export interface DemoUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly phase: UpstreamPhase;
  setPhase(phase: UpstreamPhase): void;
  stats(): UpstreamStats;
  /** Returns the peak in-flight since the last call and starts a new one from the current value. */
  takePeak(): number;
  close(): Promise<void>;
}

/** mulberry32: a tiny seeded PRNG (public domain), enough for jitter (and e2e:real's arrivals). */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Waiting {
  res: ServerResponse;
  gone: boolean;
}

export async function startUpstream(options: UpstreamOptions): Promise<DemoUpstream> {
  let phase: UpstreamPhase = { capacity: options.capacity, serviceMs: options.serviceMs };
  const maxWaiting = options.maxWaiting ?? 200;
  const jitter = options.jitter ?? 0.1;
  const random = seeded(options.seed ?? 1);
  const waiting: Waiting[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const sockets = new Set<Socket>();
  let serving = 0;
  let peak = 0;
  let served = 0;
  let refused = 0;
  let abandoned = 0;

  const inflight = (): number => serving + waiting.length;

  function serve(job: Waiting): void {
    serving++;
    const ms = phase.serviceMs * (1 + jitter * (2 * random() - 1));
    const timer = setTimeout(() => {
      timers.delete(timer);
      serving--;
      if (!job.gone) {
        served++;
        job.res.writeHead(200, { 'content-type': 'text/plain' });
        job.res.end('ok');
      }
      next();
    }, ms);
    timers.add(timer);
  }

  function next(): void {
    while (serving < phase.capacity && waiting.length > 0) {
      const job = waiting.shift()!;
      if (!job.gone) serve(job);
    }
  }

  function handle(_req: IncomingMessage, res: ServerResponse): void {
    if (waiting.length >= maxWaiting && serving >= phase.capacity) {
      refused++;
      res.writeHead(503, { 'retry-after': '1', 'content-type': 'text/plain' });
      res.end('busy');
      return;
    }
    const job: Waiting = { res, gone: false };
    res.on('close', () => {
      if (res.writableFinished) return;
      // The client hung up: a real server notices only when it tries to answer; we let the work
      // finish (it holds its slot), but nobody hears the answer.
      job.gone = true;
      abandoned++;
    });
    waiting.push(job);
    peak = Math.max(peak, inflight());
    next();
  }

  const server: Server = createServer(handle);
  server.keepAliveTimeout = 1_000;
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get phase() {
      return phase;
    },
    setPhase(next_: UpstreamPhase) {
      phase = { capacity: next_.capacity, serviceMs: next_.serviceMs };
      next();
    },
    stats() {
      return { inflight: inflight(), serving, peakInflight: peak, served, refused, abandoned };
    },
    takePeak() {
      const value = peak;
      peak = inflight();
      return value;
    },
    close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      waiting.length = 0;
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
