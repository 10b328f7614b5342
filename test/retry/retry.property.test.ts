import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '../../src/core/call';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { retryBudget } from '../../src/retry/budget';
import { retry } from '../../src/retry/retry';
import { timeout } from '../../src/timeout/timeout';
import { TimeoutError } from '../../src/errors/index';
import { flush, response, VirtualClock } from './support';

type Step =
  | { kind: 'ok'; afterMs: number }
  | { kind: 'fail'; afterMs: number }
  | { kind: 'overload'; afterMs: number; retryAfterS: number }
  | { kind: 'hang' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('ok' as const), afterMs: fc.integer({ min: 0, max: 2_000 }) }),
  fc.record({ kind: fc.constant('fail' as const), afterMs: fc.integer({ min: 0, max: 2_000 }) }),
  fc.record({
    kind: fc.constant('overload' as const),
    afterMs: fc.integer({ min: 0, max: 500 }),
    retryAfterS: fc.integer({ min: 0, max: 3 }),
  }),
  fc.constant({ kind: 'hang' as const }),
);

/** Plays one scripted step on the virtual clock. */
function play(clock: VirtualClock, s: Step): Promise<unknown> {
  switch (s.kind) {
    case 'ok':
      return new Promise((resolve) => clock.setTimer(() => resolve(response(200)), s.afterMs));
    case 'fail':
      return new Promise((_resolve, reject) => clock.setTimer(() => reject(new Error('5xx')), s.afterMs));
    case 'overload':
      return new Promise((resolve) => clock.setTimer(() => resolve(response(503, String(s.retryAfterS))), s.afterMs));
    case 'hang':
      return new Promise(() => {});
  }
}

