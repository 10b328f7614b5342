import { describe, expect, it } from 'vitest';
import { isLimitExceededError } from '../../../src/errors/limit-exceeded-error';
import type { Permit } from '../../../src/core/ports';
import type { LimitChange } from '../../../src/limiter/controller';
import { limiterWithController, limiterWithTuning } from '../../../src/internal';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import { type Limiter, limiter } from '../../../src/limiter/limiter';
import { pipeline } from '../../../src/pipeline/pipeline';
import { timeout } from '../../../src/timeout/timeout';
import { FakeClock, deferred, flush } from '../../helpers/fake-clock';
import { StandInController } from './support/stand-in-controller';

/** Starts `n` calls that hold their slot until the test releases them. */
function hold(l: Limiter, n: number) {
  const started: number[] = [];
  const releases: Array<() => void> = [];
  const outcomes: Array<Promise<unknown>> = [];
  for (let i = 0; i < n; i++) {
    const gate = deferred<string>();
    releases.push(() => gate.resolve(`call ${i}`));
    outcomes.push(
      l
        .execute(() => {
          started.push(i);
          return gate.promise;
        })
        .catch((error: unknown) => error),
    );
  }
  return { started, releases, outcomes };
}

describe('limiter() options', () => {
  it('defaults to vegas in a slow start from one call within 1..200 (adr/0045), queueing (2, 3), lifo order', () => {
    const s = limiter().snapshot();
    expect(s).toMatchObject({
      kind: 'limiter',
      algorithm: 'vegas',
      limit: 1,
      minLimit: 1,
      maxLimit: 200,
      slowStart: true,
      queueing: { initialFactor: 2, maxFactor: 3 },
      queueOrder: 'lifo',
      inflight: 0,
      queued: 0,
      shed: 0,
    });
  });

  it('keeps the gradual zone one limit wide when only initialFactor is raised', () => {
    expect(limiter({ queueing: { initialFactor: 4 } }).snapshot().queueing).toEqual({ initialFactor: 4, maxFactor: 5 });
    expect(limiter({ queueing: { initialFactor: 1.5 } }).snapshot().queueing).toEqual({
      initialFactor: 1.5,
      maxFactor: 3,
    });
  });

  it('turns queueing off with false and back to the defaults with true', () => {
    expect(limiter({ queueing: false }).snapshot().queueing).toBe(false);
    expect(limiter({ queueing: true }).snapshot().queueing).toEqual({ initialFactor: 2, maxFactor: 3 });
  });

  it.each([
    [
      { queueing: 3 },
      TypeError,
      'resilix: limiter option "queueing" must be false or an object { initialFactor, maxFactor }; received number',
    ],
    [
      { queueing: { initialFactor: 0.5 } },
      RangeError,
      'resilix: limiter option "queueing.initialFactor" must be a number in [1, Infinity); received 0.5',
    ],
    [
      { queueing: { maxFactor: Infinity } },
      RangeError,
      'resilix: limiter option "queueing.maxFactor" must be a number in [1, Infinity); received Infinity',
    ],
    [
      { queueing: { initialFactor: 3, maxFactor: 2 } },
      RangeError,
      'resilix: limiter option "queueing.initialFactor" (3) must not exceed "queueing.maxFactor" (2)',
    ],
    [
      { queueOrder: 'random' },
      RangeError,
      'resilix: limiter option "queueOrder" must be one of "fifo", "lifo"; received "random"',
    ],
    [{ random: 0.5 }, TypeError, 'resilix: limiter option "random" must be a function; received 0.5'],
    [{ classify: 'ok' }, TypeError, 'resilix: limiter option "classify" must be a function; received "ok"'],
    [
      { algorithm: 'pid' },
      RangeError,
      'resilix: limiter option "algorithm" must be one of "vegas", "gradient2", "aimd", "fixed"; received "pid"',
    ],
    [
      { clock: {} },
      TypeError,
      'resilix: limiter option "clock" must be an object with a now() function; received object',
    ],
  ])('refuses %j at construction, naming the option, the range and the value', (options, type, message) => {
    expect(() => limiter(options as never)).toThrow(type);
    expect(() => limiter(options as never)).toThrow(message);
  });

  it('refuses options that are not an object', () => {
    expect(() => limiter(7 as never)).toThrow('resilix: limiter options must be an object; received 7');
  });

  it('keeps queueOrder read-only: the order is an option, not a property to reassign later', () => {
    const l = limiter({ queueOrder: 'fifo' });
    expect(() => {
      (l as { queueOrder: string }).queueOrder = 'lifo';
    }).toThrow(TypeError);
    expect(l.queueOrder).toBe('fifo');
    expect(l.snapshot().queueOrder).toBe('fifo');
  });
});

