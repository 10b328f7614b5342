import type { CallFn, ExecuteOptions, Executor } from '../core/call';
import { EventChannel, type Listener, type Subscription } from '../core/events';
import { functionOption, knownOptions, numberOption, optionsObject } from '../core/options';
import { reportsBusy } from './busy';
import { LruList, LruNode } from './lru';
import { TooManyKeysError } from './too-many-keys-error';

/** The spec's KeyRegistry cap (v0.3 spec §9.4: "KeyRegistry cap of 1 000 keys"). */
const DEFAULT_MAX_KEYS = 1000;

export interface KeyRegistryOptions<V extends Executor> {
  /**
   * Makes the pipeline (or lone policy) for a key the first time the key is used, and again after
   * the key was evicted. Called synchronously; if it throws, the error reaches the caller and the
   * registry is left as it was. It must not call back into the same registry for another key.
   */
  create: (key: string) => V;
  /**
   * The most keys held at once; the least recently used idle key is evicted to make room.
   * Default 1000 (spec §9.4). An integer >= 1; there is no "unbounded", that is what a cap is for.
   */
  maxKeys?: number | undefined;
  /**
   * Where calls go when the registry is full and every key is busy. Absent (the default), such a
   * call fails with `TooManyKeysError`. Given, every key that finds no room shares this one
   * executor until room frees up (ADR-0061).
   */
  overflow?: V | undefined;
}

export interface KeyRegistrySnapshot {
  readonly kind: 'registry';
  readonly size: number;
  readonly maxKeys: number;
  /** Keys with calls in flight or queued right now (counted by a scan: telemetry, not a hot path). */
  readonly busy: number;
  /** Values made by `create` since construction (first use and every re-creation after eviction). */
  readonly created: number;
  /** Idle keys evicted to make room for new ones (not counting `delete`). */
  readonly evictions: number;
  /** New keys that found the registry full and busy: each was refused or sent to `overflow`. */
  readonly overflows: number;
}

export interface KeyEvictionEvent<V> {
  readonly key: string;
  readonly value: V;
  /** `capacity`: evicted as least recently used to make room; `delete`: removed by `delete(key)`. */
  readonly reason: 'capacity' | 'delete';
}

class Entry<V> extends LruNode {
  /** Calls this registry started through `execute` that have not settled yet. */
  calls = 0;

  constructor(
    readonly key: string,
    readonly value: V,
  ) {
    super();
  }
}

/**
 * One pipeline per key (per upstream host, per tenant, per model), capped at `maxKeys`.
 *
 * - A hit costs a Map lookup and a relink; nothing is allocated.
 * - A miss at the cap evicts the least recently used **idle** key. A key is busy while a call the
 *   registry runs for it has not settled, or while its value reports work (`inflight`, `queued`
 *   or `active` above 0 on the value or on any of a pipeline's `policies`). A busy key is never
 *   evicted: its limiter and breaker state would be lost mid-call, and a fresh pipeline for the
 *   same key would admit calls beside the old one's. The scan treats a busy key it passes as just
 *   used, so the next scan starts past it (ADR-0060).
 * - At the cap with every key busy, a new key gets `TooManyKeysError`, or the `overflow` executor
 *   when one was given (ADR-0061).
 * - Eviction happens on access only; the registry owns no timer (ADR-0001).
 */
export class KeyRegistry<V extends Executor = Executor> {
  readonly maxKeys: number;
  private readonly create: (key: string) => V;
  private readonly overflow: V | undefined;
  private readonly entries = new Map<string, Entry<V>>();
  private readonly order = new LruList<Entry<V>>();
  private readonly evicted = new EventChannel<KeyEvictionEvent<V>>();
  private creating = false;
  /** Entries with registry-counted calls in flight: when it equals the size, a full scan is skipped. */
  private countedBusy = 0;
  private createdCount = 0;
  private evictionCount = 0;
  private overflowCount = 0;

