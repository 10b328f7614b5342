import { describe, expect, it } from 'vitest';
import { limiter, pipeline, retry, timeout, type Pipeline } from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';

/** Microtask turns that pass before `promise` settles, counted against a chain of resolved promises. */
async function turnsUntilSettled(promise: Promise<unknown>): Promise<number> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  let turns = 0;
  while (!settled) {
    await Promise.resolve();
    if (++turns > 100) throw new Error('never settled');
  }
  return turns;
}

const answerAtOnce = () => Promise.resolve('ok');

function pair(withTimeout: boolean): { plain: Pipeline; retried: Pipeline } {
  const clock = new FakeClock();
  const inner = () => (withTimeout ? [limiter({ clock }), timeout({ timeoutMs: 1_000, clock })] : [limiter({ clock })]);
  return {
    plain: pipeline(...inner()),
    retried: pipeline(retry({ clock }), ...inner()),
  };
}

describe('the retry policy on a first attempt that needs no retry (issue 16: one promise hop)', () => {
  it.each([
    ['no deadline', false],
    ['a deadline', true],
  ])('resolves as soon as the same pipeline without retry() does (%s)', async (_name, withTimeout) => {
    const { plain, retried } = pair(withTimeout);
    expect(await turnsUntilSettled(retried.execute(answerAtOnce))).toBe(
      await turnsUntilSettled(plain.execute(answerAtOnce)),
    );
  });

  it('still hands a synchronous result straight back', async () => {
    const { retried } = pair(false);
    await expect(retried.execute(() => 'sync')).resolves.toBe('sync');
  });
});
