import { describe, expect, it } from 'vitest';
import { isLimitExceededError } from '../../../src/errors/limit-exceeded-error';
import type { TimeoutError } from '../../../src/errors/timeout-error';
import { flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';

/** A clock whose timers never fire: a cancelled Workers request loses its timers and continuations. */
function deadClock() {
  const c = { now: 0, armed: 0 };
  return {
    c,
    clock: {
      now: () => c.now,
      setTimer: () => ++c.armed,
      clearTimer: () => {},
    },
  };
}

/**
 * Waking is built for Cloudflare Workers (adr/0043): a settle only resolves the waiter's promise;
 * the waiter claims its slot in its own continuation, in its own request's context. Every waiter
 * keeps a timer of its own while it waits (its deadline, or a heartbeat), so workerd does not
 * cancel it as hung; a waiter that is gone anyway (its request cancelled, its timers and
 * continuations dropped) is found by its deadline or its silent heartbeat and its place or slot
 * taken back.
 */
describe('waking a waiter', () => {
  it('runs nothing of the waiter on the settling call stack: the waiter claims in its own continuation', async () => {
    const { admission } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const waiter = enqueue(admission);
    running!.settle(OK);
    expect(waiter.outcome.status).toBe('pending');
    expect(admission.inflight).toBe(1); // the slot is reserved for it meanwhile
    expect(admission.tryAcquire()).toBeUndefined();
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
  });

  it('takes the slot back if the deadline timer fires between the hand-off and the claim', async () => {
    const { admission, clock } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const late = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    const next = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    clock.advance(99);
    running!.settle(OK); // hands the slot to `late`...
    clock.advance(1); // ...whose deadline fires before its claim could run
    await flush();
    expect(late.outcome.status).toBe('refused');
    expect(((late.outcome as { error: unknown }).error as TimeoutError).queued).toBe(true);
    expect(next.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
    expect(admission.counters().timedOutInQueue).toBe(1);
  });

  it('takes back, at the next settle, a slot whose waiter never claimed it and whose timer never fired', async () => {
    // timers that never fire model a cancelled request: its timers and continuations are gone
    let now = 0;
    const { admission } = harness({ limit: 2, clock: { now: () => now, setTimer: () => 0, clearTimer: () => {} } });
    const [a, b] = fill(admission, 2);
    const ghost = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    const live = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    now = 50;
    a!.settle(OK); // hands a slot to `ghost`; its claim never gets to run before...
    now = 100;
    b!.settle(OK); // ...this settle, past its deadline: the slot comes back and goes to `live`
    expect(admission.inflight).toBe(1);
    await flush();
    expect(ghost.outcome.status).toBe('refused');
    expect(live.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
  });

  it('keeps a timely claim: a later settle before the deadline leaves the handed slot alone', async () => {
    let now = 0;
    const { admission } = harness({ limit: 2, clock: { now: () => now, setTimer: () => 0, clearTimer: () => {} } });
    const [a, b] = fill(admission, 2);
    const waiter = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    now = 50;
    a!.settle(OK);
    now = 99;
    b!.settle(OK);
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
  });

  it('keeps one heartbeat timer for a waiter without a deadline, every second while it waits, cleared on admission', async () => {
    const { admission, clock } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    const waiter = enqueue(admission);
    expect(clock.pendingTimers).toBe(1);
    clock.advance(5_500); // five beats, each re-arming the next
    expect(clock.pendingTimers).toBe(1);
    running!.settle(OK);
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
    expect(clock.pendingTimers).toBe(0);
  });

  it('drops a waiter without a deadline whose heartbeat has been silent for 10 s, and serves the next one', async () => {
    const { c, clock } = deadClock();
    const { admission } = harness({ limit: 1, clock });
    const [running] = fill(admission, 1);
    const ghost = enqueue(admission); // its beats never come: its request is gone
    c.now = 9_999;
    const live = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
    c.now = 10_000;
    running!.settle(OK);
    await flush();
    expect(ghost.outcome.status).toBe('refused');
    const error = (ghost.outcome as { error: unknown }).error as Error;
    expect(isLimitExceededError(error)).toBe(true);
    expect(error.message).toBe(
      'resilix: a queued call stopped answering its heartbeat (silent 10000 ms; ' +
        'its request was likely cancelled) and left the queue without running',
    );
    expect(live.outcome.status).toBe('admitted');
    expect(admission.counters().abandonedInQueue).toBe(1);
  });

  it('takes back a slot handed to a waiter without a deadline that never claims it and stops beating', async () => {
    const { c, clock } = deadClock();
    const { admission } = harness({ limit: 2, clock });
    const [a, b] = fill(admission, 2);
    const ghost = enqueue(admission);
    a!.settle(OK); // handed, never claimed (synchronously, as a dropped continuation would be)
    c.now = 10_000;
    b!.settle(OK);
    expect(admission.inflight).toBe(0);
    await flush();
    expect(ghost.outcome.status).toBe('refused');
  });

  it('un-wedges on the slow path: a new call after a ghost held the last slot past its deadline runs at once', async () => {
    const { c, clock } = deadClock();
    const { admission } = harness({ limit: 1, clock });
    const [running] = fill(admission, 1);
    enqueue(admission, { deadlineAt: 500, timeoutMs: 500 });
    c.now = 100;
    running!.settle(OK); // the slot goes to the waiter, whose request is gone
    c.now = 500;
    // no settle will ever come; the next caller's slow path reclaims the slot
    const next = enqueue(admission, { deadlineAt: 2_000, timeoutMs: 1_500 });
    await flush();
    expect(next.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
  });

  it('sweeps dead waiters from the oldest end in lifo order, so they do not hold places', async () => {
    const { c, clock } = deadClock();
    const { admission } = harness({ limit: 2, queueOrder: 'lifo', clock });
    const [running] = fill(admission, 2);
    const old = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    const newer = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    const newest = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    c.now = 200;
    running!.settle(OK);
    await flush();
    expect([old.outcome.status, newer.outcome.status, newest.outcome.status]).toEqual([
      'refused',
      'pending',
      'admitted',
    ]);
    expect(admission.queued).toBe(1);
  });

  it.each(['lifo', 'fifo'] as const)(
    'sweeps (%s) a dead waiter behind a live one before an arrival could be shed for its place',
    async (queueOrder) => {
      const { c, clock } = deadClock();
      // limit 2: from 4 running + waiting an arrival may be shed, from 6 every one is
      const { admission } = harness({ limit: 2, queueOrder, clock, random: () => 0 });
      fill(admission, 2);
      const live = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
      const ghost = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 }); // its request is gone: no timer fires
      const young = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
      c.now = 200;
      // 5 running + waiting would shed this arrival (coin 0 < 1/2); 4, without the ghost, takes it
      const arrival = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
      await flush();
      expect([live, ghost, young, arrival].map((w) => w.outcome.status)).toEqual([
        'pending',
        'refused',
        'pending',
        'pending',
      ]);
      expect(admission.queued).toBe(3);
      expect(admission.counters()).toMatchObject({ shed: 0, timedOutInQueue: 1 });
    },
  );

  it('refuses a claim made after the deadline (a busy event loop), counts it, and passes the slot on', async () => {
    const { c, clock } = deadClock(); // the stall: time passes, and no timer gets to run
    const { admission } = harness({ limit: 1, clock });
    const [running] = fill(admission, 1);
    const late = enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    const next = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    c.now = 50;
    running!.settle(OK); // handed to `late`, whose continuation runs only once the loop is free again
    c.now = 130;
    await flush();
    expect(late.outcome.status).toBe('refused');
    expect(((late.outcome as { error: unknown }).error as TimeoutError).queued).toBe(true);
    expect(next.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
    expect(admission.counters()).toMatchObject({ admitted: 3, timedOutInQueue: 1 }); // the handed slot counts
  });

  it('beats until the deadline is under a second away, then times out exactly at the deadline', async () => {
    const { admission, clock } = harness({ limit: 1 });
    fill(admission, 1);
    const waiter = enqueue(admission, { deadlineAt: 2_500, timeoutMs: 2_500 });
    clock.advance(2_499);
    await flush();
    expect(waiter.outcome.status).toBe('pending');
    expect(clock.pendingTimers).toBe(1);
    clock.advance(1);
    await flush();
    expect((waiter.outcome as { error: TimeoutError }).error.queued).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it('drops a waiter with a far deadline after 10 s of silence, long before its deadline', async () => {
    const { c, clock } = deadClock();
    const { admission } = harness({ limit: 1, clock });
    const [running] = fill(admission, 1);
    const ghost = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
    c.now = 9_999;
    const live = enqueue(admission, { deadlineAt: 60_000, timeoutMs: 60_000 });
    c.now = 10_000;
    running!.settle(OK);
    await flush();
    expect(isLimitExceededError((ghost.outcome as { error: unknown }).error)).toBe(true);
    expect(live.outcome.status).toBe('admitted');
  });

  it('lets a live waiter reclaim, at its own heartbeat, the last slot held by a ghost, with no settle to help', async () => {
    let now = 0;
    const timers: Array<{ at: number; cb: () => void; live: boolean }> = [];
    // timers armed while `dead` is set belong to the ghost's request and never fire
    let dead = true;
    const { admission } = harness({
      limit: 1,
      clock: {
        now: () => now,
        setTimer: (cb, ms) => {
          const t = { at: now + ms, cb, live: !dead };
          timers.push(t);
          return t;
        },
        clearTimer: (t) => {
          (t as { live: boolean }).live = false;
        },
      },
    });
    const [running] = fill(admission, 1);
    enqueue(admission, { deadlineAt: 300, timeoutMs: 300 }); // the ghost
    running!.settle(OK); // hands it the only slot; its claim never runs
    dead = false;
    const live = enqueue(admission, { deadlineAt: 5_000, timeoutMs: 5_000 });
    for (now = 0; now <= 1_000; now += 100) {
      for (const t of timers.filter((x) => x.live && x.at <= now)) {
        t.live = false;
        t.cb();
      }
    }
    await flush();
    expect(live.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(1);
    expect(admission.counters().timedOutInQueue).toBe(1);
  });
});
