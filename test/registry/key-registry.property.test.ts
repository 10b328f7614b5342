import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { Executor } from '../../src/core/call';
import { pipeline } from '../../src/pipeline/pipeline';
import { KeyRegistry } from '../../src/registry/key-registry';
import { isTooManyKeysError } from '../../src/registry/too-many-keys-error';
import { timeout } from '../../src/timeout/timeout';
import { deferred, flush } from '../helpers/fake-clock';

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'] as const;

type Op =
  | { op: 'get'; key: number }
  | { op: 'execute'; key: number }
  | { op: 'direct'; key: number }
  | { op: 'settle'; index: number; fail: boolean }
  | { op: 'delete'; key: number };

const key = fc.integer({ min: 0, max: KEYS.length - 1 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('get' as const), key }),
  fc.record({ op: fc.constant('execute' as const), key }),
  fc.record({ op: fc.constant('direct' as const), key }),
  fc.record({ op: fc.constant('settle' as const), index: fc.nat(), fail: fc.boolean() }),
  fc.record({ op: fc.constant('settle' as const), index: fc.nat(), fail: fc.boolean() }),
  fc.record({ op: fc.constant('delete' as const), key }),
);

/** What the model knows about one value the registry made. */
interface ValueModel {
  key: string;
  /** Bulkhead-backed values report `active`; the others report nothing. */
  reports: boolean;
  /** Calls started through registry.execute and not settled. */
  counted: number;
  /** Every call on this value not settled, counted or direct. */
  running: number;
}

interface Pending {
  value: ValueModel | undefined;
  counted: boolean;
  settle: (fail: boolean) => void;
}

/**
 * A reference model of the registry: an array in LRU order, oldest first, with the documented
 * eviction scan (a busy key passed counts as just used; the first idle key goes).
 */
class Model {
  order: string[] = [];
  values = new Map<string, ValueModel>();
  evictions = 0;
  overflows = 0;
  created = 0;

  constructor(readonly maxKeys: number) {}

  isBusy(v: ValueModel): boolean {
    return v.counted > 0 || (v.reports && v.running > 0);
  }

  /** 'hit' | 'created' | 'full' (refused or overflow). */
  access(k: string): 'hit' | 'created' | 'full' {
    const at = this.order.indexOf(k);
    if (at >= 0) {
      this.order.splice(at, 1);
      this.order.push(k);
      return 'hit';
    }
    if (this.order.length >= this.maxKeys) {
      let victim: string | undefined;
      for (let n = this.order.length; n > 0; n--) {
        const oldest = this.order[0]!;
        if (!this.isBusy(this.values.get(oldest)!)) {
          victim = oldest;
          break;
        }
        this.order.push(this.order.shift()!);
      }
      if (victim === undefined) {
        this.overflows++;
        return 'full';
      }
      this.order.shift();
      this.values.delete(victim);
      this.evictions++;
    }
    this.order.push(k);
    this.created++;
    return 'created';
  }
}

describe('KeyRegistry under random get / execute / settle / delete sequences', () => {
  it('never holds more than maxKeys, never evicts a busy key, and evicts in exactly LRU-idle order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 4 }),
        fc.boolean(),
        fc.array(op, { minLength: 1, maxLength: 60 }),
        async (maxKeys, withOverflow, ops) => {
          const model = new Model(maxKeys);
          const byValue = new Map<Executor, ValueModel>();
          const overflow = pipeline(bulkhead({ maxConcurrent: Infinity }));
          const registry = new KeyRegistry<Executor>({
            maxKeys,
            ...(withOverflow ? { overflow } : {}),
            create: (k) => {
              const reports = Number(k.slice(1)) % 2 === 0;
              const value = reports
                ? pipeline(bulkhead({ maxConcurrent: Infinity }))
                : pipeline(timeout({ timeoutMs: Infinity }));
              const v: ValueModel = { key: k, reports, counted: 0, running: 0 };
              byValue.set(value, v);
              model.values.set(k, v);
              return value;
            },
          });
          const busyEvictions: string[] = [];
          registry.onEvict(({ key: k, value }) => {
            const v = byValue.get(value)!;
            if (model.isBusy(v)) busyEvictions.push(k);
          });
          const pending: Pending[] = [];

          /** Starts a call; `readValue` is read after the registry ran (and maybe created) the key. */
          const start = (
            readValue: () => ValueModel | undefined,
            counted: boolean,
            run: (fn: () => Promise<unknown>) => Promise<unknown>,
          ) => {
            const gate = deferred();
            run(() => gate.promise).catch(() => {});
            const v = readValue();
            if (v !== undefined) {
              v.running++;
              if (counted) v.counted++;
            }
            pending.push({
              value: v,
              counted,
              settle: (fail) => (fail ? gate.reject(new Error('upstream failed')) : gate.resolve('ok')),
            });
          };

          for (const step of ops) {
            if (step.op === 'settle') {
              if (pending.length === 0) continue;
              const [call] = pending.splice(step.index % pending.length, 1);
              call!.settle(step.fail);
              await flush(10);
              if (call!.value !== undefined) {
                call!.value.running--;
                if (call!.counted) call!.value.counted--;
              }
            } else if (step.op === 'delete') {
              const k = KEYS[step.key]!;
              const v = model.values.get(k);
              const expected = v !== undefined && !model.isBusy(v);
              expect(registry.delete(k)).toBe(expected);
              if (expected) {
                model.order.splice(model.order.indexOf(k), 1);
                model.values.delete(k);
              }
            } else {
              const k = KEYS[step.key]!;
              const before = model.values.get(k);
              const outcome = model.access(k);
              if (step.op === 'execute') {
                if (outcome === 'full' && !withOverflow) {
                  await expect(registry.execute(k, () => 'never')).rejects.toSatisfy(isTooManyKeysError);
                } else {
                  start(
                    () => (outcome === 'full' ? undefined : model.values.get(k)),
                    true,
                    (fn) => registry.execute(k, fn),
                  );
                }
              } else {
                let got: Executor | undefined;
                try {
                  got = registry.get(k);
                } catch (error) {
                  expect(outcome === 'full' && !withOverflow && isTooManyKeysError(error)).toBe(true);
                }
                if (outcome === 'full') {
                  expect(got).toBe(withOverflow ? overflow : undefined);
                } else {
                  expect(byValue.get(got!)).toBe(model.values.get(k));
                  if (outcome === 'hit') expect(model.values.get(k)).toBe(before);
                }
                if (step.op === 'direct' && got !== undefined) {
                  start(
                    () => (outcome === 'full' ? undefined : model.values.get(k)),
                    false,
                    (fn) => got!.execute(fn),
                  );
                }
              }
            }
            expect(registry.size).toBeLessThanOrEqual(maxKeys);
            expect(registry.keys()).toEqual(model.order);
            expect(busyEvictions).toEqual([]);
            for (const call of pending) {
              if (call.value !== undefined && model.isBusy(call.value)) {
                expect(registry.has(call.value.key)).toBe(true);
                expect(registry.isBusy(call.value.key)).toBe(true);
              }
            }
            expect(registry.snapshot()).toMatchObject({
              size: model.order.length,
              evictions: model.evictions,
              overflows: model.overflows,
              created: model.created,
            });
          }
          for (const call of pending) call.settle(false);
          await flush(10);
          expect(registry.snapshot().busy).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
