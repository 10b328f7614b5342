import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { breaker } from '../../src/breaker/index';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { ExecuteOptions } from '../../src/core/call';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { retry } from '../../src/retry/retry';
import { timeout } from '../../src/timeout/timeout';
import { deferred, FakeClock, flush } from '../helpers/fake-clock';

/**
 * Issue 15, defects 1 and 9: every exception between admission and settle gives back what the
 * call took (limiter permit, bulkhead slot, breaker probe, timer, listener), and execute never
 * throws synchronously.
 */

/** A fake clock whose next setTimer or clearTimer call throws, once, when a test asks. */
class FaultyTimerClock extends FakeClock {
  failNextSetTimer = false;
  failNextClearTimer = false;
  override setTimer(callback: () => void, delayMs: number): number {
    if (this.failNextSetTimer) {
      this.failNextSetTimer = false;
      throw new Error('setTimer broke');
    }
    return super.setTimer(callback, delayMs);
  }
  override clearTimer(handle: unknown): void {
    if (this.failNextClearTimer) {
      this.failNextClearTimer = false;
      throw new Error('clearTimer broke');
    }
    super.clearTimer(handle);
  }
}

/** A real AbortSignal one of whose accessors throws, once. */
function signalThatThrows(on: 'aborted' | 'reason' | 'addEventListener' | 'removeEventListener', after = 0) {
  const controller = new AbortController();
  const signal = controller.signal;
  let calls = 0;
  const fail = (): boolean => calls++ === after;
  if (on === 'aborted' || on === 'reason') {
    const getter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, on)!;
    Object.defineProperty(signal, on, {
      get() {
        if (fail()) throw new Error(`${on} broke`);
        return getter.get!.call(signal);
      },
    });
  } else {
    const original = signal[on].bind(signal) as (...args: unknown[]) => void;
    Object.defineProperty(signal, on, {
      value: (...args: unknown[]) => {
        if (fail()) throw new Error(`${on} broke`);
        original(...args);
      },
    });
  }
  return { controller, signal };
}

function fixedLimiter(clock: FakeClock, limit: number) {
  return limiter({ algorithm: 'fixed', initialLimit: limit, minLimit: 1, maxLimit: limit, clock });
}

let reported: unknown[];
beforeEach(() => {
  reported = [];
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void reported.push(args[1]));
});
afterEach(() => {
  vi.restoreAllMocks();
});

describe('a bad signal is refused up front (defect 1)', () => {
  it('rejects an AbortController passed as the signal, keeps no permit, and arms no timer', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(l, bh, timeout({ timeoutMs: 30, clock }));
    const call = p.execute(() => 1, { signal: new AbortController() as never });
    await expect(call).rejects.toThrow(
      new TypeError(
        'resilix: execute option "signal" must be an AbortSignal, undefined or null; received an AbortController',
      ),
    );
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it.each([
    ['a string', 'abort', 'received "abort"'],
    ['a number', 5, 'received 5'],
    ['a plain object', {}, 'received an Object'],
    ['an object with aborted but no listener methods', { aborted: false }, 'received an Object'],
  ])('rejects %s as the signal with a TypeError', async (_what, value, detail) => {
    const l = fixedLimiter(new FakeClock(), 2);
    await expect(l.execute(() => 1, { signal: value as never })).rejects.toThrow(
      `resilix: execute option "signal" must be an AbortSignal, undefined or null; ${detail}`,
    );
    expect(l.inflight).toBe(0);
  });

  it('does not let three queued calls with a bad signal deadlock a limit-3 limiter', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 3);
    const gates = [deferred<string>(), deferred<string>(), deferred<string>()];
    const running = gates.map((g) => l.execute(() => g.promise));
    const bad = [1, 2, 3].map(() => l.execute(() => 'ghost', { signal: new AbortController() as never }));
    for (const call of bad) await expect(call).rejects.toThrow(TypeError);
    for (const [i, g] of gates.entries()) g.resolve(`call ${i}`);
    await Promise.all(running);
    expect([l.inflight, l.queued]).toEqual([0, 0]);
    const next = await Promise.all([1, 2, 3, 4].map((i) => l.execute(() => i)));
    expect(next).toEqual([1, 2, 3, 4]);
  });
});

