import { describe, expect, it } from 'vitest';
import { breaker, CircuitBreaker } from '../../src/breaker/breaker';
import type { BreakerOptions } from '../../src/breaker/options';
import type { PersistedBreakerState } from '../../src/breaker/persistence';
import { FakeClock } from '../helpers/fake-clock';
import { rig, type Rig } from './support';

/** A wall clock (epoch ms) the test moves by hand; the monotonic clocks are separate. */
function wall(startMs = 1_700_000_000_000): { now: () => number; advance: (ms: number) => void } {
  let t = startMs;
  return { now: () => t, advance: (ms) => (t += ms) };
}

/** A breaker "in another process": its own monotonic clock, far from the first one's readings. */
function restoreElsewhere(
  saved: unknown,
  options: Omit<BreakerOptions, 'clock'> = {},
): { b: CircuitBreaker; clock: FakeClock } {
  const clock = new FakeClock(9_000_000);
  return { clock, b: breaker({ ...options, clock, restore: saved as PersistedBreakerState }) };
}

function persistRig(options: Omit<BreakerOptions, 'clock'> = {}): Rig & { wall: ReturnType<typeof wall> } {
  const w = wall();
  return { ...rig({ ...options, wallClock: w.now }), wall: w };
}

describe('toJSON()', () => {
  it('is plain JSON: stringifying the breaker and parsing it gives the same object', () => {
    const r = persistRig();
    r.calls(3, 'failure', { latencyMs: 12_000, gapMs: 7_000 });
    r.calls(10, 'ok', { gapMs: 1_000 });
    const saved = r.b.toJSON();
    expect(JSON.parse(JSON.stringify(r.b))).toEqual(saved);
    expect(saved).toEqual({
      version: 1,
      state: 'closed',
      savedAt: 1_700_000_000_000,
      openForMs: 0,
      backoffLevel: 0,
      opens: 0,
      consecutiveFailures: 0,
      windowAgeMs: 31_000,
      // 6 s buckets: the failures at 0, 7 and 14 s, then the successes at 21 .. 30 s
      buckets: [
        [31_000, 1, 1, 1],
        [25_000, 1, 1, 1],
        [19_000, 1, 1, 1],
        [13_000, 3, 0, 0],
        [7_000, 6, 0, 0],
        [1_000, 1, 0, 0],
      ],
    });
  });

  it('reads Date.now() for savedAt when no wallClock is given', () => {
    const before = Date.now();
    const saved = breaker({ clock: new FakeClock() }).toJSON();
    expect(saved.savedAt).toBeGreaterThanOrEqual(before);
    expect(saved.savedAt).toBeLessThanOrEqual(Date.now());
  });
});

