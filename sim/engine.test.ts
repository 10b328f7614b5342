import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Recorder } from './engine/metrics';
import { formatSeed, parseSeed, Random } from './engine/random';
import { jainIndex, quantileOf, SampleBuffer } from './engine/samples';
import { describeFailure, type ScenarioResult } from './engine/scenario';
import { Simulator, type EventHandler } from './engine/simulator';
import { Clients } from './models/clients';
import { constant, exponential, lognormal } from './models/distributions';
import { FixedLimit } from './models/fixed-limit';
import { ClosedLoopUsers, PoissonArrivals } from './models/load';
import { Upstream, type Answer, type UpstreamSink } from './models/upstream';
import { World } from './models/world';
import { convergence } from './scenarios/convergence';
import { lowTraffic } from './scenarios/low-traffic';

const here = dirname(fileURLToPath(import.meta.url));

class Log implements EventHandler {
  readonly fired: string[] = [];
  constructor(
    private readonly simulator: Simulator,
    private readonly name: string,
  ) {}
  fire(arg: number): void {
    this.fired.push(`${this.name}${arg}@${this.simulator.now()}`);
  }
}

describe('the event queue', () => {
  it('fires events in time order, and simultaneous events in the order they were scheduled', () => {
    const sim = new Simulator();
    const log = new Log(sim, 'e');
    sim.schedule(30, log, 1);
    sim.schedule(10, log, 2);
    sim.schedule(30, log, 3);
    sim.schedule(20, log, 4);
    sim.schedule(10, log, 5);
    sim.run(100);
    expect(log.fired).toEqual(['e2@10', 'e5@10', 'e4@20', 'e1@30', 'e3@30']);
    expect(sim.now()).toBe(100);
  });

  it('keeps order across growth of the heap (10 000 events in reverse order)', () => {
    const sim = new Simulator();
    const seen: number[] = [];
    const handler: EventHandler = { fire: (arg) => seen.push(arg) };
    for (let i = 10_000; i > 0; i--) sim.schedule(i, handler, i);
    sim.run(Infinity);
    expect(seen).toEqual(Array.from({ length: 10_000 }, (_, i) => i + 1));
  });

  it('fires a library deadline timer at now + delay and never fires a cleared one', () => {
    const sim = new Simulator();
    const fired: number[] = [];
    sim.run(5);
    sim.setTimer(() => fired.push(sim.now()), 10);
    const cleared = sim.setTimer(() => fired.push(-1), 8);
    sim.clearTimer(cleared);
    sim.run(100);
    expect(fired).toEqual([15]);
    expect(sim.inertFired).toBe(1);
  });

  it('lets promise reactions run at the instant that caused them, before the clock moves (runAsync)', async () => {
    const sim = new Simulator();
    const seen: number[] = [];
    sim.at(10, () => {
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => seen.push(sim.now()));
    });
    sim.at(20, () => seen.push(sim.now()));
    await sim.runAsync(100);
    expect(seen).toEqual([10, 20]);
  });
});

describe('seeded randomness', () => {
  it('repeats its sequence for the same seed and differs for another', () => {
    const a = new Random(42);
    const b = new Random(42);
    const c = new Random(43);
    const draw = (r: Random) => Array.from({ length: 5 }, () => r.nextUint32());
    const first = draw(a);
    expect(draw(b)).toEqual(first);
    expect(draw(c)).not.toEqual(first);
  });

  it('draws exponential and lognormal deviates with the stated mean and median (1e5 draws, within 1%)', () => {
    const random = new Random(7);
    const e = exponential(20);
    const l = lognormal(350, 0.5);
    const es: number[] = [];
    const ls: number[] = [];
    for (let i = 0; i < 100_000; i++) {
      es.push(e.sample(random));
      ls.push(l.sample(random));
    }
    expect(es.reduce((s, x) => s + x, 0) / es.length).toBeCloseTo(20, 0);
    expect(Math.abs(quantileOf(ls, 0.5) / 350 - 1)).toBeLessThan(0.01);
    expect(Math.abs(ls.reduce((s, x) => s + x, 0) / ls.length / l.meanMs - 1)).toBeLessThan(0.01);
  });

  it('prints a seed as 0x-hex and parses it back', () => {
    expect(formatSeed(0x5eed0002)).toBe('0x5eed0002');
    expect(parseSeed('0x5eed0002')).toBe(0x5eed0002);
    expect(parseSeed('17')).toBe(17);
    expect(() => parseSeed('seed')).toThrow(/uint32/);
  });
});