describe('signal: null is no signal, as fetch takes it (defect 9)', () => {
  it('runs the call through every policy and a pipeline', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock });
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const t = timeout({ timeoutMs: 100, clock });
    const r = retry({ clock, budget: false });
    for (const target of [b, l, bh, t, r, pipeline(b, l, bh, t), pipeline(r, b, l, bh, t)]) {
      await expect(target.execute(() => 'ran', { signal: null } as never)).resolves.toBe('ran');
    }
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('lets retry retry a failed attempt', async () => {
    const clock = new FakeClock();
    const r = retry({ clock, budget: false, random: () => 0 });
    let n = 0;
    const call = r.execute(() => (n++ === 0 ? Promise.reject(new Error('blip')) : 'recovered'), {
      signal: null,
    } as never);
    await expect(call).resolves.toBe('recovered');
    expect(r.snapshot()).toMatchObject({ retries: 1, abortedInBackoff: 0, active: 0 });
  });

  it('hands fn a signal that aborts at the deadline', async () => {
    const clock = new FakeClock();
    const p = pipeline(fixedLimiter(clock, 2), timeout({ timeoutMs: 100, clock }));
    let seen: AbortSignal | undefined;
    const call = p.execute(
      (ctx) => {
        seen = ctx.signal;
        return new Promise(() => {});
      },
      { signal: null } as never,
    );
    clock.advance(100);
    await expect(call).rejects.toThrow('timed out after 100 ms');
    expect(seen!.aborted).toBe(true);
  });
});