/** A seeded uniform source (mulberry32), so a failing case replays exactly. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('retry properties', () => {
  it('starts no attempt at or after the deadline, and the caller hears by the deadline', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 6_000 }),
        fc.option(fc.integer({ min: 1, max: 3_000 }), { nil: undefined }),
        fc.integer({ min: 1, max: 8 }),
        fc.constantFrom('exponential' as const, 'decorrelated' as const),
        fc.integer(),
        async (script, timeoutMs, attemptTimeoutMs, maxAttempts, backoff, seed) => {
          const clock = new VirtualClock(1_000);
          const r = retry({ clock, maxAttempts, backoff, random: seeded(seed), budget: false });
          const p =
            attemptTimeoutMs === undefined ? pipeline(r) : pipeline(r, timeout({ timeoutMs: attemptTimeoutMs, clock }));
          const startedAt: number[] = [];
          const fn = () => {
            startedAt.push(clock.now());
            return play(clock, script[Math.min(startedAt.length - 1, script.length - 1)]!);
          };
          const deadlineAt = 1_000 + timeoutMs;
          // Every retry is decided when the previous attempt ended: it may start only if, after its
          // wait, it could still run as long as that attempt took.
          const tooLate: string[] = [];
          r.onRetry((e) => {
            const endedAt = clock.now();
            const tookMs = endedAt - startedAt[startedAt.length - 1]!;
            if (endedAt + e.delayMs + tookMs >= deadlineAt) tooLate.push(`attempt ${e.attempt} at ${endedAt}`);
          });
          let heardAt = NaN;
          const call = p.execute(fn, { timeoutMs }).finally(() => {
            heardAt = clock.now();
          });
          const outcome = await clock.run(call);
          expect(startedAt.length).toBeGreaterThanOrEqual(1);
          expect(startedAt.length).toBeLessThanOrEqual(maxAttempts);
          for (const at of startedAt) expect(at).toBeLessThan(deadlineAt);
          expect(tooLate).toEqual([]);
          expect(heardAt).toBeLessThanOrEqual(deadlineAt);
          // The caller gets the last attempt's own outcome: a response, its 5xx, or its deadline.
          if (!outcome.ok) {
            const error = outcome.error as Error;
            expect(error instanceof TimeoutError || error.message === '5xx', String(error)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('never grants more than maxBalance + ratio x deposits + floor x elapsed, under any sequence', () => {
    type Op = { kind: 'deposit' } | { kind: 'withdraw' } | { kind: 'refund' } | { kind: 'advance'; ms: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.constant({ kind: 'deposit' as const }),
      fc.constant({ kind: 'withdraw' as const }),
      fc.constant({ kind: 'refund' as const }),
      fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 200 }) }),
    );
    fc.assert(
      fc.property(
        fc.array(op, { maxLength: 300 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 })),
        fc.integer({ min: 1, max: 20 }),
        (ops, ratio, minRetriesPerSecond, maxBalance) => {
          const clock = new VirtualClock();
          const budget = retryBudget({ clock, ratio, minRetriesPerSecond, maxBalance });
          let deposits = 0;
          let outstanding = 0; // granted and not refunded
          for (const o of ops) {
            if (o.kind === 'deposit') {
              budget.deposit();
              deposits++;
            } else if (o.kind === 'withdraw') {
              if (budget.tryWithdraw()) outstanding++;
            } else if (o.kind === 'refund') {
              if (outstanding > 0) {
                budget.refund();
                outstanding--;
              }
            } else clock.advance(o.ms);
            const bound = maxBalance + ratio * deposits + (minRetriesPerSecond * clock.now()) / 1000;
            expect(budget.snapshot().granted).toBe(outstanding);
            expect(outstanding).toBeLessThanOrEqual(bound + 1e-9);
            const balance = budget.balance;
            expect(balance).toBeGreaterThanOrEqual(0);
            expect(balance).toBeLessThanOrEqual(maxBalance);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('keeps every pipeline sharing a budget within it, under any interleaving of concurrent calls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            startMs: fc.integer({ min: 0, max: 3_000 }),
            script: fc.array(step, { minLength: 1, maxLength: 4 }),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5 })),
        fc.integer(),
        async (calls, maxBalance, minRetriesPerSecond, seed) => {
          const clock = new VirtualClock();
          const ratio = 0.2;
          const budget = retryBudget({ clock, ratio, maxBalance, minRetriesPerSecond });
          const random = seeded(seed);
          const pipelines = [0, 1].map(() =>
            pipeline(
              retry({ clock, budget, random, maxAttempts: 4 }),
              // Room for every attempt (the property is the budget's): an adaptive limiter refuses
              // some granted retries (from the default limit of 1 a hung first attempt holds the only
              // permit; an overload answer cuts the limit to what was served), and a refused retry
              // never starts. A fixed limit of 20 keeps the limiter out of the count.
              limiter({ clock, algorithm: 'fixed', initialLimit: 20 }),
              timeout({ timeoutMs: 1_000, clock }),
            ),
          );
          let retriesStarted = 0;
          const violations: string[] = [];
          const running = calls.map(
            (c, i) =>
              new Promise<void>((done) => {
                clock.setTimer(() => {
                  let n = 0;
                  const fn = (ctx: CallContext) => {
                    if (ctx.attempt > 1) {
                      retriesStarted++;
                      const s = budget.snapshot();
                      const bound = maxBalance + ratio * s.deposits + (minRetriesPerSecond * clock.now()) / 1000;
                      if (retriesStarted > bound + 1e-9)
                        violations.push(`${retriesStarted} > ${bound} at ${clock.now()}`);
                    }
                    return play(clock, c.script[Math.min(n++, c.script.length - 1)]!);
                  };
                  pipelines[i % 2]!.execute(fn).then(
                    () => done(),
                    () => done(),
                  );
                }, c.startMs);
              }),
          );
          await clock.run(Promise.all(running));
          expect(violations).toEqual([]);
          expect(budget.snapshot().granted).toBe(retriesStarted);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('cancels a pending backoff the moment the caller aborts, leaving no timer armed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 10_000 }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        fc.double({ min: 0, max: 0.999, noNaN: true }),
        fc.constantFrom('exponential' as const, 'decorrelated' as const),
        async (baseDelayMs, uniform, abortAt, backoff) => {
          const clock = new VirtualClock();
          const r = retry({ clock, baseDelayMs, backoff, random: () => uniform, maxAttempts: 5 });
          const controller = new AbortController();
          let attempts = 0;
          let outcome: unknown = 'pending';
          r.execute(
            () => {
              attempts++;
              return Promise.reject(new Error('down'));
            },
            { signal: controller.signal },
          ).catch((e: unknown) => {
            outcome = e;
          });
          await flush();
          expect(clock.pendingTimers).toBe(1);
          const waitMs = clock.nextAt! - clock.now();
          clock.advance(Math.floor(waitMs * abortAt));
          await flush();
          expect(outcome).toBe('pending');
          const reason = new Error('caller gone');
          const abortedAt = clock.now();
          controller.abort(reason);
          await flush();
          expect(outcome).toBe(reason);
          expect(clock.now()).toBe(abortedAt);
          expect(clock.pendingTimers).toBe(0);
          expect(attempts).toBe(1);
          expect(r.snapshot().budget!.granted).toBe(0);
        },
      ),
      { numRuns: 200 },
    );
  });
});
