import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BreakerStateChange } from '../../src/breaker/state';
import { isBrokenCircuitError, type BrokenCircuitError } from '../../src/errors/index';
import { rig, transitions } from './support';

describe('isolate()', () => {
  it('holds the breaker open, refusing every call, until its handle is disposed', async () => {
    const r = rig();
    const handle = r.b.isolate();
    expect(r.b.state).toBe('isolated');
    r.clock.advance(3_600_000); // no open period ends an isolation
    const refused = (await r.b.execute(() => 'x').catch((e: unknown) => e)) as BrokenCircuitError;
    expect(isBrokenCircuitError(refused)).toBe(true);
    expect(refused.retryAfterMs).toBeUndefined();
    expect(refused.message).toMatch(/isolated \(held open by isolate\(\) until reset\(\)\)/);
    handle.dispose();
    expect(r.b.state).toBe('closed');
    expect(transitions(r.changes)).toEqual(['closed>isolated:manual', 'isolated>closed:manual']);
  });

  it('stays isolated until every handle is disposed, and a second dispose does nothing', () => {
    const r = rig();
    const first = r.b.isolate();
    const second = r.b.isolate();
    first.dispose();
    first.dispose();
    expect(r.b.state).toBe('isolated');
    second.dispose();
    expect(r.b.state).toBe('closed');
    expect(r.changes).toHaveLength(2);
  });

  it('isolates an open or half-open breaker too, and releases it closed with a fresh window', () => {
    const r = rig();
    r.calls(10, 'failure');
    r.clock.advance(30_000);
    r.b.admit();
    const handle = r.b.isolate();
    handle.dispose();
    expect(transitions(r.changes)).toEqual([
      'closed>open:consecutive-failures',
      'open>half-open:open-elapsed',
      'half-open>isolated:manual',
      'isolated>closed:manual',
    ]);
    expect(r.b.snapshot()).toMatchObject({ state: 'closed', samples: 0, consecutiveFailures: 0 });
  });

  it('is released by reset(), after which the old handles do nothing', () => {
    const r = rig();
    const old = r.b.isolate();
    r.b.reset();
    expect(r.b.state).toBe('closed');
    const fresh = r.b.isolate();
    old.dispose();
    expect(r.b.state).toBe('isolated');
    fresh.dispose();
    expect(r.b.state).toBe('closed');
  });
});

describe('reset()', () => {
  it('closes an open breaker at once', () => {
    const r = rig();
    r.calls(10, 'failure');
    r.b.reset();
    expect(r.b.state).toBe('closed');
    expect(transitions(r.changes).at(-1)).toBe('open>closed:manual');
    expect(r.b.admit()).toBeGreaterThanOrEqual(0);
  });

  it('forgets the window and the failure run of a closed breaker without a state change', () => {
    const r = rig();
    r.calls(9, 'failure');
    r.b.reset();
    expect(r.b.snapshot()).toMatchObject({ samples: 0, consecutiveFailures: 0 });
    r.call('failure');
    expect(r.b.state).toBe('closed');
    expect(r.changes).toEqual([]);
  });

  it('forgets the backoff', () => {
    const r = rig({ openMs: 1_000, backoffMultiplier: 2, halfOpenProbes: 1 });
    r.calls(10, 'failure');
    r.clock.advance(1_000);
    r.call('failure');
    expect(r.b.snapshot().halfOpenInMs).toBe(2_000);
    r.b.reset();
    r.calls(10, 'failure');
    expect(r.b.snapshot().halfOpenInMs).toBe(1_000);
  });

  it('ignores calls admitted before it', () => {
    const r = rig({ consecutiveFailures: 1 });
    const before = r.b.admit();
    r.b.reset();
    r.b.settle(before, { verdict: 'failure', latencyMs: 5 });
    expect(r.b.state).toBe('closed');
  });
});