describe('statistics', () => {
  it('takes exact nearest-rank quantiles', () => {
    const b = new SampleBuffer(2);
    for (const v of [5, 1, 4, 2, 3]) b.push(v);
    expect(b.quantile(0.5)).toBe(3);
    expect(b.quantile(0.99)).toBe(5);
    expect(b.quantile(0.2)).toBe(1);
  });

  it('selects the same quantile as a full sort would, on 2 000 random buffers with and without ties', () => {
    const random = new Random(5);
    for (let trial = 0; trial < 2000; trial++) {
      const n = 1 + (random.nextUint32() % 300);
      const buffer = new SampleBuffer(4);
      const values: number[] = [];
      for (let i = 0; i < n; i++) {
        const v = trial % 3 === 0 ? random.nextUint32() % 5 : random.next();
        buffer.push(v);
        values.push(v);
      }
      for (const q of [0.01, 0.5, 0.9, 0.99, 1]) expect(buffer.quantile(q)).toBe(quantileOf(values, q));
    }
  });

  it("computes Jain's index: 1 for equal shares, 1/n for one taker", () => {
    expect(jainIndex([3, 3, 3, 3])).toBe(1);
    expect(jainIndex([8, 0, 0, 0])).toBe(0.25);
  });
});

describe('the upstream model', () => {
  class Sink implements UpstreamSink {
    answers: [number, Answer, number][] = [];
    firstBytes: [number, number][] = [];
    constructor(private readonly sim: Simulator) {}
    firstByte(id: number): void {
      this.firstBytes.push([id, this.sim.now()]);
    }
    done(id: number, answer: Answer): void {
      this.answers.push([id, answer, this.sim.now()]);
    }
  }

  it('serves C calls at once and queues the rest FIFO, so latency grows with in-flight', () => {
    const sim = new Simulator();
    const sink = new Sink(sim);
    const upstream = new Upstream(sim, new Random(1), sink, { servers: 2, service: constant(10) });
    for (let id = 0; id < 5; id++) upstream.request(id);
    expect(upstream.inflight).toBe(5);
    expect(upstream.waiting).toBe(3);
    sim.run(100);
    expect(sink.answers.map(([id, , at]) => `${id}@${at}`)).toEqual(['0@10', '1@10', '2@20', '3@20', '4@30']);
  });

  it('answers 429 at once past its queue bound, which moves with its capacity', () => {
    const sim = new Simulator();
    const sink = new Sink(sim);
    const upstream = new Upstream(sim, new Random(1), sink, {
      servers: 2,
      service: constant(10),
      overloadQueuePerServer: 1,
    });
    for (let id = 0; id < 5; id++) upstream.request(id);
    sim.run(100);
    expect(sink.answers.filter(([, a]) => a === 1).map(([id, , at]) => `${id}@${at}`)).toEqual(['4@1']);
  });

  it('streams: first byte after the service time, the end after the body, holding its server throughout', () => {
    const sim = new Simulator();
    const sink = new Sink(sim);
    const upstream = new Upstream(sim, new Random(1), sink, {
      servers: 1,
      service: constant(280),
      streamBody: constant(45_000),
    });
    upstream.request(0);
    upstream.request(1);
    sim.run(100_000);
    expect(sink.firstBytes).toEqual([
      [0, 280],
      [1, 45_560],
    ]);
    expect(sink.answers.map(([id, , at]) => [id, at])).toEqual([
      [0, 45_280],
      [1, 90_560],
    ]);
  });

  it("obeys Little's law: mean in-flight = arrival rate x mean latency (M/M/4 at 50% load, within 2%)", async () => {
    const world = new World({
      seed: 3,
      phases: [{ name: 'run', startMs: 0, endMs: 600_000 }],
      sampleEveryMs: 10,
      upstream: { servers: 4, service: exponential(20) },
      clients: () => [{}],
    });
    new PoissonArrivals(
      world.simulator,
      world.loadRandom(0),
      world.clients,
      0,
      [{ atMs: 0, perSecond: 100 }],
      world.endMs,
    ).start();
    await world.run();
    const p = world.recorder.summarize()[0]!;
    expect(Math.abs(p.arrivals / 60_000 - 1)).toBeLessThan(0.01);
    const meanLatencyMs = (world.recorder as unknown as { latencies: SampleBuffer[] }).latencies[0]!.mean();
    expect(Math.abs(p.upstreamInflightMean / ((100 * meanLatencyMs) / 1000) - 1)).toBeLessThan(0.02);
  });
});

