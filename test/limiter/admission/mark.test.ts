import { describe, expect, it } from 'vitest';
import { limiterWithController } from '../../../src/internal';
import { FakeClock, deferred, flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';
import { StandInController } from './support/stand-in-controller';

/**
 * The mark path (adr/0045): a stream reports its latency at its first token (`ctx.mark()` ->
 * `permit.mark` -> admission -> `controller.observeMark`) and keeps its slot until it settles; the
 * settle then says `marked`, so the controller does not count the latency twice.
 */
describe('permit.mark: the latency before the settle', () => {
  it('gives the controller the latency at the mark, with the in-flight counts now and at its admission, and keeps the slot', () => {
    const { admission, controller, clock } = harness({ limit: 5 });
    const permits = fill(admission, 3);
    clock.advance(40);
    permits[1]!.mark!(40);
    // The second of three permits: admitted as the 2nd in flight, marking with 3 out (adr/0127).
    expect(controller.marks).toEqual([{ latencyMs: 40, now: 40, inflight: 3, admitted: 2 }]);
    expect(controller.observed).toEqual([]);
    expect(admission.inflight).toBe(3);
  });

  it('settles a marked permit with marked = true, once, and a plain one with marked = false', () => {
    const { admission, controller, clock } = harness({ limit: 5 });
    const [streamed, plain] = fill(admission, 2);
    clock.advance(40);
    streamed!.mark!(40);
    clock.advance(300);
    streamed!.settle({ verdict: 'ok', latencyMs: 40, durationMs: 340 });
    plain!.settle(OK);
    expect(controller.observed.map((o) => [o.observation.latencyMs, o.observation.durationMs, o.marked])).toEqual([
      [40, 340, true],
      [10, undefined, false],
    ]);
  });

  it('counts the first mark only, and none after the settle', () => {
    const { admission, controller } = harness({ limit: 5 });
    const [permit] = fill(admission, 1);
    permit!.mark!(40, 40);
    permit!.mark!(90, 90);
    permit!.settle(OK, 100);
    permit!.mark!(120, 120);
    expect(controller.marks.map((m) => m.latencyMs)).toEqual([40]);
  });

  it('does not carry the mark to the next holder of the pooled permit', () => {
    const { admission, controller } = harness({ limit: 1 });
    const [first] = fill(admission, 1);
    first!.mark!(40, 40);
    first!.settle(OK, 100);
    const [second] = fill(admission, 1);
    expect(second).toBe(first); // the same pooled object
    second!.settle(OK, 200);
    expect(controller.observed.map((o) => o.marked)).toEqual([true, false]);
  });

  it('admits waiters when the mark moved the limit (a slow start grows at the mark)', async () => {
    const { admission, controller } = harness({ limit: 1 });
    const [permit] = fill(admission, 1);
    const waiter = enqueue(admission);
    controller.observeMark = (latencyMs, now, inflight) => {
      controller.marks.push({ latencyMs, now, inflight });
      return controller.setLimit(2, now);
    };
    permit!.mark!(40, 40);
    await flush();
    expect(waiter.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(2);
  });
});

describe('ctx.mark() through the limiter', () => {
  it('reaches the controller at the mark, and the settle follows with marked = true', async () => {
    const clock = new FakeClock();
    const controller = new StandInController(4);
    const l = limiterWithController({ clock }, controller);
    const body = deferred<string>();
    const result = l.execute(async (ctx) => {
      clock.advance(30);
      ctx.mark(); // the first token
      ctx.mark(); // ignored: the first mark wins
      return body.promise;
    });
    await flush();
    expect(controller.marks).toEqual([{ latencyMs: 30, now: 30, inflight: 1, admitted: 1 }]);
    expect(controller.observed).toEqual([]);
    clock.advance(470);
    body.resolve('done');
    await expect(result).resolves.toBe('done');
    expect(controller.observed).toEqual([
      {
        observation: expect.objectContaining({ verdict: 'ok', latencyMs: 30, durationMs: 500 }),
        now: 500,
        inflight: 1,
        marked: true,
      },
    ]);
  });

  it('settles a call that never marked with marked = false and no mark', async () => {
    const clock = new FakeClock();
    const controller = new StandInController(4);
    const l = limiterWithController({ clock }, controller);
    await l.execute(async () => {
      clock.advance(12);
    });
    expect(controller.marks).toEqual([]);
    expect(controller.observed[0]).toMatchObject({ marked: false, observation: { latencyMs: 12, durationMs: 12 } });
  });
});
