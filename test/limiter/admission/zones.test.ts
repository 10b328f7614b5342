import { describe, expect, it } from 'vitest';
import { isLimitExceededError } from '../../../src/errors/limit-exceeded-error';
import { enqueue, fill, harness } from './support/admission-harness';
import { flush } from '../../helpers/fake-clock';

/** A harness whose coin the test sets; `queueTo(n)` fills running + waiting to n with a coin that never sheds. */
function scripted(limit: number, queueing?: { initialFactor: number; maxFactor: number }) {
  const coinState = { value: 0.999_999, asked: 0 };
  const h = harness({
    limit,
    ...(queueing === undefined ? {} : { queueing }),
    random: () => {
      coinState.asked++;
      return coinState.value;
    },
  });
  const queueTo = (n: number): void => {
    const saved = coinState.value;
    coinState.value = 0.999_999_999;
    fill(h.admission, Math.min(n, limit) - h.admission.inflight);
    while (h.admission.inflight + h.admission.queued < n) enqueue(h.admission);
    coinState.value = saved;
  };
  return { ...h, coin: coinState, queueTo };
}

describe('the factor diagram (limit 10, initialFactor 2, maxFactor 3)', () => {
  it('runs a call at once while fewer than 10 are running', async () => {
    const { admission } = harness({ limit: 10 });
    fill(admission, 9);
    const call = enqueue(admission);
    await flush();
    expect(call.outcome.status).toBe('admitted');
    expect(admission.inflight).toBe(10);
    expect(admission.queued).toBe(0);
  });

  it('queues without any rejection while running plus waiting is below 20, and never asks the coin', async () => {
    const { admission, coin } = scripted(10);
    coin.value = 0;
    fill(admission, 10);
    const calls = Array.from({ length: 10 }, () => enqueue(admission));
    await flush();
    expect(admission.queued).toBe(10);
    expect(calls.every((call) => call.outcome.status === 'pending')).toBe(true);
    expect(coin.asked).toBe(0);
  });

  it('sheds between 20 and 30 with a probability rising linearly from 0 to 1', async () => {
    const { admission, coin, queueTo } = scripted(10);
    queueTo(25);
    coin.value = 0.4999;
    const shed = enqueue(admission);
    await flush();
    expect(shed.outcome.status).toBe('refused');
    expect(isLimitExceededError((shed.outcome as { error: unknown }).error)).toBe(true);
    expect(admission.queued).toBe(15);
    coin.value = 0.5;
    const queued = enqueue(admission);
    await flush();
    expect(queued.outcome.status).toBe('pending');
    expect(admission.queued).toBe(16);
  });

  it.each([
    [20, 0.0],
    [22, 0.2],
    [25, 0.5],
    [28, 0.8],
    [29, 0.9],
  ])('at n = %i the rejection probability is exactly %f', async (n, p) => {
    const outcomes: string[] = [];
    for (const draw of p === 0 ? [0] : [p - 1e-9, p]) {
      const { admission, coin, queueTo } = scripted(10);
      queueTo(n);
      expect(admission.inflight + admission.queued).toBe(n);
      coin.value = draw;
      const call = enqueue(admission);
      await flush();
      outcomes.push(call.outcome.status);
    }
    // a draw below p sheds, a draw at p queues (the coin is in [0, 1): at p = 0 nothing is shed)
    expect(outcomes).toEqual(p === 0 ? ['pending'] : ['refused', 'pending']);
  });

  it('sheds every call from 30 on, even with a coin that never rejects, and without asking it', async () => {
    const { admission, coin, queueTo } = scripted(10);
    queueTo(30);
    coin.asked = 0;
    const calls = Array.from({ length: 5 }, () => enqueue(admission));
    await flush();
    expect(calls.map((c) => c.outcome.status)).toEqual(['refused', 'refused', 'refused', 'refused', 'refused']);
    expect(coin.asked).toBe(0);
    expect(admission.queued).toBe(20);
    expect(admission.counters().shed).toBe(5);
  });

  it('rejects at the limit when queueing is off', async () => {
    const { admission } = harness({ limit: 10, queueing: false });
    fill(admission, 10);
    const call = enqueue(admission, { deadlineAt: 1_000, timeoutMs: 1_000 });
    await flush();
    expect(call.outcome.status).toBe('refused');
    expect(isLimitExceededError((call.outcome as { error: unknown }).error)).toBe(true);
    expect(admission.queued).toBe(0);
  });

  it('applies other factors the same way: limit 4 with (1.5, 2.5) queues to 6, sheds gradually to 10', async () => {
    const { admission, coin, queueTo } = scripted(4, { initialFactor: 1.5, maxFactor: 2.5 });
    // n = 6 = 1.5 x 4: p = 0
    queueTo(6);
    coin.value = 0;
    expect((await settleOf(enqueue(admission))).status).toBe('pending');
    // n = 8: p = (8 - 6) / (10 - 6) = 0.5
    queueTo(8);
    coin.value = 0.49;
    expect((await settleOf(enqueue(admission))).status).toBe('refused');
    coin.value = 0.5;
    expect((await settleOf(enqueue(admission))).status).toBe('pending');
    // n = 10 = 2.5 x 4: everything is shed
    queueTo(10);
    coin.value = 0.999_999_999;
    expect((await settleOf(enqueue(admission))).status).toBe('refused');
    expect(admission.queued).toBe(6);
  });

  it('moves the zone boundaries with the limit', async () => {
    const { admission, coin, queueTo } = scripted(10);
    queueTo(25);
    // n = 25 is in the gradual zone of limit 10 (p = 0.5)...
    coin.value = 0.3;
    expect((await settleOf(enqueue(admission))).status).toBe('refused');
    // ...and in the no-rejection zone of limit 13 (2 x 13 = 26): the resize admits 3, n stays 25
    admission.resize(13);
    await flush();
    expect(admission.inflight).toBe(13);
    expect(admission.queued).toBe(12);
    expect((await settleOf(enqueue(admission))).status).toBe('pending');
  });
});

