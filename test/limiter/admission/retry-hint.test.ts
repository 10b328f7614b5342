import { describe, expect, it } from 'vitest';
import type { Permit } from '../../../src/core/ports';
import { isLimitExceededError, type LimitExceededError } from '../../../src/errors/limit-exceeded-error';
import { flush } from '../../helpers/fake-clock';
import { OK, enqueue, fill, harness } from './support/admission-harness';

/**
 * Limit 10, always full: every `everyMs` one call settles and another takes its slot, `count`
 * times, starting `everyMs` after t = 0.
 */
function churn(h: ReturnType<typeof harness>, running: Permit[], everyMs: number, count: number): void {
  for (let i = 0; i < count; i++) {
    h.clock.advance(everyMs);
    running.shift()!.settle(OK);
    running.push(h.admission.tryAcquire()!);
  }
}

async function shed(h: ReturnType<typeof harness>): Promise<LimitExceededError> {
  // a coin that never sheds fills the queue to 3 x limit; then every arrival is shed
  while (h.admission.inflight + h.admission.queued < 3 * h.admission.limit) enqueue(h.admission);
  const call = enqueue(h.admission);
  await flush();
  if (call.outcome.status !== 'refused' || !isLimitExceededError(call.outcome.error)) throw new Error('not shed');
  return call.outcome.error;
}

describe('the retry hint on a shed call', () => {
  it('is absent before any call has completed: there is no drain rate to estimate from', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    fill(h.admission, 10);
    const error = await shed(h);
    expect(error.retryAfterMs).toBeUndefined();
    expect(error.message).toBe('resilix: the limiter shed the call (10 running and 20 waiting against a limit of 10)');
  });

  it('is the time for the calls ahead to drain at the measured pace: 21 calls at 0.1 per ms is 210 ms', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    // the first settle (t = 10) opens the window; 100 more up to t = 1010 close it: 100 / 1000 ms
    churn(h, running, 10, 101);
    expect(h.admission.counters().drainPerSecond).toBe(100);
    const error = await shed(h);
    // ahead of a new call: 20 waiting + (10 running - limit 10 + 1) = 21
    expect(error.retryAfterMs).toBe(210);
    expect(error.message).toBe(
      'resilix: the limiter shed the call (10 running and 20 waiting against a limit of 10); retry in about 210 ms',
    );
  });

  it('uses the open window before the first one closes', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    // opened at t = 20, 49 completions by t = 510: 0.1 per ms
    churn(h, running, 10, 1);
    churn(h, running, 10, 50);
    expect(h.admission.counters().drainPerSecond).toBeUndefined();
    expect((await shed(h)).retryAfterMs).toBe(210);
  });

  it('follows a slower drain with exponential smoothing (weight 0.5 per window)', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    churn(h, running, 10, 101); // 0.1 per ms
    churn(h, running, 20, 50); // 50 in 1000 ms: 0.05 per ms; smoothed 0.075
    expect(h.admission.counters().drainPerSecond).toBeCloseTo(75, 9);
    expect((await shed(h)).retryAfterMs).toBe(280);
  });

  it('never promises more than a minute', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    churn(h, running, 10_000, 2); // one completion in 10 s
    expect((await shed(h)).retryAfterMs).toBe(60_000);
  });

  it('is carried by gradual rejections too', async () => {
    const h = harness({ limit: 10, random: () => 0 });
    const running = fill(h.admission, 10);
    churn(h, running, 10, 101);
    // n = 10..19 queue without the coin; n = 20 has p = 0, so a 0 draw still queues
    for (let i = 0; i < 11; i++) enqueue(h.admission);
    const call = enqueue(h.admission); // n = 21: p = 0.1, and a 0 draw sheds
    await flush();
    // ahead: 11 waiting + 1 = 12 calls at 0.1 per ms
    expect(call.outcome.status === 'refused' && (call.outcome.error as LimitExceededError).retryAfterMs).toBe(120);
  });
});

