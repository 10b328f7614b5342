import { describe, expect, it } from 'vitest';
import { confidentlyReaches } from '../../src/breaker/low-traffic';
import { rig, transitions } from './support';

describe('the breaker opens on its failure rate', () => {
  it('reads the rate only once minSamples calls are in the window', () => {
    const { b, calls, call, changes } = rig({ consecutiveFailures: Infinity });
    calls(10, 'failure');
    calls(9, 'ok');
    expect(b.state).toBe('closed'); // 10 of 19 failed, but 19 < minSamples 20
    call('ok');
    expect(b.state).toBe('open'); // 10 of 20 = 0.5 reaches the threshold
    expect(transitions(changes)).toEqual(['closed>open:failure-rate']);
    expect(b.snapshot()).toMatchObject({ samples: 20, failures: 10, failureRate: 0.5, opens: 1 });
  });

  it('stays closed just below the threshold', () => {
    const { b, calls } = rig({ consecutiveFailures: Infinity });
    calls(9, 'failure');
    calls(11, 'ok');
    expect(b.state).toBe('closed');
    expect(b.snapshot().failureRate).toBe(0.45);
  });

  it('honours a custom threshold and minSamples', () => {
    const { b, calls, call } = rig({ failureRateThreshold: 0.2, minSamples: 10, consecutiveFailures: Infinity });
    calls(8, 'ok');
    call('failure');
    expect(b.state).toBe('closed'); // 9 samples
    call('failure');
    expect(b.state).toBe('open'); // 2 of 10 = 0.2
  });
});

describe('the breaker opens on its slow-call rate', () => {
  it('opens when half the window is slower than slowCallDurationMs, at a 0 % error rate', () => {
    const { b, calls, call, changes } = rig();
    calls(10, 'ok', { latencyMs: 350 });
    calls(9, 'ok', { latencyMs: 10_400 });
    expect(b.state).toBe('closed');
    call('ok', 10_400);
    expect(b.state).toBe('open');
    expect(transitions(changes)).toEqual(['closed>open:slow-call-rate']);
    expect(b.snapshot()).toMatchObject({ samples: 20, failures: 0, slowCalls: 10, slowCallRate: 0.5 });
  });

  it('does not count a call that took exactly slowCallDurationMs as slow', () => {
    const { b, calls } = rig();
    calls(20, 'ok', { latencyMs: 10_000 });
    expect(b.state).toBe('closed');
    expect(b.snapshot().slowCalls).toBe(0);
  });

  it('counts slow `answered` calls as slow: the upstream took that long to say no', () => {
    const { b, calls } = rig();
    calls(20, 'answered', { latencyMs: 12_000 });
    expect(b.state).toBe('open');
  });

  it('turns slow-call detection off with slowCallDurationMs: Infinity', () => {
    const { b, calls } = rig({ slowCallDurationMs: Infinity });
    calls(50, 'ok', { latencyMs: 1e9 });
    expect(b.state).toBe('closed');
    expect(b.snapshot().slowCalls).toBe(0);
  });

  it('reports the failure rate when a window of slow failures trips both', () => {
    const { b, calls, changes } = rig({ consecutiveFailures: Infinity });
    calls(20, 'failure', { latencyMs: 20_000 });
    expect(transitions(changes)).toEqual(['closed>open:failure-rate']);
    expect(b.snapshot()).toMatchObject({ failures: 20, slowCalls: 20 });
  });
});

describe('the consecutive-failure backstop', () => {
  it('opens on 10 failures in a row even when the window rate is far below the threshold', () => {
    const { b, calls, call, changes } = rig();
    calls(100, 'ok');
    calls(9, 'failure');
    expect(b.state).toBe('closed');
    call('failure');
    expect(b.state).toBe('open');
    expect(transitions(changes)).toEqual(['closed>open:consecutive-failures']);
    expect(b.snapshot()).toMatchObject({ samples: 110, failures: 10, consecutiveFailures: 10 });
  });

  it('starts the run over on a success', () => {
    const { b, calls, call } = rig();
    calls(9, 'failure');
    call('ok');
    calls(9, 'failure');
    expect(b.state).toBe('closed');
    expect(b.snapshot().consecutiveFailures).toBe(9);
  });

  it('opens at one call a minute, where no rate can ever be read', () => {
    const { b, calls, call, changes } = rig();
    calls(9, 'failure', { gapMs: 60_000 });
    expect(b.state).toBe('closed');
    expect(b.snapshot().samples).toBe(0); // the window forgot every one of them
    call('failure');
    expect(b.state).toBe('open');
    expect(changes[0]).toEqual({ from: 'closed', to: 'open', reason: 'consecutive-failures', at: 540_000 });
  });

  it('opens on one failure after nine and an hour of quiet: the backstop is not windowed (by design, docs/breaker.md)', () => {
    const { b, calls, call, clock, changes } = rig();
    calls(9, 'failure');
    clock.advance(3_600_000);
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 0, consecutiveFailures: 9 });
    call('failure');
    expect(transitions(changes)).toEqual(['closed>open:consecutive-failures']);
  });

  it('keeps the run of failures across overload, rejected and cancelled calls; a success ends it', () => {
    const { b, calls, call } = rig();
    calls(5, 'failure');
    call('overload');
    call('rejected');
    call('cancelled');
    expect(b.snapshot().consecutiveFailures).toBe(5);
    call('answered');
    expect(b.snapshot().consecutiveFailures).toBe(0);
  });

  it('is turned off with consecutiveFailures: Infinity', () => {
    const { b, calls } = rig({ consecutiveFailures: Infinity, minSamples: 1000, lowTrafficMinSamples: 1000 });
    calls(500, 'failure');
    expect(b.state).toBe('closed');
  });
});