  constructor(options: KeyRegistryOptions<V>) {
    const o = optionsObject<KeyRegistryOptions<V>>('KeyRegistry', options);
    knownOptions('KeyRegistry', o, ['create', 'maxKeys', 'overflow']);
    const create = functionOption<(key: string) => V>('KeyRegistry', 'create', o.create);
    if (create === undefined) {
      throw new TypeError(
        'resilix: KeyRegistry option "create" must be a function (key) => pipeline; received undefined',
      );
    }
    this.create = create;
    this.maxKeys = numberOption('KeyRegistry', 'maxKeys', o.maxKeys, DEFAULT_MAX_KEYS, { min: 1, integer: true });
    if (o.overflow !== undefined && !isExecutor(o.overflow)) throw executorError('option "overflow"', o.overflow);
    this.overflow = o.overflow;
  }

  /** Keys held now; never more than `maxKeys`. */
  get size(): number {
    return this.entries.size;
  }

  /** Whether the key is held. Does not count as a use. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /**
   * The value for a key, made by `create` on first use; counts as a use. At the cap with every key
   * busy, throws `TooManyKeysError` (or returns the `overflow` executor when one was given).
   * Calls made on the returned value directly are not counted by the registry: it sees them only
   * if the value reports `inflight`, `queued` or `active` (see `isBusy`).
   */
  get(key: string): V {
    const entry = this.entryFor(key);
    return entry === undefined ? this.overflow! : entry.value;
  }

  /**
   * Runs `fn` through the key's value: `registry.get(key).execute(fn, options)`, except that the
   * key counts as busy until the call settles, however it settles. Never throws synchronously:
   * a refusal (`TooManyKeysError`, a bad key, a throwing `create`) is a rejected promise.
   */
  execute<T>(key: string, fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    let entry: Entry<V> | undefined;
    try {
      entry = this.entryFor(key);
    } catch (error) {
      return Promise.reject(error);
    }
    if (entry === undefined) {
      try {
        return this.overflow!.execute(fn, options);
      } catch (error) {
        return Promise.reject(error);
      }
    }
    if (entry.calls++ === 0) this.countedBusy++;
    let running: Promise<T>;
    try {
      running = entry.value.execute(fn, options);
    } catch (error) {
      this.release(entry);
      return Promise.reject(error);
    }
    // Promise.resolve returns a native promise unchanged; it only wraps a foreign thenable.
    return Promise.resolve(running).then(
      (result) => {
        this.release(entry);
        return result;
      },
      (error: unknown) => {
        this.release(entry);
        throw error;
      },
    );
  }

  /**
   * Whether the key has calls in flight or queued: calls the registry runs, or work its value
   * reports. False for a key that is not held.
   */
  isBusy(key: string): boolean {
    const entry = this.entries.get(key);
    return entry !== undefined && isEntryBusy(entry);
  }

  /**
   * Removes an idle key and returns true. A busy key is refused (false, and it stays), for the
   * reason eviction skips it; so is a key that is not held. Check `isBusy(key)` to tell the two
   * apart, and delete again once its calls settle (ADR-0062).
   */
  delete(key: string): boolean {
    this.refuseReentry('delete');
    const entry = this.entries.get(key);
    if (entry === undefined || isEntryBusy(entry)) return false;
    this.drop(entry);
    if (this.evicted.size > 0) this.evicted.emit({ key, value: entry.value, reason: 'delete' });
    return true;
  }

  /** The keys held, least recently used first (the order eviction considers them in). */
  keys(): string[] {
    const keys: string[] = [];
    for (let node = this.order.oldest; node !== undefined; node = this.order.newerThan(node)) keys.push(node.key);
    return keys;
  }

  /**
   * Subscribes to keys leaving the registry (evicted for room, or deleted): the place to flush a
   * key's last metrics. A listener that throws is isolated (it breaks no call).
   */
  onEvict(listener: Listener<KeyEvictionEvent<V>>): Subscription {
    return this.evicted.subscribe(listener);
  }

  snapshot(): KeyRegistrySnapshot {
    let busy = 0;
    for (const entry of this.entries.values()) if (isEntryBusy(entry)) busy++;
    return {
      kind: 'registry',
      size: this.entries.size,
      maxKeys: this.maxKeys,
      busy,
      created: this.createdCount,
      evictions: this.evictionCount,
      overflows: this.overflowCount,
    };
  }

