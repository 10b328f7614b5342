import { afterEach, describe, expect, it, vi } from 'vitest';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { CallFn, ExecuteOptions, Executor } from '../../src/core/call';
import { isResilixError, isTimeoutError } from '../../src/errors/index';
import { pipeline } from '../../src/pipeline/pipeline';
import { KeyRegistry, type KeyEvictionEvent } from '../../src/registry/key-registry';
import { TooManyKeysError, isTooManyKeysError } from '../../src/registry/too-many-keys-error';
import { timeout } from '../../src/timeout/timeout';
import { FakeClock, deferred, flush } from '../helpers/fake-clock';

/** A value that reports nothing about its calls: only the registry's own counter sees them. */
const silent = () => pipeline(timeout({ timeoutMs: Infinity }));

/** An executor whose counters a test sets by hand, as a limiter would expose them. */
class CountingExecutor implements Executor {
  inflight = 0;
  queued = 0;
  execute<T>(fn: CallFn<T>, _options?: ExecuteOptions): Promise<T> {
    return Promise.resolve().then(() => fn({ signal: new AbortController().signal, mark() {}, attempt: 1 }));
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('KeyRegistry: one value per key', () => {
  it('makes the value on first use and hands back the same value afterwards', () => {
    const create = vi.fn(() => silent());
    const registry = new KeyRegistry({ create });
    const first = registry.get('https://a.example');
    expect(registry.get('https://a.example')).toBe(first);
    expect(create).toHaveBeenCalledTimes(1);
    expect(create).toHaveBeenCalledWith('https://a.example');
    expect(registry.size).toBe(1);
    expect(registry.has('https://a.example')).toBe(true);
    expect(registry.has('https://b.example')).toBe(false);
  });

  it('runs a call through the key value and returns its result', async () => {
    const registry = new KeyRegistry({ create: () => pipeline(bulkhead({ maxConcurrent: 1 })) });
    await expect(registry.execute('tenant-7', () => 'done')).resolves.toBe('done');
    expect(registry.keys()).toEqual(['tenant-7']);
  });

  it('gives separate keys separate values, so one full bulkhead does not refuse another key', async () => {
    const registry = new KeyRegistry({ create: () => bulkhead({ maxConcurrent: 1 }) });
    const gate = deferred();
    const slow = registry.execute('batch-exports', () => gate.promise);
    await expect(registry.execute('interactive-reads', () => 'fast')).resolves.toBe('fast');
    gate.resolve('exported');
    await expect(slow).resolves.toBe('exported');
  });
});

describe('KeyRegistry: least-recently-used order', () => {
  it('evicts the least recently used key when a new key arrives at the cap', () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 3 });
    registry.get('a');
    registry.get('b');
    registry.get('c');
    registry.get('a');
    registry.get('d');
    expect(registry.keys()).toEqual(['c', 'a', 'd']);
    expect(registry.size).toBe(3);
  });

  it('counts execute as a use', async () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 2 });
    registry.get('a');
    registry.get('b');
    await registry.execute('a', () => 1);
    registry.get('c');
    expect(registry.keys()).toEqual(['a', 'c']);
  });

  it('does not count has, isBusy or keys as a use', () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 2 });
    registry.get('a');
    registry.get('b');
    registry.has('a');
    registry.isBusy('a');
    registry.keys();
    registry.get('c');
    expect(registry.keys()).toEqual(['b', 'c']);
  });

  it('makes a fresh value for a key that was evicted and comes back', () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 1 });
    const first = registry.get('a');
    registry.get('b');
    const second = registry.get('a');
    expect(second).not.toBe(first);
    expect(registry.keys()).toEqual(['a']);
    expect(registry.snapshot()).toMatchObject({ created: 3, evictions: 2 });
  });
});

