import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Permit } from '../../../src/core/ports';
import type { Verdict } from '../../../src/core/verdict';
import type { QueueingConfig } from '../../../src/limiter/admission';
import { flush } from '../../helpers/fake-clock';
import { harness } from './support/admission-harness';
import { seededRandom } from './support/sim-clock';

type Command =
  | { kind: 'try' }
  | { kind: 'acquire'; deadlineMs: number | null; withSignal: boolean }
  | { kind: 'settle'; pick: number; verdict: Verdict; twice: boolean }
  | { kind: 'abort'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'resize'; limit: number }
  | { kind: 'window'; limit: number }
  | { kind: 'flush' };

const verdicts: Verdict[] = ['ok', 'answered', 'overload', 'failure', 'timeout', 'rejected', 'cancelled'];

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: 'try' as const }) },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('acquire' as const),
      deadlineMs: fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }),
      withSignal: fc.boolean(),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('settle' as const),
      pick: fc.nat(),
      verdict: fc.constantFrom(...verdicts),
      twice: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('abort' as const), pick: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 40 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('resize' as const), limit: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('window' as const), limit: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 3, arbitrary: fc.constant({ kind: 'flush' as const }) },
);

const queueings: Array<QueueingConfig | false> = [
  { initialFactor: 2, maxFactor: 3 },
  { initialFactor: 1.5, maxFactor: 2.5 },
  { initialFactor: 1, maxFactor: 1 },
  { initialFactor: 3, maxFactor: 3 },
  false,
];

interface Waiter {
  controller: AbortController | undefined;
  deadlineAt: number;
  settled: number;
}

describe('admission under any interleaving (model test)', () => {
  it('never admits past the limit, never queues past its bound, and leaks nothing', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(...queueings),
        fc.constantFrom('fifo' as const, 'lifo' as const),
        fc.integer(),
        fc.array(command, { minLength: 1, maxLength: 80 }),
        async (initialLimit, queueing, queueOrder, seed, commands) => {
          const h = harness({ limit: initialLimit, queueing, queueOrder, random: seededRandom(seed) });
          const { admission, controller, clock } = h;
          const held: Permit[] = [];
          const waiters: Waiter[] = [];
          const violations: string[] = [];
          let obtained = 0;
          let settles = 0;

          const acquire = (deadlineMs: number | null, withSignal: boolean): void => {
            const abort = withSignal ? new AbortController() : undefined;
            const deadlineAt = deadlineMs === null ? Infinity : clock.now() + deadlineMs;
            const waiter: Waiter = { controller: abort, deadlineAt, settled: 0 };
            waiters.push(waiter);
            const admittedBefore = admission.counters().admitted;
            const queuedBefore = admission.queued;
            admission.acquire(abort?.signal, deadlineAt, deadlineMs ?? undefined).then(
              (permit) => {
                waiter.settled++;
                obtained++;
                // A call that waited claims its slot strictly before its deadline: a slot handed
                // over too late is taken back. (A call admitted at once may claim later.)
                if (waited && clock.now() >= deadlineAt) violations.push(`claimed at ${clock.now()} >= ${deadlineAt}`);
                held.push(permit);
              },
              () => {
                waiter.settled++;
              },
            );
            const waited = admission.queued > queuedBefore && admission.counters().admitted === admittedBefore;
          };

          const settle = (index: number, verdict: Verdict, twice: boolean): void => {
            const [permit] = held.splice(index, 1);
            permit!.settle({ verdict, latencyMs: 1 });
            if (twice) permit!.settle({ verdict, latencyMs: 1 });
            settles++;
          };

          for (const c of commands) {
            const admittedBefore = admission.counters().admitted;
            const queuedBefore = admission.queued;
            switch (c.kind) {
              case 'try': {
                const permit = admission.tryAcquire();
                if (permit !== undefined) {
                  obtained++;
                  held.push(permit);
                }
                break;
              }
              case 'acquire':
                acquire(c.deadlineMs, c.withSignal);
                break;
              case 'settle':
                if (held.length > 0) settle(c.pick % held.length, c.verdict, c.twice);
                break;
              case 'abort': {
                const withSignal = waiters.filter((w) => w.controller !== undefined);
                if (withSignal.length > 0) withSignal[c.pick % withSignal.length]!.controller!.abort();
                break;
              }
              case 'advance':
                clock.advance(c.ms);
                break;
              case 'resize':
                admission.resize(c.limit);
                break;
              case 'window':
                controller.limitAfterNextObserve = c.limit;
                break;
              case 'flush':
                await flush();
                break;
            }
            // Admission never raises in-flight past the limit in force at that moment.
            if (admission.counters().admitted > admittedBefore) {
              expect(admission.inflight).toBeLessThanOrEqual(admission.limit);
            }
            // A call joins the queue only below maxFactor x limit, counting running plus waiting.
            if (admission.queued > queuedBefore) {
              expect(queueing).not.toBe(false);
              const bound = Math.ceil((queueing as QueueingConfig).maxFactor * admission.limit);
              expect(admission.inflight + admission.queued).toBeLessThanOrEqual(bound);
            }
            expect(admission.inflight).toBeGreaterThanOrEqual(0);
          }

          // Wind down: settle whatever holds a slot and let deadlines pass, until nothing is left.
          for (
            let round = 0;
            round < 1_000 && (held.length > 0 || admission.queued > 0 || admission.inflight > 0);
            round++
          ) {
            await flush();
            while (held.length > 0) settle(0, 'ok', false);
            clock.advance(100);
            await flush();
          }
          await flush();
          expect(admission.inflight).toBe(0);
          expect(admission.queued).toBe(0);
          expect(held).toEqual([]);
          expect(clock.pendingTimers).toBe(0);
          expect(waiters.every((w) => w.settled === 1)).toBe(true);
          expect(obtained).toBe(settles);
          expect(violations).toEqual([]);
        },
      ),
      { numRuns: 400 },
    );
  });
});
