import { describe, expect, it } from 'vitest';
import { rig } from './support';

/**
 * Gaps the mutation run over src/breaker found (docs/testing.md): each of these behaviours had no
 * test that would fail if it changed.
 */
describe('breaker behaviours the mutation run found untested', () => {
  it('does not open at a 10 % slow-call rate with a full minSamples window', () => {
    const { b, calls } = rig({ slowCallDurationMs: 1_000 });
    calls(18, 'ok', { latencyMs: 5 });
    calls(2, 'ok', { latencyMs: 1_500 });
    expect(b.state).toBe('closed');
    expect(b.snapshot()).toMatchObject({ samples: 20, slowCalls: 2, slowCallRate: 0.1 });
  });

  it('reports rates of 0, not NaN, while the window is empty', () => {
    const { b } = rig();
    expect(b.snapshot()).toMatchObject({ samples: 0, failureRate: 0, slowCallRate: 0 });
  });

  it('closes when a probe takes exactly slowCallDurationMs (slow means slower than it)', () => {
    const { b, calls, call, clock } = rig({ slowCallDurationMs: 1_000, halfOpenProbes: 1, openMs: 100 });
    calls(10, 'failure');
    expect(b.state).toBe('open');
    clock.advance(100);
    call('ok', 1_000);
    expect(b.state).toBe('closed');
  });

  it('reports no probes in flight once a failed probe re-opened it', () => {
    const { b, calls, call, clock } = rig({ halfOpenProbes: 2, openMs: 100 });
    calls(10, 'failure');
    clock.advance(100);
    call('failure');
    expect(b.snapshot()).toMatchObject({ state: 'open', probesInFlight: 0 });
  });
});
