import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/breaker';
import type { BreakerOptions } from '../../src/breaker/options';
import {
  isLegalTransition,
  LEGAL_TRANSITIONS,
  type BreakerStateChange,
  type CircuitState,
} from '../../src/breaker/state';
import type { Subscription } from '../../src/core/events';
import { VERDICTS, type Verdict } from '../../src/core/verdict';
import { FakeClock } from '../helpers/fake-clock';

type Step =
  | { kind: 'admit' }
  | { kind: 'settle'; pick: number; verdict: Verdict; latencyMs: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'isolate' }
  | { kind: 'dispose'; pick: number }
  | { kind: 'reset' }
  | { kind: 'restore'; gapMs: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Step>({ kind: 'admit' }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      pick: fc.nat(),
      verdict: fc.constantFrom(...VERDICTS),
      latencyMs: fc.oneof(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 20_000 })),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('advance' as const),
      ms: fc.oneof(fc.integer({ min: 0, max: 500 }), fc.integer({ min: 0, max: 120_000 })),
    }),
  },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'isolate' }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dispose' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.constant<Step>({ kind: 'reset' }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('restore' as const), gapMs: fc.integer({ min: -1_000, max: 60_000 }) }),
  },
);

const options: fc.Arbitrary<Omit<BreakerOptions, 'clock'>> = fc
  .record({
    failureRateThreshold: fc.double({ min: 0.05, max: 1, noNaN: true }),
    slowCallRateThreshold: fc.double({ min: 0.05, max: 1, noNaN: true }),
    slowCallDurationMs: fc.oneof(fc.integer({ min: 50, max: 5_000 }), fc.constant(Infinity)),
    minSamples: fc.integer({ min: 1, max: 12 }),
    floorShare: fc.double({ min: 0, max: 1, noNaN: true }),
    windowMs: fc.integer({ min: 500, max: 20_000 }),
    buckets: fc.integer({ min: 1, max: 12 }),
    consecutiveFailures: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.constant(Infinity)),
    openMs: fc.integer({ min: 0, max: 5_000 }),
    backoffMultiplier: fc.double({ min: 1, max: 4, noNaN: true }),
    halfOpenProbes: fc.integer({ min: 1, max: 4 }),
  })
  .map(({ floorShare, ...o }) => ({
    ...o,
    lowTrafficMinSamples: Math.max(1, Math.round(o.minSamples * floorShare)),
    maxOpenMs: o.openMs * 8,
  }));

/** A cheap assertion for the inner loop (vitest's expect is too slow to call 10^5 times). */
function check(condition: boolean, message: string): void {
  if (!condition) throw new Error(message);
}