describe('KeyRegistry: a key with calls in flight is never evicted', () => {
  it('skips a key whose registry.execute call has not settled, even when its value reports nothing', async () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 2 });
    const gate = deferred();
    const call = registry.execute('a', () => gate.promise);
    const valueOfA = registry.get('a');
    registry.get('b');
    registry.get('c');
    expect(registry.keys()).toEqual(['a', 'c']);
    expect(registry.get('a')).toBe(valueOfA);
    gate.resolve('ok');
    await call;
  });

  it('moves a busy key the scan passes to the most recent end, and evicts the next idle one', () => {
    const registry = new KeyRegistry({ create: () => bulkhead({ maxConcurrent: 5 }), maxKeys: 3 });
    const gate = deferred();
    void registry.get('a').execute(() => gate.promise);
    registry.get('b');
    registry.get('c');
    registry.get('d');
    expect(registry.keys()).toEqual(['c', 'a', 'd']);
    gate.resolve(undefined);
  });

  it('releases the key once the call settles, whether it resolves, rejects or throws synchronously', async () => {
    const registry = new KeyRegistry({ create: silent });
    const gate = deferred();
    const running = registry.execute('a', () => gate.promise);
    expect(registry.isBusy('a')).toBe(true);
    gate.resolve(1);
    await running;
    expect(registry.isBusy('a')).toBe(false);

    await expect(registry.execute('a', () => Promise.reject(new Error('upstream 500')))).rejects.toThrow(
      'upstream 500',
    );
    expect(registry.isBusy('a')).toBe(false);
    await expect(
      registry.execute('a', () => {
        throw new Error('sync');
      }),
    ).rejects.toThrow('sync');
    expect(registry.isBusy('a')).toBe(false);
  });

  it('releases the key when the value itself throws instead of returning a promise', async () => {
    const broken: Executor = {
      execute: () => {
        throw new Error('broken executor');
      },
    };
    const registry = new KeyRegistry({ create: () => broken });
    await expect(registry.execute('a', () => 1)).rejects.toThrow('broken executor');
    expect(registry.isBusy('a')).toBe(false);
  });

  it('sees calls that bypass the registry through the bulkhead active count', async () => {
    const registry = new KeyRegistry({ create: () => pipeline(bulkhead({ maxConcurrent: 4 })), maxKeys: 1 });
    const gate = deferred();
    const direct = registry.get('a').execute(() => gate.promise);
    expect(registry.isBusy('a')).toBe(true);
    expect(() => registry.get('b')).toThrow(TooManyKeysError);
    gate.resolve('ok');
    await direct;
    await flush();
    expect(registry.isBusy('a')).toBe(false);
    registry.get('b');
    expect(registry.keys()).toEqual(['b']);
  });

  it.each([
    ['inflight', { inflight: 1, queued: 0 }],
    ['queued', { inflight: 0, queued: 3 }],
  ])('treats a value reporting %s above 0 as busy', (_name, counters) => {
    const registry = new KeyRegistry({ create: () => Object.assign(new CountingExecutor(), counters), maxKeys: 1 });
    registry.get('a');
    expect(registry.isBusy('a')).toBe(true);
    expect(() => registry.get('b')).toThrow(TooManyKeysError);
  });

  it('keeps a timed-out key busy while the work still holds its bulkhead slot', async () => {
    const clock = new FakeClock();
    const registry = new KeyRegistry({
      create: () => pipeline(bulkhead({ maxConcurrent: 2, clock }), timeout({ timeoutMs: 100, clock })),
      maxKeys: 1,
    });
    const work = deferred();
    const call = registry.execute('a', () => work.promise);
    const caught = call.catch((e: unknown) => e);
    clock.advance(100);
    expect(isTimeoutError(await caught)).toBe(true);
    expect(registry.isBusy('a')).toBe(true);
    expect(() => registry.get('b')).toThrow(TooManyKeysError);
    work.resolve('late');
    await flush();
    expect(registry.isBusy('a')).toBe(false);
  });
});