describe('load models', () => {
  it('changes the Poisson rate exactly at a step (1 000/s then 10/s, counts within 2%)', async () => {
    const world = new World({
      seed: 9,
      phases: [
        { name: 'fast', startMs: 0, endMs: 10_000 },
        { name: 'slow', startMs: 10_000, endMs: 110_000 },
      ],
      sampleEveryMs: 100,
      upstream: { servers: 1000, service: constant(1) },
      clients: () => [{ limiter: new FixedLimit(1000) }],
    });
    const rate = [
      { atMs: 0, perSecond: 1000 },
      { atMs: 10_000, perSecond: 10 },
    ];
    new PoissonArrivals(world.simulator, world.loadRandom(0), world.clients, 0, rate, world.endMs).start();
    await world.run();
    const [fast, slow] = world.recorder.summarize();
    expect(Math.abs(fast!.arrivals / 10_000 - 1)).toBeLessThan(0.02);
    expect(Math.abs(slow!.arrivals / 1_000 - 1)).toBeLessThan(0.07);
  });

  it('runs closed-loop users: each waits for its answer, thinks, and calls again', async () => {
    const world = new World({
      seed: 4,
      phases: [{ name: 'run', startMs: 0, endMs: 11_000 }],
      sampleEveryMs: 100,
      upstream: { servers: 100, service: constant(10) },
      clients: () => [{}],
    });
    new ClosedLoopUsers(world.simulator, world.loadRandom(0), world.clients, 0, 5, constant(100), world.endMs).start();
    await world.run();
    // 5 users, one call per 110 ms cycle (100 ms thinking + 10 ms served), first call at 100 ms.
    expect(world.recorder.summarize()[0]!.arrivals).toBe(5 * 100);
    expect(world.recorder.summarize()[0]!.upstreamInflightMax).toBe(5);
  });

  it('retries a shed call with capped exponential backoff until its attempts run out', () => {
    const sim = new Simulator();
    const recorder = new Recorder([{ name: 'all', startMs: 0, endMs: 10_000 }], 1, 100);
    const clients = new Clients(sim, new Random(1), recorder, [
      { limiter: new FixedLimit(1), retry: { maxAttempts: 3, baseMs: 100, capMs: 1_000 } },
    ]);
    clients.connect(new Upstream(sim, new Random(2), clients, { servers: 1, service: constant(5_000) }));
    clients.issue(0, 0);
    clients.issue(0, 1);
    sim.run(10_000);
    const p = recorder.summarize()[0]!;
    // The second call is shed three times (attempts 1, 2, 3), then given up; the first is served.
    expect([p.arrivals, p.retries, p.shed, p.served]).toEqual([4, 2, 3, 1]);
  });

  it('sheds at the limit on the synchronous path and counts what it shed', () => {
    const sim = new Simulator();
    const recorder = new Recorder([{ name: 'all', startMs: 0, endMs: 1000 }], 1, 100);
    const clients = new Clients(sim, new Random(1), recorder, [{ limiter: new FixedLimit(2) }]);
    clients.connect(new Upstream(sim, new Random(2), clients, { servers: 10, service: constant(50) }));
    for (let i = 0; i < 5; i++) clients.issue(0, 0);
    expect(clients.inflight).toBe(2);
    expect(clients.shedByClient[0]).toBe(3);
    sim.run(1000);
    expect(clients.inflight).toBe(0);
  });
});

describe('determinism', () => {
  const hash = (result: ScenarioResult): string => createHash('sha256').update(JSON.stringify(result)).digest('hex');

  it('reproduces a synchronous-path scenario byte for byte from its seed, and a new seed changes it', async () => {
    const scenario = convergence(10, 'vegas');
    const first = hash(await scenario.run(scenario.seed));
    const second = hash(await scenario.run(scenario.seed));
    const other = hash(await scenario.run(scenario.seed + 1));
    expect(second).toBe(first);
    expect(other).not.toBe(first);
  });

  it('reproduces an execute()-path scenario (promises, queue, mark) byte for byte', async () => {
    const scenario = lowTraffic();
    expect(hash(await scenario.run(scenario.seed))).toBe(hash(await scenario.run(scenario.seed)));
  });

  it('never reads the wall clock, arms a real timer or draws unseeded randomness in the engine, models or scenarios', () => {
    const forbidden = /Date\.now|performance\.now|new Date\(|setTimeout|setInterval|Math\.random/;
    let checked = 0;
    for (const dir of ['engine', 'models', 'scenarios']) {
      for (const file of readdirSync(join(here, dir)).filter((f) => f.endsWith('.ts'))) {
        checked++;
        const code = readFileSync(join(here, dir, file), 'utf8')
          .split('\n')
          .filter((line) => !/^\s*(\*|\/\/|\/\*)/.test(line))
          .join('\n');
        expect(forbidden.test(code), `${dir}/${file}`).toBe(false);
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });

  it('prints the scenario name and the seed that reproduces a failure', () => {
    const failing = {
      name: 'example',
      seed: formatSeed(0xabc),
      criteria: [{ name: 'limit vs capacity', measured: 31, criterion: 'in [8, 12]', unit: '', pass: false }],
    } as unknown as ScenarioResult;
    const text = describeFailure(failing);
    expect(text).toContain('scenario example FAILED with seed 0x00000abc');
    expect(text).toContain('limit vs capacity: measured 31, criterion in [8, 12]');
    expect(text).toContain('npx tsx sim/run.ts example --seed 0x00000abc');
  });
});