describe('limiter() as a policy', () => {
  it('runs calls through execute and counts them in flight while they run', async () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 2, minLimit: 1, clock: new FakeClock() });
    const calls = hold(l, 3);
    await flush();
    expect(calls.started).toEqual([0, 1]);
    expect([l.inflight, l.queued]).toEqual([2, 1]);
    calls.releases[0]!();
    await flush(10);
    expect(calls.started).toEqual([0, 1, 2]);
    for (const release of calls.releases) release();
    expect(await Promise.all(calls.outcomes)).toEqual(['call 0', 'call 1', 'call 2']);
    expect([l.inflight, l.queued]).toEqual([0, 0]);
  });

  it('sheds with LimitExceededError when queueing is off and the limit is reached', async () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 1, minLimit: 1, queueing: false, clock: new FakeClock() });
    const calls = hold(l, 2);
    await flush();
    expect(isLimitExceededError(await calls.outcomes[1])).toBe(true);
    expect(l.snapshot().shed).toBe(1);
  });

  it('composes in a pipeline, where the timeout policy gets only the time queueing left', async () => {
    const clock = new FakeClock();
    const l = limiter({ algorithm: 'fixed', initialLimit: 1, minLimit: 1, clock });
    const p = pipeline(l, timeout({ timeoutMs: 100, clock }));
    const first = deferred<string>();
    const running = p.execute(() => first.promise);
    let startedAt = NaN;
    const queued = p.execute(() => {
      startedAt = clock.now();
      return new Promise(() => {});
    });
    const failure = queued.catch((e: unknown) => [e, clock.now()]);
    clock.advance(70);
    first.resolve('x');
    await running;
    await flush(10);
    clock.advance(30);
    const [error, at] = (await failure) as [Error, number];
    expect(startedAt).toBe(70);
    expect(at).toBe(100);
    expect(error.message).toBe('resilix: the call timed out after 100 ms');
  });

  it('hands out permits on the low-level path and takes them back on settle', () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 1, minLimit: 1, clock: new FakeClock() });
    const permit = l.tryAcquire();
    expect(permit?.inflight).toBe(1);
    expect(l.tryAcquire()).toBeUndefined();
    permit!.settle({ verdict: 'ok', latencyMs: 5 });
    expect(l.inflight).toBe(0);
  });

  it('teaches the control loop nothing from rejected or cancelled settles, but frees their slots', () => {
    const clock = new FakeClock();
    const ignored = limiter({ clock, minSamples: 5, minWindowMs: 100 });
    const learning = limiter({ clock, minSamples: 5, minWindowMs: 100 });
    for (let i = 0; i < 50; i++) {
      clock.advance(10);
      ignored.tryAcquire()!.settle({ verdict: i % 2 === 0 ? 'rejected' : 'cancelled', latencyMs: 50 });
      learning.tryAcquire()!.settle({ verdict: 'ok', latencyMs: 50 });
    }
    expect(ignored.inflight).toBe(0);
    expect(ignored.snapshot().latencyMs).toBeUndefined();
    expect(learning.snapshot().latencyMs).toBe(50);
  });
});