describe('events', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it('reports every change of a full cycle with its reason and clock time', () => {
    const r = rig({ halfOpenProbes: 1 });
    r.calls(10, 'failure');
    r.clock.advance(30_000);
    r.call('ok');
    expect(r.changes).toEqual([
      { from: 'closed', to: 'open', reason: 'consecutive-failures', at: 0 },
      { from: 'open', to: 'half-open', reason: 'open-elapsed', at: 30_000 },
      { from: 'half-open', to: 'closed', reason: 'probes-succeeded', at: 30_000 },
    ]);
  });

  it('has one channel per destination: onOpen, onHalfOpen, onClose', () => {
    const r = rig({ halfOpenProbes: 1 });
    const seen: string[] = [];
    r.b.onOpen((e) => seen.push(`open:${e.reason}`));
    r.b.onHalfOpen((e) => seen.push(`half-open:${e.reason}`));
    r.b.onClose((e) => seen.push(`close:${e.reason}`));
    r.calls(10, 'failure');
    r.clock.advance(30_000);
    r.call('failure');
    r.clock.advance(30_000);
    r.call('ok');
    r.b.isolate();
    r.b.reset();
    expect(seen).toEqual([
      'open:consecutive-failures',
      'half-open:open-elapsed',
      'open:probe-failed',
      'half-open:open-elapsed',
      'close:probes-succeeded',
      'close:manual',
    ]);
  });

  it('stops calling a listener once its subscription is disposed', () => {
    const r = rig();
    const seen: BreakerStateChange[] = [];
    const subscription = r.b.onOpen((e) => seen.push(e));
    subscription.dispose();
    r.calls(10, 'failure');
    expect(seen).toEqual([]);
  });

  it('survives a throwing listener: the call and the state change both go through', async () => {
    const reported: unknown[] = [];
    vi.stubGlobal('reportError', (e: unknown) => reported.push(e));
    const r = rig({ consecutiveFailures: 1 });
    r.b.onOpen(() => {
      throw new Error('listener bug');
    });
    const heardAfter: string[] = [];
    r.b.onOpen((e) => heardAfter.push(e.reason));
    await expect(r.b.execute(() => Promise.reject(new Error('upstream down')))).rejects.toThrow('upstream down');
    expect(r.b.state).toBe('open');
    expect(heardAfter).toEqual(['consecutive-failures']); // the listener after the throwing one still heard it
    expect(reported).toEqual([new Error('listener bug')]);
  });

  it('lets a listener reset the breaker while it is opening', () => {
    const r = rig({ consecutiveFailures: 1 });
    r.b.onOpen(() => r.b.reset());
    r.call('failure');
    expect(r.b.state).toBe('closed');
    expect(transitions(r.changes)).toEqual(['closed>open:consecutive-failures', 'open>closed:manual']);
  });

  it('tells every channel the changes in the order they happened when a listener resets from onStateChange', () => {
    const r = rig({ consecutiveFailures: 1 }); // the rig's own onStateChange listener comes first
    const heard: string[] = [];
    r.b.onStateChange((e) => {
      if (e.to === 'open') r.b.reset();
    });
    r.b.onStateChange((e) => heard.push(`any ${e.from}>${e.to}`));
    r.b.onOpen((e) => heard.push(`onOpen ${e.from}>${e.to}`));
    r.b.onClose((e) => heard.push(`onClose ${e.from}>${e.to}`));
    r.call('failure');
    expect(r.b.state).toBe('closed');
    expect(heard).toEqual(['any closed>open', 'onOpen closed>open', 'any open>closed', 'onClose open>closed']);
    expect(transitions(r.changes)).toEqual(['closed>open:consecutive-failures', 'open>closed:manual']);
  });

  it('lets a listener isolate the breaker while it turns half-open: the arriving call is refused', () => {
    const r = rig({ consecutiveFailures: 1 });
    r.call('failure');
    r.b.onHalfOpen(() => r.b.isolate());
    r.clock.advance(30_000);
    expect(r.b.admit()).toBe(-1);
    expect(r.b.state).toBe('isolated');
  });
});