async function settleOf(call: { outcome: { status: string } }): Promise<{ status: string }> {
  await flush();
  return call.outcome;
}

describe("failsafe-go's queue depth: its (2, 3) counts waiters, ours counts running plus waiting (adr/0008)", () => {
  it('lets 20 calls wait behind a full limit of 10 without asking the coin with (3, 4), as failsafe-go (2, 3) does', async () => {
    const { admission, coin } = scripted(10, { initialFactor: 3, maxFactor: 4 });
    coin.value = 0;
    fill(admission, 10);
    const calls = Array.from({ length: 20 }, () => enqueue(admission));
    await flush();
    expect(admission.queued).toBe(20);
    expect(calls.every((call) => call.outcome.status === 'pending')).toBe(true);
    expect(coin.asked).toBe(0);
  });

  it('sheds every call from 30 waiters with (3, 4), as failsafe-go (2, 3) does', async () => {
    const { admission, coin, queueTo } = scripted(10, { initialFactor: 3, maxFactor: 4 });
    queueTo(40);
    coin.asked = 0;
    const shed = enqueue(admission);
    await flush();
    expect(shed.outcome.status).toBe('refused');
    expect(admission.queued).toBe(30);
    expect(coin.asked).toBe(0);
  });

  it('lets only 10 wait behind a full limit of 10 before the coin is asked with the default (2, 3)', async () => {
    const { admission, coin } = scripted(10);
    coin.value = 0; // a coin that sheds whenever it is asked
    fill(admission, 10);
    const calls = Array.from({ length: 11 }, () => enqueue(admission));
    await flush();
    expect(calls.slice(0, 10).every((call) => call.outcome.status === 'pending')).toBe(true);
    expect(coin.asked).toBe(1);
  });
});