describe('restoring a saved breaker', () => {
  it('carries a closed breaker to another clock with its window, failure run and window age intact', () => {
    const r = persistRig({ consecutiveFailures: Infinity });
    r.calls(5, 'ok', { gapMs: 3_000 });
    r.calls(4, 'failure', { latencyMs: 20_000, gapMs: 3_000 });
    const { b } = restoreElsewhere(JSON.parse(JSON.stringify(r.b)), { wallClock: r.wall.now });
    expect(b.snapshot()).toEqual(r.b.snapshot());
    expect(b.snapshot()).toMatchObject({ samples: 9, failures: 4, slowCalls: 4, consecutiveFailures: 4 });
  });

  it('ages the window by the time between save and restore: 19 failures restored 61 s later are forgotten', () => {
    const r = persistRig({ consecutiveFailures: Infinity });
    r.calls(19, 'failure');
    const saved = r.b.toJSON();
    r.wall.advance(61_000);
    const { b } = restoreElsewhere(saved, { wallClock: r.wall.now, consecutiveFailures: Infinity });
    expect(b.snapshot().samples).toBe(0);
    const t = b.admit();
    b.settle(t, { verdict: 'failure', latencyMs: 5 });
    expect(b.state).toBe('closed');
  });

  it('still remembers them when restored 30 s later: the 20th failure opens it', () => {
    const r = persistRig({ consecutiveFailures: Infinity });
    r.calls(19, 'failure');
    const saved = r.b.toJSON();
    r.wall.advance(30_000);
    const { b } = restoreElsewhere(saved, { wallClock: r.wall.now, consecutiveFailures: Infinity });
    const t = b.admit();
    b.settle(t, { verdict: 'failure', latencyMs: 5 });
    expect(b.state).toBe('open');
  });

  it('keeps an open breaker open only for what is left of its open period', () => {
    const r = persistRig();
    r.calls(10, 'failure');
    r.clock.advance(10_000);
    const saved = r.b.toJSON();
    expect(saved).toMatchObject({ state: 'open', openForMs: 20_000, opens: 1 });
    r.wall.advance(5_000);
    const { b, clock } = restoreElsewhere(saved, { wallClock: r.wall.now });
    expect(b.snapshot()).toMatchObject({ state: 'open', halfOpenInMs: 15_000, opens: 1 });
    clock.advance(14_999);
    expect(b.admit()).toBe(-1);
    clock.advance(1);
    expect(b.admit()).toBeGreaterThanOrEqual(0);
    expect(b.state).toBe('half-open');
  });

  it('lets the first call through as a probe when the open period ended between save and restore', () => {
    const r = persistRig();
    r.calls(10, 'failure');
    const saved = r.b.toJSON();
    r.wall.advance(45_000);
    const { b } = restoreElsewhere(saved, { wallClock: r.wall.now });
    expect(b.snapshot().halfOpenInMs).toBe(0);
    expect(b.admit()).toBeGreaterThanOrEqual(0);
    expect(b.state).toBe('half-open');
  });

  it('treats a wall clock that went backwards (skew between machines) as no time passed', () => {
    const r = persistRig();
    r.calls(10, 'failure');
    const saved = r.b.toJSON();
    r.wall.advance(-120_000);
    const { b } = restoreElsewhere(saved, { wallClock: r.wall.now });
    expect(b.snapshot().halfOpenInMs).toBe(30_000);
  });

  it('resumes a half-open breaker as open and due: its probes died with the old process', () => {
    const r = persistRig();
    r.calls(10, 'failure');
    r.clock.advance(30_000);
    r.b.admit();
    r.b.admit();
    r.b.admit();
    const saved = r.b.toJSON();
    expect(saved.state).toBe('half-open');
    const { b } = restoreElsewhere(saved, { wallClock: r.wall.now });
    expect(b.snapshot()).toMatchObject({ state: 'open', halfOpenInMs: 0 });
    expect(b.admit()).toBeGreaterThanOrEqual(0);
    expect(b.snapshot()).toMatchObject({ state: 'half-open', probesInFlight: 1 });
  });

  it('keeps an isolated breaker isolated until reset(), whatever isolate handles come and go', () => {
    const r = persistRig();
    r.b.isolate();
    const { b } = restoreElsewhere(r.b.toJSON(), { wallClock: r.wall.now });
    expect(b.state).toBe('isolated');
    b.isolate().dispose();
    expect(b.state).toBe('isolated');
    b.reset();
    expect(b.state).toBe('closed');
  });

  it('keeps the backoff level', () => {
    const options = { openMs: 1_000, backoffMultiplier: 2, halfOpenProbes: 1 };
    const r = persistRig(options);
    r.calls(10, 'failure');
    r.clock.advance(1_000);
    r.call('failure'); // re-opened for 2 s
    const { b, clock } = restoreElsewhere(r.b.toJSON(), { ...options, wallClock: r.wall.now });
    expect(b.snapshot().halfOpenInMs).toBe(2_000);
    clock.advance(2_000);
    b.settle(b.admit(), { verdict: 'failure', latencyMs: 5 });
    expect(b.snapshot().halfOpenInMs).toBe(4_000);
  });

  it('caps a saved open period at the new maxOpenMs', () => {
    const r = persistRig({ openMs: 60_000 });
    r.calls(10, 'failure');
    const { b } = restoreElsewhere(r.b.toJSON(), { wallClock: r.wall.now, openMs: 5_000, maxOpenMs: 10_000 });
    expect(b.snapshot().halfOpenInMs).toBe(10_000);
  });

  it('fits the saved counts into a window of another shape', () => {
    const r = persistRig({ consecutiveFailures: Infinity });
    r.calls(6, 'failure', { gapMs: 5_000 });
    const { b } = restoreElsewhere(r.b.toJSON(), { wallClock: r.wall.now, buckets: 60, consecutiveFailures: Infinity });
    expect(b.snapshot()).toMatchObject({ samples: 6, failures: 6 });
  });

  it('restores what it saved when bucket starts round past the clock (a fractional bucketMs)', () => {
    let t = 298.59265495442156;
    const options = { windowMs: 1_000, buckets: 3, clock: { now: () => t }, wallClock: () => 1e6 };
    const b = breaker(options);
    t = 3298.592654954421; // the start plus 9 buckets of 333.33 ms, rounded
    b.settle(b.admit(), { verdict: 'ok', latencyMs: 1 });
    const saved = JSON.parse(JSON.stringify(b)) as PersistedBreakerState;
    expect(saved.buckets.every(([ageMs]) => ageMs >= 0)).toBe(true);
    expect(breaker({ ...options, restore: saved }).snapshot().samples).toBe(1);
  });

  it('is the same through CircuitBreaker.restore(saved, options)', () => {
    const r = persistRig();
    r.calls(10, 'failure');
    const saved = r.b.toJSON();
    const clock = new FakeClock(5);
    const viaStatic = CircuitBreaker.restore(saved, { clock, wallClock: r.wall.now });
    const viaOption = breaker({ clock, wallClock: r.wall.now, restore: saved });
    expect(viaStatic.snapshot()).toEqual(viaOption.snapshot());
    expect(viaStatic.state).toBe('open');
  });
});