describe('KeyRegistry: full and every key busy', () => {
  it('refuses a new key with TooManyKeysError, without calling create or disturbing the held keys', () => {
    const create = vi.fn(() => bulkhead({ maxConcurrent: 1 }));
    const registry = new KeyRegistry({ create, maxKeys: 2 });
    const gates = [deferred(), deferred()];
    void registry.get('a').execute(() => gates[0]!.promise);
    void registry.get('b').execute(() => gates[1]!.promise);
    const error = (() => {
      try {
        registry.get('c');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(isTooManyKeysError(error)).toBe(true);
    expect(error).toMatchObject({ maxKeys: 2, key: 'c', code: 'ERR_RESILIX_TOO_MANY_KEYS', retryAfterMs: undefined });
    expect(create).toHaveBeenCalledTimes(2);
    expect(registry.keys()).toEqual(['a', 'b']);
    expect(registry.snapshot()).toEqual({
      kind: 'registry',
      size: 2,
      maxKeys: 2,
      busy: 2,
      created: 2,
      evictions: 0,
      overflows: 1,
    });
  });

  it('rejects registry.execute with the error instead of throwing, and never runs the call', async () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 1 });
    const gate = deferred();
    void registry.execute('a', () => gate.promise);
    const fn = vi.fn(() => 'never');
    const result = registry.execute('b', fn);
    await expect(result).rejects.toBeInstanceOf(TooManyKeysError);
    expect(fn).not.toHaveBeenCalled();
    gate.resolve(undefined);
  });

  it('admits the new key as soon as one held key goes idle', async () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 2 });
    const gates = [deferred(), deferred()];
    const calls = [registry.execute('a', () => gates[0]!.promise), registry.execute('b', () => gates[1]!.promise)];
    await expect(registry.execute('c', () => 1)).rejects.toBeInstanceOf(TooManyKeysError);
    gates[1]!.resolve('b done');
    await calls[1];
    await expect(registry.execute('c', () => 'c ran')).resolves.toBe('c ran');
    expect(registry.keys()).toEqual(['a', 'c']);
    gates[0]!.resolve('a done');
    await calls[0];
  });

  it('refuses without probing any value when every key is running a registry call', async () => {
    let probes = 0;
    class Probed implements Executor {
      get inflight(): number {
        probes++;
        return 0;
      }
      execute<T>(fn: CallFn<T>): Promise<T> {
        return new CountingExecutor().execute(fn);
      }
    }
    const registry = new KeyRegistry({ create: () => new Probed(), maxKeys: 3 });
    const gates = [deferred(), deferred(), deferred()];
    const calls = ['a', 'b', 'c'].map((k, i) => registry.execute(k, () => gates[i]!.promise));
    await expect(registry.execute('d', () => 1)).rejects.toBeInstanceOf(TooManyKeysError);
    expect(probes).toBe(0);
    for (const g of gates) g.resolve(undefined);
    await Promise.all(calls);
    registry.get('d');
    expect(probes).toBeGreaterThan(0);
  });

  it('sends new keys to the overflow executor when one is given, without holding them', async () => {
    const overflow = pipeline(bulkhead({ maxConcurrent: 10 }));
    const registry = new KeyRegistry({ create: silent, maxKeys: 1, overflow });
    const gate = deferred();
    void registry.execute('a', () => gate.promise);
    expect(registry.get('b')).toBe(overflow);
    await expect(registry.execute('c', () => 'via overflow')).resolves.toBe('via overflow');
    expect(registry.has('b')).toBe(false);
    expect(registry.keys()).toEqual(['a']);
    expect(registry.snapshot()).toMatchObject({ size: 1, overflows: 2, created: 1 });
    expect(overflow.snapshot().policies[0]).toMatchObject({ active: 0 });
    gate.resolve(undefined);
  });
});