describe('live resize of a shared limiter', () => {
  it('starts waiting calls at once when the limit rises, for every caller sharing it', async () => {
    // a coin that never sheds below 3 x limit: all 30 calls run or wait
    const l = limiter({
      algorithm: 'fixed',
      initialLimit: 10,
      minLimit: 1,
      clock: new FakeClock(),
      random: () => 0.999,
    });
    const a = hold(l, 15);
    const b = hold(l, 15);
    await flush();
    expect(a.started.length + b.started.length).toBe(10);
    expect(l.resize(25)).toBe(25);
    await flush(10);
    expect(a.started.length + b.started.length).toBe(25);
    expect([l.inflight, l.queued]).toEqual([25, 5]);
  });

  it('starts nobody new after the limit falls until in-flight is under it', async () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 10, minLimit: 1, clock: new FakeClock() });
    const calls = hold(l, 14);
    await flush();
    l.resize(6);
    for (const release of calls.releases.slice(0, 4)) release();
    await flush(10);
    expect(calls.started).toHaveLength(10);
    calls.releases[4]!();
    await flush(10);
    expect(calls.started).toHaveLength(11);
    expect(l.inflight).toBe(6);
  });

  it('sets whole calls: a fraction is rounded down, and fixed then stays there window after window', () => {
    const clock = new FakeClock();
    const l = limiter({ algorithm: 'fixed', initialLimit: 4, clock });
    expect(l.resize(3.5)).toBe(3);
    const changes: LimitChange[] = [];
    l.onLimitChange((change) => changes.push(change));
    for (let i = 0; i < 3_000; i++) {
      const permit = l.tryAcquire()!;
      clock.advance(10);
      permit.settle({ verdict: 'ok', latencyMs: 10 });
    }
    expect(changes).toEqual([]);
    expect(l.limit).toBe(3);
  });

  it('clamps to the guardrails and announces the change to limit listeners', () => {
    const clock = new FakeClock();
    const l = limiter({ algorithm: 'fixed', initialLimit: 10, minLimit: 2, maxLimit: 50, clock });
    const changes: LimitChange[] = [];
    const subscription = l.onLimitChange((change) => changes.push(change));
    clock.advance(5);
    expect(l.resize(500)).toBe(50);
    expect(l.resize(1)).toBe(2);
    subscription.dispose();
    l.resize(7);
    expect(changes).toEqual([
      { from: 10, to: 50, direction: 'grow', reason: 'manual', at: 5 },
      { from: 50, to: 2, direction: 'shrink', reason: 'manual', at: 5 },
    ]);
    expect(l.limit).toBe(7);
  });

  it('publishes a lowered limit only once it applies: the listener reads it and tryAcquire obeys it (issue 15, defect 6)', () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 10, minLimit: 1, maxLimit: 10, clock: new FakeClock() });
    const held = Array.from({ length: 9 }, () => l.tryAcquire()!);
    const seen: Array<{ limit: number; admitted: boolean }> = [];
    l.onLimitChange(() => {
      const extra = l.tryAcquire();
      seen.push({ limit: l.limit, admitted: extra !== undefined });
      extra?.settle({ verdict: 'ok', latencyMs: 1 });
    });
    expect(l.resize(5)).toBe(5);
    expect(seen).toEqual([{ limit: 5, admitted: false }]);
    expect(l.inflight).toBe(9);
    for (const permit of held) permit.settle({ verdict: 'ok', latencyMs: 1 });
  });

  it('publishes a raised limit only once it applies: tryAcquire inside the listener may use the new room', () => {
    const l = limiter({ algorithm: 'fixed', initialLimit: 2, minLimit: 1, maxLimit: 10, clock: new FakeClock() });
    const held = [l.tryAcquire()!, l.tryAcquire()!];
    const extra: Array<ReturnType<Limiter['tryAcquire']>> = [];
    l.onLimitChange(() => {
      extra.push(l.tryAcquire());
    });
    l.resize(3);
    expect(extra).toHaveLength(1);
    expect(extra[0]).toBeDefined();
    expect(l.inflight).toBe(3);
    for (const permit of [...held, extra[0]!]) permit.settle({ verdict: 'ok', latencyMs: 1 });
    expect(l.inflight).toBe(0);
  });

  it('publishes a limit the control loop moved at a window close only once it applies', () => {
    const clock = new FakeClock();
    // aimd without a slow start (startupGain 0): its first window of overloads backs off.
    const l = limiterWithTuning(
      { algorithm: 'aimd', initialLimit: 10, maxLimit: 10, updateIntervalMs: 0, minWindowMs: 0, minSamples: 1, clock },
      { ...DEFAULT_TUNING, startupGain: 0 },
    );
    const held = Array.from({ length: 10 }, () => l.tryAcquire()!);
    const seen: Array<{ change: string; limit: number; admitted: boolean }> = [];
    const extra: Permit[] = [];
    l.onLimitChange((change) => {
      const permit = l.tryAcquire();
      if (permit !== undefined) extra.push(permit);
      seen.push({ change: `${change.from} -> ${change.to}`, limit: l.limit, admitted: permit !== undefined });
    });
    clock.advance(10);
    // aimd backs off 10 -> 9 on the overload; 9 calls are still in flight
    held[0]!.settle({ verdict: 'overload', latencyMs: 10 });
    expect(seen).toEqual([{ change: '10 -> 9', limit: 9, admitted: false }]);
    expect(l.inflight).toBe(9);
    for (const permit of [...held.slice(1), ...extra]) permit.settle({ verdict: 'ok', latencyMs: 1 });
  });

  it.each([
    [0, RangeError, 'received 0'],
    [Number.NaN, RangeError, 'received NaN'],
    [Infinity, RangeError, 'received Infinity'],
    ['12', TypeError, 'received string'],
  ])('refuses resize(%s)', (value, type, detail) => {
    const l = limiter({ clock: new FakeClock() });
    expect(() => l.resize(value as number)).toThrow(type);
    expect(() => l.resize(value as number)).toThrow(
      `resilix: limiter.resize(limit) needs a number in [1, Infinity); ${detail}`,
    );
  });

  it('admits waiters inside the settle whose window raised the limit', async () => {
    const controller = new StandInController(2);
    const l = limiterWithController({ clock: new FakeClock() }, controller);
    const calls = hold(l, 5);
    await flush();
    controller.limitAfterNextObserve = 4;
    calls.releases[0]!();
    await flush(10);
    // one finished, the limit went 2 -> 4: all three waiters start, newest first (lifo)
    expect(calls.started).toEqual([0, 1, 4, 3, 2]);
    expect(l.inflight).toBe(4);
  });
});

describe('limiter snapshot', () => {
  it('merges the control loop and admission', async () => {
    const clock = new FakeClock();
    const l = limiter({ algorithm: 'fixed', initialLimit: 1, minLimit: 1, clock, queueOrder: 'fifo' });
    hold(l, 2);
    await flush();
    expect(l.snapshot()).toEqual({
      kind: 'limiter',
      algorithm: 'fixed',
      limit: 1,
      estimate: 1,
      minLimit: 1,
      maxLimit: 200,
      baselineMs: undefined,
      latencyMs: undefined,
      slowStart: false,
      windows: 0,
      lastChange: undefined,
      baselineRaises: 0,
      inflight: 1,
      queued: 1,
      queueing: { initialFactor: 2, maxFactor: 3 },
      queueOrder: 'fifo',
      admitted: 1,
      shed: 0,
      timedOutInQueue: 0,
      abortedInQueue: 0,
      abandonedInQueue: 0,
      drainPerSecond: undefined,
    });
  });
});
