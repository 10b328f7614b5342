import { describe, expect, it } from 'vitest';
import { isBrokenCircuitError, type BrokenCircuitError } from '../../src/errors/index';
import type { Verdict } from '../../src/core/verdict';
import { deferred, flush } from '../helpers/fake-clock';
import { rig, transitions, type Rig } from './support';

/** Opens the breaker at the current time with its consecutive-failure backstop (10 failures). */
function trip(r: Rig): void {
  r.calls(10, 'failure');
  expect(r.b.state).toBe('open');
}

describe('an open breaker', () => {
  it('refuses calls without running them and says when it will let a probe through', async () => {
    const r = rig();
    trip(r);
    let ran = 0;
    const refused = (await r.b.execute(() => ran++).catch((e: unknown) => e)) as BrokenCircuitError;
    expect(isBrokenCircuitError(refused)).toBe(true);
    expect(refused.retryAfterMs).toBe(30_000);
    expect(refused.message).toBe(
      'resilix: the circuit breaker is open (consecutive-failures); half-open in 30000 ms; the call was not made',
    );
    r.clock.advance(12_345.5);
    const later = (await r.b.execute(() => ran++).catch((e: unknown) => e)) as BrokenCircuitError;
    expect(later.retryAfterMs).toBe(17_655);
    expect(ran).toBe(0);
    expect(r.b.snapshot()).toMatchObject({ state: 'open', rejected: 2, halfOpenInMs: 17_654.5 });
  });

  it('is still open 1 ms before openMs has passed', () => {
    const r = rig();
    trip(r);
    r.clock.advance(29_999);
    expect(r.b.admit()).toBe(-1);
    expect(r.b.state).toBe('open');
  });

  it('turns half-open on the first call after openMs and lets it through as a probe', () => {
    const r = rig();
    trip(r);
    r.clock.advance(30_000);
    expect(r.b.state).toBe('open'); // no timers: nothing happens until a call arrives
    expect(r.b.snapshot().halfOpenInMs).toBe(0);
    expect(r.b.admit()).toBeGreaterThanOrEqual(0);
    expect(r.b.state).toBe('half-open');
    expect(r.changes.at(-1)).toEqual({ from: 'open', to: 'half-open', reason: 'open-elapsed', at: 30_000 });
  });

  it('goes half-open on the next call when openMs is 0', () => {
    const r = rig({ openMs: 0 });
    trip(r);
    expect(r.b.admit()).toBeGreaterThanOrEqual(0);
    expect(r.b.state).toBe('half-open');
  });
});

describe('a half-open breaker', () => {
  function halfOpen(options: Parameters<typeof rig>[0] = {}): Rig & { probes: number[] } {
    const r = rig(options);
    trip(r);
    r.clock.advance(30_000);
    const probes: number[] = [];
    for (let i = 0; i < (options.halfOpenProbes ?? 3); i++) probes.push(r.b.admit());
    return { ...r, probes };
  }

  it('lets at most halfOpenProbes probes through and refuses the rest at once', () => {
    const r = halfOpen();
    expect(r.probes.every((t) => t >= 0)).toBe(true);
    expect(r.b.admit()).toBe(-1);
    const error = r.b.rejection() as BrokenCircuitError;
    expect(isBrokenCircuitError(error)).toBe(true);
    expect(error.retryAfterMs).toBeUndefined();
    expect(error.message).toMatch(/half-open and all 3 probe calls are taken/);
    expect(r.b.snapshot()).toMatchObject({ state: 'half-open', probesInFlight: 3, rejected: 1 });
  });

  it('honours a custom probe count', () => {
    const r = halfOpen({ halfOpenProbes: 1 });
    expect(r.b.admit()).toBe(-1);
    r.b.settle(r.probes[0]!, { verdict: 'ok', latencyMs: 20 });
    expect(r.b.state).toBe('closed');
  });

  it('stays half-open until the last probe succeeds, then closes with a fresh window', () => {
    const r = halfOpen();
    r.b.settle(r.probes[0]!, { verdict: 'ok', latencyMs: 20 });
    r.b.settle(r.probes[1]!, { verdict: 'answered', latencyMs: 20 });
    expect(r.b.state).toBe('half-open');
    expect(r.b.snapshot().probesInFlight).toBe(1);
    r.b.settle(r.probes[2]!, { verdict: 'ok', latencyMs: 20 });
    expect(r.b.state).toBe('closed');
    expect(r.changes.at(-1)).toEqual({ from: 'half-open', to: 'closed', reason: 'probes-succeeded', at: 30_000 });
    expect(r.b.snapshot()).toMatchObject({ samples: 0, failures: 0, consecutiveFailures: 0, requiredSamples: 20 });
  });

  it.each<[Verdict, string]>([
    ['failure', 'probe-failed'],
    ['timeout', 'probe-failed'],
  ])('re-opens at once for another openMs when a probe ends %s', (verdict, reason) => {
    const r = halfOpen();
    r.clock.advance(250);
    r.b.settle(r.probes[1]!, { verdict, latencyMs: 250 });
    expect(r.b.state).toBe('open');
    expect(r.changes.at(-1)).toEqual({ from: 'half-open', to: 'open', reason, at: 30_250 });
    expect(r.b.snapshot()).toMatchObject({ halfOpenInMs: 30_000, opens: 2 });
  });

  it('re-opens when a probe succeeds but slower than slowCallDurationMs', () => {
    const r = halfOpen();
    r.b.settle(r.probes[0]!, { verdict: 'ok', latencyMs: 10_001 });
    expect(transitions(r.changes).at(-1)).toBe('half-open>open:probe-slow');
  });

  it.each<Verdict>(['overload', 'rejected', 'cancelled'])(
    'frees the slot of a probe that ends %s, for another probe',
    (verdict) => {
      const r = halfOpen();
      r.b.settle(r.probes[0]!, { verdict, latencyMs: 5 });
      expect(r.b.state).toBe('half-open');
      expect(r.b.snapshot().probesInFlight).toBe(2);
      const another = r.b.admit();
      expect(another).toBeGreaterThanOrEqual(0);
      for (const ticket of [r.probes[1]!, r.probes[2]!, another]) r.b.settle(ticket, { verdict: 'ok', latencyMs: 5 });
      expect(r.b.state).toBe('closed');
    },
  );

  it('ignores the late success of a probe from an earlier half-open period', () => {
    const r = halfOpen();
    r.b.settle(r.probes[0]!, { verdict: 'failure', latencyMs: 5 });
    r.clock.advance(30_000);
    const fresh = r.b.admit();
    expect(r.b.state).toBe('half-open');
    r.b.settle(r.probes[1]!, { verdict: 'ok', latencyMs: 5 });
    r.b.settle(r.probes[2]!, { verdict: 'ok', latencyMs: 5 });
    expect(r.b.snapshot()).toMatchObject({ state: 'half-open', probesInFlight: 1 });
    expect(fresh).toBeGreaterThanOrEqual(0);
  });

  it('re-opens on the next call once every probe slot has been taken for longer than slowCallDurationMs', () => {
    const r = halfOpen();
    r.b.settle(r.probes[0]!, { verdict: 'ok', latencyMs: 5 });
    r.clock.advance(10_000);
    expect(r.b.admit()).toBe(-1);
    expect(r.b.state).toBe('half-open'); // the last probe is exactly slowCallDurationMs old: not yet slow
    r.clock.advance(1);
    expect(r.b.admit()).toBe(-1);
    expect(r.changes.at(-1)).toEqual({ from: 'half-open', to: 'open', reason: 'probe-slow', at: 40_001 });
    r.b.settle(r.probes[1]!, { verdict: 'ok', latencyMs: 10_001 }); // the hung probe finally ends: stale
    expect(r.b.snapshot()).toMatchObject({ state: 'open', halfOpenInMs: 30_000, opens: 2 });
  });

  it('waits for a hung probe for ever when slow-call detection is off (use a timeout)', () => {
    const r = halfOpen({ slowCallDurationMs: Infinity });
    r.clock.advance(3_600_000);
    expect(r.b.admit()).toBe(-1);
    expect(r.b.state).toBe('half-open');
  });
});