describe('KeyRegistry: create', () => {
  it('passes an error from create to the caller and leaves no entry and no eviction behind', async () => {
    let fail = false;
    const registry = new KeyRegistry({
      create: (key) => {
        if (fail) throw new Error(`no config for ${key}`);
        return silent();
      },
      maxKeys: 1,
    });
    registry.get('a');
    fail = true;
    expect(() => registry.get('b')).toThrow('no config for b');
    await expect(registry.execute('c', () => 1)).rejects.toThrow('no config for c');
    expect(registry.keys()).toEqual(['a']);
    expect(registry.snapshot()).toMatchObject({ size: 1, created: 1, evictions: 0 });
  });

  it('refuses a create that returns something without execute()', () => {
    const registry = new KeyRegistry({ create: () => ({}) as Executor });
    expect(() => registry.get('a')).toThrow(
      /^resilix: KeyRegistry create\("a"\) must give a pipeline or policy .*received object/,
    );
    expect(registry.size).toBe(0);
  });

  it('refuses a create that calls back into its own registry for a new key', () => {
    const registry: KeyRegistry = new KeyRegistry({
      create: (key) => (key === 'outer' ? registry.get('inner') : silent()),
    });
    expect(() => registry.get('outer')).toThrow(/create\(\) called get\(\) on its own registry/);
    expect(registry.size).toBe(0);
    // The refused key left nothing behind: the inner key is created on its own, once.
    const inner = registry.get('inner');
    expect(registry.size).toBe(1);
    expect(registry.get('inner')).toBe(inner);
  });

  it('refuses a create that calls get or execute for a key it holds, which would make the key it evicts busy', async () => {
    const registry: KeyRegistry<Executor> = new KeyRegistry<Executor>({
      maxKeys: 1,
      create: (key) => {
        if (key === 'b') {
          expect(() => registry.get('a')).toThrow(/create\(\) called get\(\) on its own registry/);
          void expect(registry.execute('a', () => 1)).rejects.toThrow(/create\(\) called get\(\) on its own registry/);
        }
        return silent();
      },
    });
    registry.get('a');
    registry.get('b');
    await flush();
    expect(registry.keys()).toEqual(['b']);
    expect(registry.snapshot()).toMatchObject({ size: 1, busy: 0, evictions: 1 });
  });

  it('does not evict a key that create made busy through a value it held, and picks another', () => {
    const held = new CountingExecutor();
    const registry = new KeyRegistry<Executor>({
      maxKeys: 2,
      create: (key) => {
        if (key === 'c') held.inflight = 1; // a call started on the value of 'a', not through the registry
        return key === 'a' ? held : silent();
      },
    });
    registry.get('a');
    registry.get('b');
    registry.get('c');
    expect(registry.keys()).toEqual(['a', 'c']);
    held.inflight = 0;
  });

  it('refuses the new key, as when full, when create made the only idle key busy; the value made is not counted', () => {
    const held = new CountingExecutor();
    const registry = new KeyRegistry<Executor>({
      maxKeys: 1,
      create: (key) => {
        if (key === 'b') held.inflight = 1;
        return key === 'a' ? held : silent();
      },
    });
    registry.get('a');
    expect(() => registry.get('b')).toThrow(TooManyKeysError);
    expect(registry.keys()).toEqual(['a']);
    expect(registry.snapshot()).toMatchObject({ size: 1, created: 1, evictions: 0, overflows: 1 });
  });

  it('refuses a key that is not a string', () => {
    const registry = new KeyRegistry({ create: silent });
    expect(() => registry.get(42 as never)).toThrow('resilix: a KeyRegistry key must be a string; received number');
  });
});

describe('KeyRegistry: delete', () => {
  it('removes an idle key and reports it to onEvict', () => {
    const registry = new KeyRegistry({ create: silent });
    const value = registry.get('a');
    const events: Array<KeyEvictionEvent<Executor>> = [];
    registry.onEvict((e) => events.push(e));
    expect(registry.delete('a')).toBe(true);
    expect(registry.has('a')).toBe(false);
    expect(events).toEqual([{ key: 'a', value, reason: 'delete' }]);
    expect(registry.snapshot().evictions).toBe(0);
  });

  it('refuses a busy key and keeps it until its calls settle', async () => {
    const registry = new KeyRegistry({ create: silent });
    const gate = deferred();
    const call = registry.execute('a', () => gate.promise);
    expect(registry.delete('a')).toBe(false);
    expect(registry.has('a')).toBe(true);
    gate.resolve(undefined);
    await call;
    expect(registry.delete('a')).toBe(true);
  });

  it('returns false for a key it does not hold', () => {
    const registry = new KeyRegistry({ create: silent });
    expect(registry.delete('never-seen')).toBe(false);
  });
});