describe('regressions from other breakers', () => {
  it('does not open on the first failure of a new breaker (opossum opens on it: its default volumeThreshold is 0)', () => {
    const { b, call } = rig();
    call('failure');
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 1, failures: 1, failureRate: 1, requiredSamples: 20 });
  });

  it('does not open on a first failure after a long quiet spell either', () => {
    const { b, call, clock } = rig();
    clock.advance(10 * 60_000);
    call('failure');
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 1, requiredSamples: 5 });
  });

  it('forgets failures older than its window: 20 failures, 60 s idle, then 1 failure stays closed (cockatiel rotates one bucket per call and opens)', () => {
    const { b, calls, call, clock } = rig({ minSamples: 21, consecutiveFailures: Infinity });
    calls(20, 'failure');
    expect(b.state).toBe('closed'); // 20 < minSamples 21
    clock.advance(60_000);
    call('failure');
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 1, failures: 1 });
  });

  it('still counts them inside the window: the same failure 30 s later opens it', () => {
    const { b, calls, call, clock } = rig({ minSamples: 21, consecutiveFailures: Infinity });
    calls(20, 'failure');
    clock.advance(30_000);
    call('failure');
    expect(b.state).toBe('open');
    expect(b.snapshot()).toMatchObject({ samples: 21, failures: 21 });
  });
});

describe('the low-traffic floor (ADR-0021)', () => {
  it('asks a window younger than windowMs for minSamples calls', () => {
    const { b, calls } = rig({ consecutiveFailures: Infinity });
    calls(2, 'ok', { gapMs: 7_500 });
    calls(4, 'failure', { gapMs: 7_500 }); // at 15 s .. 37.5 s: 4 of 6 failed, 8 calls a minute
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 6, requiredSamples: 20 });
  });

  it('reads a rate from 5 calls once the window has collected for its full length, if they all failed (8 calls a minute)', () => {
    const { b, calls, call, clock, changes } = rig({ consecutiveFailures: Infinity });
    clock.advance(60_000);
    calls(4, 'failure', { gapMs: 7_500 });
    expect(b.state).toBe('closed'); // 4 calls < 5
    expect(b.snapshot().requiredSamples).toBe(5);
    call('failure');
    expect(b.state).toBe('open');
    expect(changes[0]).toEqual({ from: 'closed', to: 'open', reason: 'failure-rate', at: 90_000 });
  });

  it('does not open on a bare majority of a few calls: 3 failures of 5 is not convincingly over 0.5', () => {
    const { b, calls, clock } = rig({ consecutiveFailures: Infinity });
    clock.advance(60_000);
    calls(2, 'ok', { gapMs: 7_500 });
    calls(3, 'failure', { gapMs: 7_500 });
    expect(b.snapshot()).toMatchObject({ state: 'closed', samples: 5, failures: 3, requiredSamples: 5 });
  });

  it('opens on 6 failures of 7 at 8 calls a minute', () => {
    const { b, calls, call, clock } = rig({ consecutiveFailures: Infinity });
    clock.advance(60_000);
    call('ok');
    clock.advance(7_500);
    calls(5, 'failure', { gapMs: 7_500 });
    expect(b.state).toBe('closed'); // 5 of 6: the bar at 6 calls is 6
    call('failure');
    expect(b.state).toBe('open'); // 6 of 7 reaches the bar at 7 calls
  });

  it('applies the floor to the slow-call rate too', () => {
    const { b, calls, clock } = rig();
    clock.advance(60_000);
    calls(5, 'ok', { latencyMs: 11_000, gapMs: 7_500 });
    expect(b.state).toBe('open');
    expect(b.snapshot().lastReason).toBe('slow-call-rate');
  });

  it('never reads a rate from fewer than lowTrafficMinSamples calls', () => {
    const { b, calls, clock } = rig();
    clock.advance(60_000);
    calls(4, 'failure', { gapMs: 7_500 });
    expect(b.state).toBe('closed');
  });

  it('is off when lowTrafficMinSamples equals minSamples', () => {
    const { b, calls, clock } = rig({ lowTrafficMinSamples: 20, consecutiveFailures: Infinity });
    clock.advance(60_000);
    calls(7, 'failure', { gapMs: 7_500 });
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 7, requiredSamples: 20 });
  });

  it('starts over when the breaker closes: a fresh window needs minSamples for another windowMs', () => {
    const { b, calls, call, clock } = rig({ halfOpenProbes: 1 });
    calls(10, 'failure');
    clock.advance(30_000);
    call('ok'); // the probe closes it at t = 30 s
    expect(b.state).toBe('closed');
    clock.advance(10_000);
    calls(9, 'failure'); // 9 of 9 failed, but the window is 10 s old
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 9, requiredSamples: 20 });
    clock.advance(50_000); // now the window has collected for 60 s and still holds all 9
    call('ok');
    expect(b.state).toBe('open'); // 9 of 10 clears the low-traffic bar of 8
    expect(b.snapshot().lastReason).toBe('failure-rate');
  });
});

describe('the low-traffic confidence bar', () => {
  it.each<[number, number, number, boolean]>([
    [5, 5, 0.5, true],
    [4, 5, 0.5, false],
    [8, 10, 0.5, true],
    [7, 10, 0.5, false],
    [12, 16, 0.5, true],
    [11, 16, 0.5, false],
    [3, 5, 0.2, true],
    [2, 5, 0.2, false],
    [19, 19, 1, false],
  ])('%i of %i calls are convincingly at a threshold of %s: %s', (hits, n, threshold, expected) => {
    expect(confidentlyReaches(hits, n, threshold)).toBe(expected);
  });
});