// ADR-0042's second addendum: a spell starts at the first shed after a settle (the limiter is full from there) and
// ends at the next settle, or when a slot is given back unused.
describe('the retry hint through a quiet spell: full, and nothing completing', () => {
  it('lengthens with the spell once it outlasts two mean holds of a slot', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    churn(h, running, 10, 101); // 0.1 per ms with 10 running: a slot is held 100 ms on average (Little's law)
    expect((await shed(h)).retryAfterMs).toBe(210); // the spell starts here
    h.clock.advance(200); // two holds: no evidence against the pace yet
    expect((await shed(h)).retryAfterMs).toBe(210);
    h.clock.advance(100); // 300 ms: at most 2 x 10 running / 300 ms, 21 calls x 15 ms
    expect((await shed(h)).retryAfterMs).toBe(315);
    h.clock.advance(700); // 1 s: 0.02 per ms
    expect((await shed(h)).retryAfterMs).toBe(1_050);
    expect(h.admission.counters().drainPerSecond).toBe(20);
    h.clock.advance(60_000);
    expect((await shed(h)).retryAfterMs).toBe(60_000);
  });

  it('says nothing while slots that turn over together are between turns', async () => {
    // 10 calls of exactly 1 s, started together, for 5 rounds: completions come 10 at a time, a second apart
    const h = harness({ limit: 10, random: () => 0.999 });
    let running = fill(h.admission, 10);
    for (let round = 0; round < 5; round++) {
      h.clock.advance(1_000);
      for (const permit of running) permit.settle(OK);
      running = fill(h.admission, 10);
    }
    expect(h.admission.counters().drainPerSecond).toBe(10);
    await shed(h);
    // 21 calls ahead: the turns at +1 s, +2 s and +3 s free them; 900 ms into the first wait that is 2.1 s away
    h.clock.advance(900);
    expect((await shed(h)).retryAfterMs).toBe(2_100);
    h.clock.advance(1_100); // a turn that did not come is two holds: still nothing
    expect((await shed(h)).retryAfterMs).toBe(2_100);
  });

  it('leaves a slow healthy upstream alone: 5 s calls at a limit of 2 see no spell under 10 s', async () => {
    const h = harness({ limit: 2, random: () => 0.999 });
    const running = fill(h.admission, 2);
    churn(h, running, 2_500, 6); // a completion every 2.5 s: 0.4 per s, so a slot is held 5 s
    // 2 running + 4 waiting - 2 + 1 = 5 calls ahead at 0.4 per s
    expect((await shed(h)).retryAfterMs).toBe(12_500);
    h.clock.advance(9_999);
    expect((await shed(h)).retryAfterMs).toBe(12_500);
    h.clock.advance(2_001); // 12 s: at most 2 x 2 running / 12 s
    expect((await shed(h)).retryAfterMs).toBe(15_000);
  });

  it('ends at a settle: the next shed reads the measured pace again', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    churn(h, running, 10, 101); // the open window starts at t = 1010
    await shed(h);
    h.clock.advance(990); // short of closing the window, so the smoothed pace stays 0.1 per ms
    expect((await shed(h)).retryAfterMs).toBe(1_040); // 21 calls at 20 / 990 per ms
    running.shift()!.settle(OK); // the oldest waiter takes the slot
    expect(h.admission.counters().drainPerSecond).toBe(100);
    expect((await shed(h)).retryAfterMs).toBe(210);
  });

  it('ends when the slots are given back unused: a limiter that went idle that way starts afresh', async () => {
    const h = harness({ limit: 1, random: () => 0.999 });
    const running = fill(h.admission, 1);
    churn(h, running, 10, 101); // 0.1 per ms
    const aborters = [new AbortController(), new AbortController(), new AbortController()];
    const a = enqueue(h.admission, { signal: aborters[0]!.signal });
    enqueue(h.admission, { signal: aborters[1]!.signal });
    running[0]!.settle(OK); // handed to a, whose claim has not run
    enqueue(h.admission, { signal: aborters[2]!.signal });
    const first = enqueue(h.admission); // 1 handed + 2 waiting: shed, and the spell starts with only a handed slot held
    for (const aborter of aborters) aborter.abort(new Error('gone')); // each handed slot goes back unused
    await flush();
    expect(first.outcome.status).toBe('refused');
    expect(a.outcome.status).toBe('refused');
    expect([h.admission.inflight, h.admission.queued]).toEqual([0, 0]);
    h.clock.advance(600_000); // idle, with no settle since the spell began
    fill(h.admission, 1);
    enqueue(h.admission);
    enqueue(h.admission);
    const later = enqueue(h.admission);
    await flush();
    // 3 calls ahead at 0.1 per ms; kept, the ten-minute spell had said a minute
    expect(later.outcome.status === 'refused' && (later.outcome.error as LimitExceededError).retryAfterMs).toBe(30);
  });

  it('does not count idle time: a burst after ten idle minutes gets the measured pace', async () => {
    const h = harness({ limit: 10, random: () => 0.999 });
    const running = fill(h.admission, 10);
    churn(h, running, 10, 101);
    for (const permit of running.splice(0)) permit.settle(OK);
    h.clock.advance(600_000);
    expect(h.admission.counters().drainPerSecond).toBe(100);
    fill(h.admission, 10);
    expect((await shed(h)).retryAfterMs).toBe(210);
  });
});