  /** The key's entry (a use), or undefined when the call belongs to `overflow`. */
  private entryFor(key: string): Entry<V> | undefined {
    // Inside create, even a held key is refused: a call started there could make the key that
    // create's caller chose to evict busy.
    this.refuseReentry('get');
    const found = this.entries.get(key);
    if (found !== undefined) {
      this.order.touch(found);
      return found;
    }
    return this.admit(key);
  }

  private admit(key: string): Entry<V> | undefined {
    if (typeof key !== 'string') {
      throw new TypeError(
        `resilix: a KeyRegistry key must be a string; received ${key === null ? 'null' : typeof key}`,
      );
    }
    let victim: Entry<V> | undefined;
    if (this.entries.size >= this.maxKeys) {
      // Every key running a registry call is busy whatever it reports: no scan needed (a scan
      // over all-busy keys would leave the order as it was anyway).
      victim = this.countedBusy >= this.entries.size ? undefined : this.oldestIdle();
      if (victim === undefined) return this.full(key);
    }
    // The value is made before the victim leaves: if `create` throws, nothing has changed.
    let value: V;
    this.creating = true;
    try {
      value = this.create(key);
    } finally {
      this.creating = false;
    }
    if (!isExecutor(value)) {
      const shown = key.length > 100 ? `${key.slice(0, 100)}...` : key;
      throw executorError(`create(${JSON.stringify(shown)})`, value);
    }
    // create ran our caller's code: a call it started through a value it held may have made the
    // chosen key busy, and a busy key is never evicted.
    if (victim !== undefined && isEntryBusy(victim)) {
      victim = this.oldestIdle();
      if (victim === undefined) return this.full(key);
    }
    this.createdCount++;
    if (victim !== undefined) {
      this.drop(victim);
      this.evictionCount++;
    }
    const entry = new Entry(key, value);
    this.entries.set(key, entry);
    this.order.push(entry);
    if (victim !== undefined && this.evicted.size > 0) {
      this.evicted.emit({ key: victim.key, value: victim.value, reason: 'capacity' });
    }
    return entry;
  }

  /** No idle key to make room: the call goes to `overflow` (undefined here), or TooManyKeysError. */
  private full(key: string): undefined {
    this.overflowCount++;
    if (this.overflow !== undefined) return undefined;
    throw new TooManyKeysError({ maxKeys: this.maxKeys, key });
  }

  /**
   * The least recently used idle entry. Each busy entry passed is moved to the newest end: it is
   * in use, so it counts as used now, and the next scan starts past it. A scan therefore costs
   * O(1) amortised while busy keys stay busy, and O(maxKeys) only when every key is busy (and
   * then the order is unchanged: every entry moved once, in order).
   */
  private oldestIdle(): Entry<V> | undefined {
    for (let remaining = this.order.size; remaining > 0; remaining--) {
      const oldest = this.order.oldest!;
      if (!isEntryBusy(oldest)) return oldest;
      this.order.touch(oldest);
    }
    return undefined;
  }

  private release(entry: Entry<V>): void {
    if (--entry.calls === 0) this.countedBusy--;
  }

  private drop(entry: Entry<V>): void {
    this.entries.delete(entry.key);
    this.order.remove(entry);
  }

  private refuseReentry(operation: string): void {
    if (this.creating) {
      throw new TypeError(
        `resilix: a KeyRegistry's create() called ${operation}() on its own registry; ` +
          'make the value from the key alone',
      );
    }
  }
}

function isEntryBusy(entry: Entry<unknown>): boolean {
  return entry.calls > 0 || reportsBusy(entry.value as object);
}

function isExecutor(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as Executor).execute === 'function';
}

function executorError(what: string, value: unknown): TypeError {
  return new TypeError(
    `resilix: KeyRegistry ${what} must give a pipeline or policy (an object with execute()); ` +
      `received ${value === null ? 'null' : typeof value}`,
  );
}
