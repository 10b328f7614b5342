import { describe, expect, it } from 'vitest';
import { resolveClock } from '../../../src/core/clock';
import { isTimeoutError, type TimeoutError } from '../../../src/errors/timeout-error';
import { Admission, type CallPlan, runCall } from '../../../src/internal';
import { timeout } from '../../../src/timeout/timeout';
import { FakeClock, deferred, flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness, type Outcome } from './support/admission-harness';
import { StandInController } from './support/stand-in-controller';

function refusal(call: { outcome: Outcome }): unknown {
  if (call.outcome.status !== 'refused') throw new Error(`expected a refusal, got ${call.outcome.status}`);
  return call.outcome.error;
}

describe('queue wait counts against the caller deadline', () => {
  it('rejects a waiter whose deadline passes in the queue with a TimeoutError that says it was queued', async () => {
    const { admission, clock } = harness({ limit: 1 });
    fill(admission, 1);
    const call = enqueue(admission, { deadlineAt: 250, timeoutMs: 250 });
    clock.advance(249);
    await flush();
    expect(call.outcome.status).toBe('pending');
    clock.advance(1);
    await flush();
    const error = refusal(call) as TimeoutError;
    expect(isTimeoutError(error)).toBe(true);
    expect(error.queued).toBe(true);
    expect(error.timeoutMs).toBe(250);
    expect(error.message).toBe(
      'resilix: timed out after 250 ms while queued in the limiter; the upstream never saw the call',
    );
    expect(admission.queued).toBe(0);
    expect(admission.counters().timedOutInQueue).toBe(1);
  });

  it('teaches the controller nothing about a call that timed out in the queue', async () => {
    const { admission, controller, clock } = harness({ limit: 1 });
    fill(admission, 1);
    enqueue(admission, { deadlineAt: 10, timeoutMs: 10 });
    clock.advance(10);
    await flush();
    expect(controller.observed).toEqual([]);
  });

  it('arms one timer per waiting call and clears it when the call is admitted', async () => {
    const { admission, clock } = harness({ limit: 1 });
    const [running] = fill(admission, 1);
    enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    enqueue(admission, { deadlineAt: 100, timeoutMs: 100 });
    expect(clock.pendingTimers).toBe(2);
    running!.settle(OK);
    await flush();
    expect(clock.pendingTimers).toBe(1);
  });

  it('refuses at once a call whose deadline has already passed, without queueing it', async () => {
    const { admission, clock } = harness({ limit: 1 });
    fill(admission, 1);
    clock.advance(50);
    const call = enqueue(admission, { deadlineAt: 50, timeoutMs: 10 });
    await flush();
    expect((refusal(call) as TimeoutError).queued).toBe(true);
    expect(admission.queued).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it.each([
    // FIFO: the expired waiter is the oldest, which the sweep of the oldest end drops.
    ['fifo', 'the oldest'],
    // LIFO: it is the newest, the one LIFO takes first, past that sweep: taken out of the queue, it leaves without a
    // slot (a slot would buy it nothing).
    ['lifo', 'the newest'],
  ] as const)('in %s passes over %s waiter when its deadline has come, and serves the other', async (order, _which) => {
    // A clock whose timers never fire: the waiter's own timer cannot save it (as in a cancelled
    // Workers request), so the settle must notice the deadline itself.
    let now = 0;
    const clock = { now: () => now, setTimer: () => 0, clearTimer: () => {} };
    const { admission } = harness({ limit: 1, clock, queueOrder: order });
    const [running] = fill(admission, 1);
    const expiring = { deadlineAt: 100, timeoutMs: 100 };
    const lasting = { deadlineAt: 500, timeoutMs: 500 };
    const first = enqueue(admission, order === 'fifo' ? expiring : lasting);
    const second = enqueue(admission, order === 'fifo' ? lasting : expiring);
    const [expired, live] = order === 'fifo' ? [first, second] : [second, first];
    now = 100;
    running!.settle(OK);
    await flush();
    expect((refusal(expired) as TimeoutError).queued).toBe(true);
    expect(live.outcome.status).toBe('admitted');
    expect([admission.inflight, admission.queued, admission.counters().timedOutInQueue]).toEqual([1, 0, 1]);
  });

  it('counts a gone waiter once when a clock that calls back into the limiter drops the next one first', async () => {
    // A live waiter at the oldest end hides two gone ones from the settle's sweep; an arrival's sweep walks to them.
    // Clearing the first one's timer settles the running call, and that settle (LIFO: it takes the newest first) drops
    // the second before the walk reaches it.
    let now = 0;
    let running: ReturnType<typeof fill>[number] | undefined;
    const clearTimer = (): void => {
      const permit = running;
      running = undefined;
      permit?.settle(OK);
    };
    const { admission } = harness({
      limit: 1,
      queueing: { initialFactor: 4, maxFactor: 5 },
      queueOrder: 'lifo',
      clock: { now: () => now, setTimer: () => 0, clearTimer },
    });
    const held = fill(admission, 1)[0]!;
    const live = enqueue(admission, { deadlineAt: 500, timeoutMs: 500 });
    const gone = [
      enqueue(admission, { deadlineAt: 100, timeoutMs: 100 }),
      enqueue(admission, { deadlineAt: 100, timeoutMs: 100 }),
    ];
    now = 100;
    running = held;
    enqueue(admission, { deadlineAt: 900, timeoutMs: 800 });
    await flush();
    for (const call of gone) expect((refusal(call) as TimeoutError).queued).toBe(true);
    expect(live.outcome.status).toBe('admitted');
    expect(admission.counters().timedOutInQueue).toBe(2);
  });

  describe('through the call runner', () => {
    function plan(limit: number, withTimeoutPolicy: boolean) {
      const fake = new FakeClock();
      const clock = resolveClock(fake, 'test');
      const admission = new Admission({
        clock,
        controller: new StandInController(limit),
        queueing: { initialFactor: 2, maxFactor: 3 },
        queueOrder: 'fifo',
        random: () => 0.5,
      });
      const policy = timeout({ timeoutMs: 100, clock: fake });
      const p: CallPlan = {
        clock,
        breaker: undefined,
        limiter: admission,
        bulkhead: undefined,
        timeout: withTimeoutPolicy ? policy : undefined,
        classify: undefined,
        observation: undefined,
        observationInUse: false,
      };
      return { plan: p, fake, admission, policy };
    }

    it.each([
      ['a per-call timeoutMs', false],
      ['the timeout policy', true],
    ])('gives the call only the budget that queueing left (%s)', async (_name, withPolicy) => {
      const { plan: p, fake } = plan(1, withPolicy);
      const first = deferred<string>();
      const running = runCall(p, () => first.promise, withPolicy ? undefined : { timeoutMs: 100 });
      let abortedAt = NaN;
      let startedAt = NaN;
      const queued = runCall(
        p,
        (ctx) => {
          startedAt = fake.now();
          ctx.signal.addEventListener('abort', () => (abortedAt = fake.now()));
          return new Promise(() => {});
        },
        withPolicy ? undefined : { timeoutMs: 100 },
      );
      const outcome = queued.catch((e: unknown) => ({ error: e, at: fake.now() }));
      fake.advance(60);
      first.resolve('done');
      await running;
      await flush(10);
      expect(startedAt).toBe(60);
      fake.advance(39);
      await flush(10);
      fake.advance(1);
      const { error, at } = (await outcome) as { error: TimeoutError; at: number };
      expect(isTimeoutError(error)).toBe(true);
      expect(error.queued).toBe(false);
      // queued 60 ms + ran 40 ms = the caller's 100 ms, not 160
      expect(at).toBe(100);
      expect(abortedAt).toBe(100);
    });

    it('counts a queue timeout whose deadline passed between its hand-off and its start', async () => {
      // One running call; a waiter with 100 ms. The slot comes back at 99 ms, and the call that settled it works on
      // synchronously for 5 ms before the waiter's continuation runs: handed its slot in time, it cannot start in time.
      const { plan: p, fake, admission } = plan(1, false);
      const first = deferred<string>();
      const running = runCall(p, () => first.promise, { timeoutMs: 1_000 });
      const queued = runCall(p, async () => 'ran', { timeoutMs: 100 }).catch((e: unknown) => e);
      fake.advance(99);
      first.resolve('done');
      await running.then(() => fake.advance(5));
      const error = (await queued) as TimeoutError;
      expect(isTimeoutError(error) && error.queued).toBe(true);
      expect(admission.counters().timedOutInQueue).toBe(1);
      expect(admission.inflight).toBe(0);
    });

    it('counts an abort between its hand-off and its start as one in the queue; the call never starts', async () => {
      // As above, but the caller aborts where the deadline passed: after the claim, before the waiter's continuation.
      const { plan: p, admission } = plan(1, false);
      const first = deferred<string>();
      const running = runCall(p, () => first.promise, { timeoutMs: 1_000 });
      const aborter = new AbortController();
      let started = false;
      const queued = runCall(
        p,
        async () => {
          started = true;
          return 'ran';
        },
        { timeoutMs: 1_000, signal: aborter.signal },
      ).catch((e: unknown) => e);
      const reason = new Error('the client went away');
      first.resolve('done');
      await running.then(() => aborter.abort(reason));
      expect(await queued).toBe(reason);
      expect(started).toBe(false);
      expect(admission.counters()).toMatchObject({ abortedInQueue: 1, timedOutInQueue: 0, admitted: 2 });
      expect(admission.inflight).toBe(0);
    });

    it('reports the queue wait on the observation the controller learns from', async () => {
      const fake = new FakeClock();
      const clock = resolveClock(fake, 'test');
      const controller = new StandInController(1);
      const admission = new Admission({
        clock,
        controller,
        queueing: { initialFactor: 2, maxFactor: 3 },
        queueOrder: 'fifo',
        random: () => 0.5,
      });
      const p: CallPlan = {
        clock,
        breaker: undefined,
        limiter: admission,
        bulkhead: undefined,
        timeout: undefined,
        classify: undefined,
        observation: undefined,
        observationInUse: false,
      };
      const first = deferred<string>();
      const running = runCall(p, () => first.promise, { timeoutMs: 1_000 });
      const second = deferred<string>();
      const queued = runCall(p, () => second.promise, { timeoutMs: 1_000 });
      fake.advance(30);
      first.resolve('a');
      await running;
      await flush(10);
      fake.advance(20);
      second.resolve('b');
      await queued;
      expect(controller.observed.map((o) => [o.observation.queuedMs, o.observation.latencyMs, o.now])).toEqual([
        [0, 30, 30],
        [30, 20, 50],
      ]);
    });
  });
});