describe('a malformed saved state', () => {
  const good = (): Record<string, unknown> => ({
    version: 1,
    state: 'open',
    savedAt: 1_700_000_000_000,
    openForMs: 1_000,
    backoffLevel: 0,
    opens: 1,
    consecutiveFailures: 10,
    windowAgeMs: 0,
    buckets: [[0, 10, 10, 0]],
  });

  it.each<[string, (s: Record<string, unknown>) => unknown, ErrorConstructor, RegExp]>([
    ['a string', () => '{"version":1}', TypeError, /"restore" must be an object/],
    ['null', () => null, TypeError, /"restore" must be an object/],
    ['another version', (s) => ({ ...s, version: 2 }), RangeError, /"restore.version" must be 1/],
    [
      'an unknown state',
      (s) => ({ ...s, state: 'ajar' }),
      RangeError,
      /"restore.state" must be one of "closed", "open", "half-open", "isolated"; received "ajar"/,
    ],
    ['a missing state', (s) => ({ ...s, state: undefined }), TypeError, /"restore.state"/],
    ['a negative open period', (s) => ({ ...s, openForMs: -1 }), RangeError, /"restore.openForMs"/],
    ['a NaN savedAt', (s) => ({ ...s, savedAt: NaN }), RangeError, /"restore.savedAt"/],
    ['a fractional backoff level', (s) => ({ ...s, backoffLevel: 1.5 }), RangeError, /"restore.backoffLevel"/],
    ['buckets that are not an array', (s) => ({ ...s, buckets: {} }), TypeError, /"restore.buckets" must be an array/],
    [
      'a bucket of the wrong shape',
      (s) => ({ ...s, buckets: [[0, 1, 1]] }),
      TypeError,
      /"restore.buckets\[0\]" must be \[ageMs, calls, failures, slowCalls\]/,
    ],
    [
      'more failures than calls',
      (s) => ({ ...s, buckets: [[0, 1, 2, 0]] }),
      RangeError,
      /"restore.buckets\[0\]\[2\]" must be an integer in \[0, 1\]; received 2/,
    ],
    ['a string count', (s) => ({ ...s, buckets: [[0, '3', 0, 0]] }), TypeError, /"restore.buckets\[0\]\[1\]"/],
    [
      'a count past a 32-bit cell (it would wrap there and never age out)',
      (s) => ({ ...s, buckets: [[0, 2 ** 32, 2 ** 32, 0]] }),
      RangeError,
      /"restore.buckets\[0\]\[1\]" must be an integer in \[0, 4294967295\]; received 4294967296/,
    ],
    [
      'counts that sum past one cell',
      (s) => ({
        ...s,
        buckets: [
          [0, 2 ** 31, 0, 0],
          [1, 2 ** 31, 0, 0],
        ],
      }),
      RangeError,
      /"restore.buckets" must hold at most 4294967295 calls in all; received 4294967296/,
    ],
  ])('is refused when it is %s', (_name, mutate, type, message) => {
    const attempt = (): unknown =>
      breaker({ clock: new FakeClock(), restore: mutate(good()) as PersistedBreakerState });
    expect(attempt).toThrow(type);
    expect(attempt).toThrow(message);
  });

  it('is accepted when well formed', () => {
    expect(breaker({ clock: new FakeClock(), restore: good() as unknown as PersistedBreakerState }).state).toBe('open');
  });
});