describe.each([
  ['a pipeline', false],
  ['a pipeline with retry (which reads the options before any attempt)', true],
])('execute never throws synchronously (defect 9): %s', (_name, withRetry) => {
  const clock = new FakeClock();
  const inner = [fixedLimiter(clock, 2), timeout({ timeoutMs: 100, clock })] as const;
  const p = withRetry ? pipeline(retry({ clock, budget: false }), ...inner) : pipeline(...inner);
  const throwingOptions = Object.defineProperty({}, 'signal', {
    get() {
      throw new Error('options getter broke');
    },
  });
  it.each([
    ['fn is not a function', 'nope', undefined, TypeError],
    ['options is a number', () => 1, 5, TypeError],
    ['options is a string', () => 1, 'fast', TypeError],
    ['signal is a controller', () => 1, { signal: new AbortController() }, TypeError],
    ['timeoutMs is negative', () => 1, { timeoutMs: -1 }, RangeError],
    ['timeoutMs is a string', () => 1, { timeoutMs: '5' }, RangeError],
    ['attempt is 0', () => 1, { attempt: 0 }, RangeError],
    ['attempt is a fraction', () => 1, { attempt: 1.5 }, RangeError],
    ['attempt is a string', () => 1, { attempt: '2' }, TypeError],
    ['classify is not a function', () => 1, { classify: 'default' }, TypeError],
    ['an options getter throws', () => 1, throwingOptions, Error],
  ])('returns a rejected promise when %s, and never runs fn', async (_what, fn, options, type) => {
    let runs = 0;
    const counted =
      typeof fn === 'function'
        ? () => {
            runs++;
            return fn();
          }
        : fn;
    let call: Promise<unknown> | undefined;
    expect(() => {
      call = p.execute(counted as never, options as ExecuteOptions);
    }).not.toThrow();
    await expect(call).rejects.toBeInstanceOf(type);
    expect(runs).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('names the option, the allowed values and the value received (as docs/options.md shows)', async () => {
    await expect(p.execute(() => 1, { timeoutMs: 0 })).rejects.toThrow(
      'resilix: execute option "timeoutMs" must be a number in (0, Infinity]; received 0',
    );
    await expect(p.execute(() => 1, { attempt: 0 })).rejects.toThrow(
      'resilix: execute option "attempt" must be an integer in [1, Infinity); received 0',
    );
    await expect(p.execute(() => 1, { classify: 'x' as never })).rejects.toThrow(
      'resilix: execute option "classify" must be a function; received "x"',
    );
    await expect(p.execute(() => 1, 7 as never)).rejects.toThrow(
      'resilix: execute options must be an object; received 7',
    );
  });

  it('rejects with the reason when the signal is already aborted, whatever the reason is', async () => {
    const controller = new AbortController();
    controller.abort('gone');
    await expect(p.execute(() => 1, { signal: controller.signal })).rejects.toBe('gone');
  });
});

describe('a clock whose timer functions throw (defect 1)', () => {
  it('gives back the permit, the bulkhead slot and the breaker probe when setTimer throws for a running call', async () => {
    const clock = new FaultyTimerClock();
    const b = breaker({ clock, minSamples: 1, consecutiveFailures: 1, openMs: 10, halfOpenProbes: 1 });
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(b, l, bh, timeout({ timeoutMs: 50, clock }));
    await expect(p.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    clock.advance(10);
    expect(b.state).toBe('open');
    clock.failNextSetTimer = true;
    let ran = false;
    await expect(
      p.execute(() => {
        ran = true;
      }),
    ).rejects.toThrow('setTimer broke');
    expect(ran).toBe(false);
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
    // the probe slot came back: the next call is the probe, and closes the breaker
    await expect(p.execute(() => 'probe')).resolves.toBe('probe');
    expect(b.state).toBe('closed');
  });

  it('takes a queued call out of the queue when setTimer throws while it joins', async () => {
    const clock = new FaultyTimerClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 50, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    clock.failNextSetTimer = true;
    await expect(p.execute(() => 'queued')).rejects.toThrow('setTimer broke');
    expect(l.queued).toBe(0);
    gate.resolve('first');
    await expect(running).resolves.toBe('first');
    await flush();
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
    await expect(p.execute(() => 'next')).resolves.toBe('next');
  });

  it('fails a waiter whose heartbeat cannot be re-armed, instead of leaving it without a deadline', async () => {
    const clock = new FaultyTimerClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 5_000, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    const queued = p.execute(() => 'queued');
    await flush();
    expect(l.queued).toBe(1);
    clock.failNextSetTimer = true;
    clock.advance(1_000); // the first heartbeat fires and cannot arm the next
    await expect(queued).rejects.toThrow('setTimer broke');
    expect(l.queued).toBe(0);
    gate.resolve('first');
    await running;
    clock.advance(10_000);
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('delivers the result and frees every slot when clearTimer throws at settle', async () => {
    const clock = new FaultyTimerClock();
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(l, bh, timeout({ timeoutMs: 50, clock }));
    clock.failNextClearTimer = true;
    await expect(p.execute(async () => 'value')).resolves.toBe('value');
    expect([l.inflight, bh.active]).toEqual([0, 0]);
    expect(reported).toHaveLength(1);
    // the timer it could not clear fires later and changes nothing
    expect(() => clock.advance(50)).not.toThrow();
    expect(l.snapshot().timedOutInQueue).toBe(0);
    await expect(p.execute(() => 'next')).resolves.toBe('next');
  });

  it('frees a waiter that leaves when clearTimer throws as it is served', async () => {
    const clock = new FaultyTimerClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 5_000, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    const queued = p.execute(() => 'queued');
    await flush();
    clock.failNextClearTimer = true;
    gate.resolve('first');
    await expect(running).resolves.toBe('first');
    await expect(queued).resolves.toBe('queued');
    clock.advance(10_000);
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
  });
});

describe("a caller's signal whose accessors throw (defect 1)", () => {
  it.each([
    ['aborted', 0],
    ['addEventListener', 0],
  ] as const)('rejects with the error and holds nothing when %s throws as the call starts', async (on, after) => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(l, bh, timeout({ timeoutMs: 50, clock }));
    const { signal } = signalThatThrows(on, after);
    await expect(p.execute(() => 'x', { signal })).rejects.toThrow(`${on} broke`);
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it.each([0, 1])('rejects, never throws, through retry when aborted throws on read %i', async (after) => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const p = pipeline(retry({ clock, budget: false }), l, timeout({ timeoutMs: 50, clock }));
    const { signal } = signalThatThrows('aborted', after);
    let call: Promise<unknown> | undefined;
    expect(() => {
      call = p.execute(() => 'x', { signal });
    }).not.toThrow();
    await expect(call).rejects.toThrow('aborted broke');
    expect([l.inflight, clock.pendingTimers]).toEqual([0, 0]);
  });

  it('does not crash at the deadline when removeEventListener throws, and frees the slots when the work ends', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(l, bh, timeout({ timeoutMs: 30, clock }));
    const { signal } = signalThatThrows('removeEventListener');
    const work = deferred<string>();
    const call = p.execute(() => work.promise, { signal });
    expect(() => clock.advance(30)).not.toThrow();
    await expect(call).rejects.toThrow('timed out after 30 ms');
    work.resolve('late');
    await flush();
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('frees the slots when removeEventListener throws at settle', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const p = pipeline(l, timeout({ timeoutMs: 30, clock }));
    const { signal } = signalThatThrows('removeEventListener');
    await expect(p.execute(async () => 'value', { signal })).resolves.toBe('value');
    expect([l.inflight, clock.pendingTimers]).toEqual([0, 0]);
  });

  it('cancels the call when reading the reason throws inside the abort, without throwing from the listener', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const p = pipeline(l, timeout({ timeoutMs: 30, clock }));
    const { controller, signal } = signalThatThrows('reason');
    const work = deferred<string>();
    const call = p.execute(() => work.promise, { signal });
    controller.abort('left');
    await expect(call).rejects.toThrow('reason broke');
    work.resolve('late');
    await flush();
    expect([l.inflight, clock.pendingTimers]).toEqual([0, 0]);
  });

  it('takes a queued call out of the queue when reading the reason throws inside the abort', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 5_000, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    const { controller, signal } = signalThatThrows('reason');
    const queued = p.execute(() => 'queued', { signal });
    await flush();
    expect(l.queued).toBe(1);
    // (An abort listener's throw never leaves abort(): Node reports it as uncaught, which fails the run.)
    controller.abort('left');
    await expect(queued).rejects.toThrow('reason broke');
    expect(l.queued).toBe(0);
    gate.resolve('first');
    await running;
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('takes a queued call out of the queue when its signal cannot take a listener', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 5_000, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    // the runner checks the signal and hands it to the queue; the queue's addEventListener is its 1st
    const { signal } = signalThatThrows('addEventListener');
    await expect(p.execute(() => 'queued', { signal })).rejects.toThrow('addEventListener broke');
    expect(l.queued).toBe(0);
    gate.resolve('first');
    await running;
    await flush();
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('gives back the slot of a woken waiter when reading aborted throws before it starts', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 1);
    const p = pipeline(l, timeout({ timeoutMs: 5_000, clock }));
    const gate = deferred<string>();
    const running = p.execute(() => gate.promise);
    // reads 1-2: the runner's shape check and its aborted check; read 3: the queue's; read 4: the
    // check after the wake-up
    const { signal } = signalThatThrows('aborted', 3);
    let ran = false;
    const queued = p.execute(
      () => {
        ran = true;
      },
      { signal },
    );
    await flush();
    expect(l.queued).toBe(1);
    gate.resolve('first');
    await running;
    await expect(queued).rejects.toThrow('aborted broke');
    expect(ran).toBe(false);
    expect([l.inflight, l.queued, clock.pendingTimers]).toEqual([0, 0, 0]);
  });
});

describe('fn returns a value whose then getter throws (defect 1)', () => {
  it('rejects with the error and frees every slot', async () => {
    const clock = new FakeClock();
    const l = fixedLimiter(clock, 2);
    const bh = bulkhead({ maxConcurrent: 2, clock });
    const p = pipeline(l, bh, timeout({ timeoutMs: 50, clock }));
    const weird = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('then getter broke');
      },
    });
    await expect(p.execute(() => weird)).rejects.toThrow('then getter broke');
    await expect(l.execute(() => weird)).rejects.toThrow('then getter broke');
    expect([l.inflight, bh.active, clock.pendingTimers]).toEqual([0, 0, 0]);
  });

  it('rejects through a lone bulkhead (its plain path) and gives its slot back', async () => {
    const bh = bulkhead({ maxConcurrent: 1 });
    const weird = Object.defineProperty({}, 'then', {
      get() {
        throw new Error('then getter broke');
      },
    });
    let call: Promise<unknown> | undefined;
    expect(() => {
      call = bh.execute(() => weird as never);
    }).not.toThrow();
    await expect(call).rejects.toThrow('then getter broke');
    expect(bh.active).toBe(0);
    await expect(bh.execute(() => 'next')).resolves.toBe('next');
  });
});

describe('the default classifier reads a result whose getters throw', () => {
  it('counts the call as a failure, keeps its result, and frees every slot', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock, minSamples: 1, consecutiveFailures: 1 });
    const l = fixedLimiter(clock, 2);
    const p = pipeline(b, l, timeout({ timeoutMs: 50, clock }));
    const result = Object.defineProperty({}, 'status', {
      get() {
        throw new Error('status getter broke');
      },
    });
    await expect(p.execute(async () => result)).resolves.toBe(result);
    expect(l.inflight).toBe(0);
    expect(b.snapshot().failures).toBe(1);
  });

  it('through retry too: the result is kept and the call is not left active', async () => {
    const clock = new FakeClock();
    const r = retry({ clock, budget: false, maxAttempts: 1 });
    const result = Object.defineProperty({}, 'status', {
      get() {
        throw new Error('status getter broke');
      },
    });
    await expect(r.execute(async () => result)).resolves.toBe(result);
    await expect(pipeline(r, timeout({ timeoutMs: 50, clock })).execute(async () => result)).resolves.toBe(result);
    expect(r.snapshot()).toMatchObject({ active: 0, gaveUp: { maxAttempts: 2 } });
  });
});
