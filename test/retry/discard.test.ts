import { describe, expect, it } from 'vitest';
import { retry } from '../../src/retry/retry';
import { constant, flush, VirtualClock } from './support';

/** A 503 Response whose body records a cancel (the retry policy's default classifier reads Responses). */
function busy(): { response: Response; cancelled: () => boolean } {
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    cancel() {
      cancelled = true;
    },
  });
  return { response: new Response(body, { status: 503 }), cancelled: () => cancelled };
}

describe('a value the retry policy drops (test/fetch/retried-body.test.ts has the sockets)', () => {
  it("cancels a retried Response's body, and leaves the one it returns readable", async () => {
    const clock = new VirtualClock();
    const answers = [busy(), busy()];
    let calls = 0;
    const policy = retry({ clock, random: constant(0), budget: false, maxAttempts: 2 });
    const outcome = await clock.run(policy.execute(() => answers[calls++]!.response));
    expect(outcome).toMatchObject({ ok: true, value: answers[1]!.response });
    expect(answers.map((answer) => answer.cancelled())).toEqual([true, false]);
  });

  it('cancels it when the caller leaves during the backoff wait', async () => {
    const clock = new VirtualClock();
    const first = busy();
    const leaving = new AbortController();
    const policy = retry({ clock, random: constant(0.5), budget: false, baseDelayMs: 1_000 });
    const call = policy.execute(() => first.response, { signal: leaving.signal });
    await flush();
    expect(clock.pendingTimers).toBe(1); // the wait
    leaving.abort(new Error('caller left'));
    await expect(call).rejects.toThrow('caller left');
    expect(first.cancelled()).toBe(true);
  });

  it('counts a caller who leaves as the wait ends as aborted in backoff, not as a retry, and cancels the body', () =>
    leavesAsTheWaitEnds());

  it('returns the Response readable when a late timer overruns the deadline (no retry is made)', async () => {
    // A timer that fires 2 s late: the 50 ms wait ends past the call's 1 s deadline.
    class LateClock extends VirtualClock {
      override setTimer(callback: () => void, delayMs: number): number {
        return super.setTimer(callback, delayMs + 2_000);
      }
    }
    const clock = new LateClock();
    const first = busy();
    let calls = 0;
    const policy = retry({ clock, random: constant(0.5), budget: false, baseDelayMs: 100 });
    const outcome = await clock.run(
      policy.execute(
        () => {
          calls++;
          return first.response;
        },
        { timeoutMs: 1_000 },
      ),
    );
    expect(calls).toBe(1);
    expect(policy.snapshot().gaveUp.deadline).toBe(1);
    expect(outcome).toMatchObject({ ok: true, value: first.response });
    expect(first.cancelled()).toBe(false);
  });

  it("leaves a value whose body is not a web stream alone (a user's own `body` is not ours to call)", async () => {
    const clock = new VirtualClock();
    let cancels = 0;
    const own = { status: 503, body: { cancel: () => cancels++ } };
    let calls = 0;
    const policy = retry({ clock, random: constant(0), budget: false, maxAttempts: 3 });
    await clock.run(
      policy.execute(() => {
        calls++;
        return own;
      }),
    );
    expect(calls).toBe(3); // retried twice
    expect(cancels).toBe(0);
  });
});

/**
 * The abort lands in the same turn as the wait's timer, after it: the wait has resolved and removed its
 * listener. The check before the next attempt sees it: no retry is counted and the budget gets its
 * withdrawal back. (Without that check the attempt would be refused at its start, aborted, with the
 * body still cancelled but a retry counted and the budget spent.)
 */
async function leavesAsTheWaitEnds(): Promise<void> {
  const leaving = new AbortController();
  class LeavingClock extends VirtualClock {
    override setTimer(callback: () => void, delayMs: number): number {
      return super.setTimer(() => {
        callback();
        leaving.abort(new Error('caller left'));
      }, delayMs);
    }
  }
  const clock = new LeavingClock();
  const first = busy();
  let calls = 0;
  const policy = retry({
    clock,
    random: constant(0.5),
    baseDelayMs: 1_000,
    budget: { minRetriesPerSecond: 0, maxBalance: 5 },
  });
  const balance = policy.snapshot().budget!.balance;
  const call = policy.execute(
    () => {
      calls++;
      return first.response;
    },
    { signal: leaving.signal },
  );
  const outcome = await clock.run(call);
  expect(outcome).toMatchObject({ ok: false, error: { message: 'caller left' } });
  expect(calls).toBe(1);
  expect(first.cancelled()).toBe(true);
  expect(policy.snapshot()).toMatchObject({ retries: 0, abortedInBackoff: 1 });
  expect(policy.snapshot().budget!.balance).toBe(balance);
}