describe('KeyRegistry: options', () => {
  it('holds 1000 keys by default (spec §9.4)', () => {
    const registry = new KeyRegistry({ create: silent });
    expect(registry.maxKeys).toBe(1000);
    expect(registry.snapshot().maxKeys).toBe(1000);
  });

  it.each([
    [0, RangeError, 'must be an integer in [1, Infinity); received 0'],
    [2.5, RangeError, 'must be an integer in [1, Infinity); received 2.5'],
    [Infinity, RangeError, 'must be an integer in [1, Infinity); received Infinity'],
    ['100', TypeError, 'must be an integer in [1, Infinity); received "100"'],
  ])('refuses maxKeys %s', (maxKeys, type, message) => {
    expect(() => new KeyRegistry({ create: silent, maxKeys: maxKeys as number })).toThrow(type);
    expect(() => new KeyRegistry({ create: silent, maxKeys: maxKeys as number })).toThrow(
      `resilix: KeyRegistry option "maxKeys" ${message}`,
    );
  });

  it('requires create and a real overflow executor', () => {
    expect(() => new KeyRegistry({} as never)).toThrow('KeyRegistry option "create" must be a function');
    expect(() => new KeyRegistry({ create: 'nope' } as never)).toThrow('received "nope"');
    expect(() => new KeyRegistry({ create: silent, overflow: {} as Executor })).toThrow(
      /option "overflow" must give a pipeline or policy/,
    );
    expect(() => new KeyRegistry(null as never)).toThrow('KeyRegistry options must be an object; received null');
  });

  it('names itself in its errors as users construct it: KeyRegistry, not keyRegistry', () => {
    expect(() => new KeyRegistry({ create: silent, maxkeys: 10 } as never)).toThrow(
      /^resilix: KeyRegistry has no option "maxkeys"/,
    );
    expect(() => new KeyRegistry({ create: silent, overflow: 1 as never })).toThrow(
      /^resilix: KeyRegistry option "overflow" must give a pipeline or policy/,
    );
  });
});

describe('KeyRegistry: telemetry', () => {
  it('reports size, cap, busy keys, creations, evictions and overflows', async () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 2 });
    const gate = deferred();
    const call = registry.execute('a', () => gate.promise);
    registry.get('b');
    registry.get('c');
    registry.get('d');
    expect(registry.snapshot()).toEqual({
      kind: 'registry',
      size: 2,
      maxKeys: 2,
      busy: 1,
      created: 4,
      evictions: 2,
      overflows: 0,
    });
    gate.resolve(undefined);
    await call;
    expect(registry.snapshot().busy).toBe(0);
  });

  it('tells onEvict listeners which key left for room, until they dispose', () => {
    const registry = new KeyRegistry({ create: silent, maxKeys: 1 });
    const valueOfA = registry.get('a');
    const events: Array<KeyEvictionEvent<Executor>> = [];
    const subscription = registry.onEvict((e) => events.push(e));
    registry.get('b');
    subscription.dispose();
    registry.get('c');
    expect(events).toEqual([{ key: 'a', value: valueOfA, reason: 'capacity' }]);
  });

  it('lets a listener read the registry, and isolates a listener that throws', () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const registry = new KeyRegistry({ create: silent, maxKeys: 1 });
    const seen: string[][] = [];
    registry.onEvict(() => {
      throw new Error('metrics sink down');
    });
    registry.onEvict(() => seen.push(registry.keys()));
    registry.get('a');
    expect(() => registry.get('b')).not.toThrow();
    expect(seen).toEqual([['b']]);
  });
});

describe('TooManyKeysError', () => {
  it('has a name, a stable code, a guard, and names the cap and the key', () => {
    const error = new TooManyKeysError({ maxKeys: 1000, key: 'https://api.example.com' });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('TooManyKeysError');
    expect(error.code).toBe('ERR_RESILIX_TOO_MANY_KEYS');
    expect(isTooManyKeysError(error)).toBe(true);
    expect(isResilixError(error)).toBe(true);
    expect(isTooManyKeysError(new Error('too many keys'))).toBe(false);
    expect(error.message).toBe(
      'resilix: the key registry is full (all 1000 keys have calls in flight or queued), so no pipeline was made ' +
        'for key "https://api.example.com" and the call was not made; raise maxKeys or give the registry an overflow policy',
    );
  });

  it('cuts a long key in its message but keeps it whole on the error', () => {
    const key = 'k'.repeat(300);
    const error = new TooManyKeysError({ maxKeys: 5, key });
    expect(error.message).toContain(`"${'k'.repeat(100)}..."`);
    expect(error.key).toBe(key);
  });
});
