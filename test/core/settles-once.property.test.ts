import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

type Outcome =
  | { kind: 'resolve'; afterMs: number }
  | { kind: 'reject'; afterMs: number }
  | { kind: 'throw-sync' }
  | { kind: 'plain-value' }
  | { kind: 'hang' }
  | { kind: 'abort'; afterMs: number };

const outcome: fc.Arbitrary<Outcome> = fc.oneof(
  fc.record({ kind: fc.constant('resolve' as const), afterMs: fc.integer({ min: 0, max: 200 }) }),
  fc.record({ kind: fc.constant('reject' as const), afterMs: fc.integer({ min: 0, max: 200 }) }),
  fc.constant({ kind: 'throw-sync' as const }),
  fc.constant({ kind: 'plain-value' as const }),
  fc.constant({ kind: 'hang' as const }),
  fc.record({ kind: fc.constant('abort' as const), afterMs: fc.integer({ min: 0, max: 200 }) }),
);

describe('every call settles exactly once and produces exactly one Observation', () => {
  it('holds for any sequence of outcomes, deadlines and aborts', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(outcome, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 5 }),
        async (outcomes, ceiling) => {
          const clock = new FakeClock();
          const spy = spyPolicy(clock);
          const b = bulkhead({ maxConcurrent: ceiling, clock });
          const p = pipeline(spy, b, timeout({ timeoutMs: 100, clock }));
          const settledCount = new Array<number>(outcomes.length).fill(0);
          const hung: Array<() => void> = [];
          const calls = outcomes.map((o, i) => {
            const controller = new AbortController();
            if (o.kind === 'abort') clock.setTimer(() => controller.abort(new Error('caller abort')), o.afterMs);
            const run = p.execute(
              () => {
                switch (o.kind) {
                  case 'resolve':
                    return new Promise((r) => clock.setTimer(() => r('v'), o.afterMs));
                  case 'reject':
                    return new Promise((_r, j) => clock.setTimer(() => j(new Error('e')), o.afterMs));
                  case 'throw-sync':
                    throw new Error('sync');
                  case 'plain-value':
                    return 'plain';
                  case 'hang':
                  case 'abort':
                    return new Promise((r) => hung.push(() => r('late')));
                }
              },
              { signal: controller.signal },
            );
            return run.then(
              () => settledCount[i]!++,
              () => settledCount[i]!++,
            );
          });
          for (let t = 0; t < 300; t += 10) {
            clock.advance(10);
            await flush();
          }
          for (const release of hung) release();
          await Promise.all(calls);
          await flush();
          expect(settledCount.every((n) => n === 1)).toBe(true);
          // one Observation per call: admitted calls report their verdict, refused ones `rejected`
          expect(spy.observations).toHaveLength(outcomes.length);
          expect(b.active).toBe(0);
          expect(clock.pendingTimers).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