describe('calls that settle after the state moved on', () => {
  it('ignores a call admitted while closed that fails after the breaker opened', () => {
    const r = rig();
    const straggler = r.b.admit();
    trip(r);
    const before = r.b.snapshot();
    r.b.settle(straggler, { verdict: 'failure', latencyMs: 30_000 });
    expect(r.b.snapshot()).toEqual(before);
  });

  it('does not let a call from before the outage count as a probe or in the new window', () => {
    const r = rig({ halfOpenProbes: 1 });
    const straggler = r.b.admit();
    trip(r);
    r.clock.advance(30_000);
    const probe = r.b.admit();
    r.b.settle(straggler, { verdict: 'ok', latencyMs: 5 });
    expect(r.b.state).toBe('half-open');
    r.b.settle(probe, { verdict: 'ok', latencyMs: 5 });
    expect(r.b.state).toBe('closed');
    r.b.settle(straggler, { verdict: 'failure', latencyMs: 5 });
    expect(r.b.snapshot().samples).toBe(0);
  });
});

describe('backoff on repeated opens', () => {
  function openPeriods(options: Parameters<typeof rig>[0], cycles: number): number[] {
    const r = rig({ halfOpenProbes: 1, ...options });
    trip(r);
    const periods: number[] = [];
    for (let i = 0; i < cycles; i++) {
      const period = r.b.snapshot().halfOpenInMs!;
      periods.push(period);
      r.clock.advance(period);
      r.call('failure'); // the probe fails: open again
    }
    return periods;
  }

  it('keeps a constant open period by default', () => {
    expect(openPeriods({}, 4)).toEqual([30_000, 30_000, 30_000, 30_000]);
  });

  it('multiplies the open period on each re-open from half-open, up to maxOpenMs', () => {
    expect(openPeriods({ openMs: 1_000, backoffMultiplier: 2, maxOpenMs: 5_000 }, 6)).toEqual([
      1_000, 2_000, 4_000, 5_000, 5_000, 5_000,
    ]);
  });

  it('starts again from openMs after the breaker closes', () => {
    const r = rig({ halfOpenProbes: 1, openMs: 1_000, backoffMultiplier: 3 });
    trip(r);
    r.clock.advance(1_000);
    r.call('failure');
    expect(r.b.snapshot().halfOpenInMs).toBe(3_000);
    r.clock.advance(3_000);
    r.call('ok');
    expect(r.b.state).toBe('closed');
    trip(r);
    expect(r.b.snapshot().halfOpenInMs).toBe(1_000);
  });
});

describe('probes through execute', () => {
  it('runs the probe and refuses the others without running them', async () => {
    const r = rig({ halfOpenProbes: 1 });
    trip(r);
    r.clock.advance(30_000);
    const gate = deferred<string>();
    const probe = r.b.execute(() => gate.promise);
    let ran = 0;
    await expect(r.b.execute(() => ran++)).rejects.toSatisfy(isBrokenCircuitError);
    expect(ran).toBe(0);
    r.clock.advance(120);
    gate.resolve('recovered');
    await expect(probe).resolves.toBe('recovered');
    await flush();
    expect(r.b.state).toBe('closed');
    expect(transitions(r.changes)).toEqual([
      'closed>open:consecutive-failures',
      'open>half-open:open-elapsed',
      'half-open>closed:probes-succeeded',
    ]);
  });
});