describe('the breaker state machine', () => {
  it('makes only legal transitions, from the state it was in, under any sequence of observations and clock advances', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(options, fc.array(step, { minLength: 1, maxLength: 250, size: 'max' }), (opts, steps) => {
        const clock = new FakeClock();
        let wallMs = 1_700_000_000_000;
        const wallClock = (): number => wallMs;
        let b = breaker({ ...opts, clock, wallClock });
        let expected: CircuitState = 'closed';
        // A listener's throw is isolated by the breaker (as it should be), so collect, then check.
        const violations: string[] = [];
        const watch = (): void => {
          b.onStateChange((c: BreakerStateChange) => {
            if (!isLegalTransition(c.from, c.to, c.reason))
              violations.push(`illegal transition ${c.from} -> ${c.to} (${c.reason})`);
            if (c.from !== expected) violations.push(`a change from ${c.from} while the breaker was ${expected}`);
            if (c.at !== clock.now()) violations.push(`a change stamped ${c.at} at ${clock.now()}`);
            seen.add(`${c.from}>${c.to}:${c.reason}`);
            expected = c.to;
          });
        };
        watch();
        const outstanding: number[] = [];
        const handles: Subscription[] = [];

        for (const s of steps) {
          const before = b.state;
          switch (s.kind) {
            case 'admit': {
              const ticket = b.admit();
              check(before !== 'closed' || ticket >= 0, 'a closed breaker refused a call');
              check(before !== 'isolated' || ticket === -1, 'an isolated breaker admitted a call');
              if (ticket >= 0) {
                check(Number.isInteger(ticket), `ticket ${ticket} is not an integer`);
                check(b.state === 'closed' || b.state === 'half-open', `admitted a call while ${b.state}`);
                outstanding.push(ticket);
              } else {
                check(b.state !== 'closed', 'refused a call while closed');
              }
              break;
            }
            case 'settle': {
              if (outstanding.length === 0) break;
              const [ticket] = outstanding.splice(s.pick % outstanding.length, 1);
              b.settle(ticket!, { verdict: s.verdict, latencyMs: s.latencyMs });
              break;
            }
            case 'advance':
              clock.advance(s.ms);
              wallMs += s.ms;
              break;
            case 'isolate':
              handles.push(b.isolate());
              check(b.state === 'isolated', 'isolate() did not isolate');
              break;
            case 'dispose':
              if (handles.length > 0) handles.splice(s.pick % handles.length, 1)[0]!.dispose();
              break;
            case 'reset':
              b.reset();
              check(b.state === 'closed', 'reset() did not close');
              break;
            case 'restore': {
              // Another process picks up the saved state; the old breaker and its calls are gone.
              const saved: unknown = JSON.parse(JSON.stringify(b));
              wallMs += s.gapMs;
              b = breaker({ ...opts, clock, wallClock, restore: saved as never });
              expected = b.state;
              check(expected === (before === 'half-open' ? 'open' : before), `${before} restored as ${expected}`);
              outstanding.length = 0;
              handles.length = 0;
              watch();
              break;
            }
          }
          check(violations.length === 0, violations[0]!);
          check(b.state === expected, `state ${b.state} but the last change said ${expected}`);
          const snap = b.snapshot();
          check(snap.failures <= snap.samples && snap.slowCalls <= snap.samples, 'more failures than samples');
          check(snap.failureRate >= 0 && snap.failureRate <= 1, `failure rate ${snap.failureRate}`);
          check(
            snap.requiredSamples === opts.minSamples || snap.requiredSamples === opts.lowTrafficMinSamples,
            `required samples ${snap.requiredSamples}`,
          );
          if (snap.state === 'open') {
            check(
              snap.halfOpenInMs! >= 0 && snap.halfOpenInMs! <= opts.maxOpenMs!,
              `half-open in ${snap.halfOpenInMs}`,
            );
          } else {
            check(snap.halfOpenInMs === undefined, 'halfOpenInMs outside open');
          }
          check(
            snap.probesInFlight >= 0 && snap.probesInFlight <= opts.halfOpenProbes!,
            `${snap.probesInFlight} probes`,
          );
        }
      }),
      { numRuns: 300, seed: 20_260_407 },
    );
    // The runs explored every edge of the machine, so "only legal transitions" is not vacuous.
    const legal = Object.entries(LEGAL_TRANSITIONS).flatMap(([from, targets]) =>
      Object.entries(targets).flatMap(([to, reasons]) => reasons.map((reason) => `${from}>${to}:${reason}`)),
    );
    expect([...seen].sort()).toEqual(legal.sort());
  });

  it('never lets more than halfOpenProbes probes run in one half-open period', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.constantFrom<Verdict>('ok', 'overload', 'cancelled', 'rejected'), { maxLength: 30 }),
        (halfOpenProbes, endings) => {
          const clock = new FakeClock();
          const b = breaker({ clock, consecutiveFailures: 1, halfOpenProbes, slowCallDurationMs: Infinity });
          b.settle(b.admit(), { verdict: 'failure', latencyMs: 1 });
          clock.advance(30_000);
          const inFlight: number[] = [];
          let succeeded = 0;
          for (const verdict of endings) {
            if (b.state === 'closed') break;
            for (let i = 0; i <= halfOpenProbes; i++) {
              const ticket = b.admit(); // the first one turns the open breaker half-open
              if (ticket < 0) break;
              inFlight.push(ticket);
            }
            expect(b.state).toBe('half-open');
            // A success keeps its slot; overload, cancelled and rejected give theirs back.
            expect(succeeded + inFlight.length).toBeLessThanOrEqual(halfOpenProbes);
            expect(b.snapshot().probesInFlight).toBe(inFlight.length);
            b.settle(inFlight.shift()!, { verdict, latencyMs: 1 });
            if (verdict === 'ok') succeeded++;
          }
          if (endings.length > 0) expect(b.state).toBe(succeeded === halfOpenProbes ? 'closed' : 'half-open');
        },
      ),
      { numRuns: 200 },
    );
  });
});
