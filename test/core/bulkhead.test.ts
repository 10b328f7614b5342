import { describe, expect, it } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { type BulkheadFullError, isBulkheadFullError } from '../../src/errors/index';
import { deferred, flush } from '../helpers/fake-clock';

describe('the bulkhead', () => {
  it('runs calls up to its ceiling and refuses the next at once', async () => {
    const b = bulkhead({ maxConcurrent: 2 });
    const gates = [deferred(), deferred()];
    const running = gates.map((g) => b.execute(() => g.promise));
    const refused = await b.execute(() => 'third').catch((e: unknown) => e);
    expect(isBulkheadFullError(refused)).toBe(true);
    expect((refused as BulkheadFullError).message).toMatch(/2 of 2 in use/);
    expect(b.snapshot()).toEqual({ kind: 'bulkhead', maxConcurrent: 2, active: 2, rejected: 1 });
    gates[0]!.resolve(1);
    await running[0];
    await expect(b.execute(() => 'now fits')).resolves.toBe('now fits');
    gates[1]!.resolve(2);
    await flush();
    expect(b.active).toBe(0);
  });

  it('frees its slot when a call fails or throws synchronously', async () => {
    const b = bulkhead({ maxConcurrent: 1 });
    await expect(b.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    await expect(
      b.execute(() => {
        throw new Error('y');
      }),
    ).rejects.toThrow('y');
    expect(b.active).toBe(0);
  });
});
