/**
 * What subscribing to an event (and `breaker.isolate()`) returns: call `dispose()` to stop
 * listening, or let `using` do it (`using sub = breaker.onOpen(log)`; TypeScript 5.2+).
 *
 * Named `Subscription`, not `Disposable`: an import of that name would shadow the global
 * `Disposable` interface of TypeScript's own lib in the importing module.
 */
export type Subscription = { dispose(): void } & {
  // `Symbol.dispose` as a key only where the consumer's lib declares it (`esnext.disposable`,
  // `es2025`, `@types/node`); with an older lib there is no key and this is `{ dispose(): void }`,
  // so the declarations compile under `lib: ["es2022"]` alone. Inline, not a named helper type:
  // the API reference has nothing to say about it.
  readonly [K in SymbolConstructor extends { readonly dispose: infer D extends symbol } ? D : never]: () => void;
};

/**
 * `Symbol.dispose` where the runtime has it (Node 18.18+, 20+, Workers, current browsers). Before
 * that (Node 18.0-18.17) it falls back to `Symbol.for('Symbol.dispose')`, the key esbuild's (and
 * so tsx's and vitest's) `using` helper looks up when `Symbol.dispose` is missing. Nothing global
 * is assigned. Read at each subscription, so a polyfill loaded after resilix is honoured.
 */
function disposeSymbol(): symbol {
  const own = (Symbol as { readonly dispose?: unknown }).dispose;
  return typeof own === 'symbol' ? own : Symbol.for('Symbol.dispose');
}

/** A Subscription whose `dispose()` and `[Symbol.dispose]()` both run `dispose` (once is the caller's job). */
export function subscription(dispose: () => void): Subscription {
  const handle = { dispose } as { dispose(): void } & Record<symbol, () => void>;
  handle[disposeSymbol()] = dispose;
  return handle as Subscription;
}

export type Listener<T> = (event: T) => void;

const NO_LISTENERS: ReadonlyArray<Listener<unknown>> = Object.freeze([]);

/**
 * A typed event channel. Costs nothing when nobody listens (one length check), and a listener
 * that throws breaks neither the call nor the policy that emitted: its error goes to the
 * platform's `reportError` where there is one (Workers, browsers), else to `console.error`. It is
 * never rethrown: a crashed process is a worse outcome than a missed metric.
 */
export class EventChannel<T> {
  /** Copied on every change; until the first subscription, one empty array shared by every channel. */
  private listeners: ReadonlyArray<Listener<T>> = NO_LISTENERS as ReadonlyArray<Listener<T>>;

  get size(): number {
    return this.listeners.length;
  }

  subscribe(listener: Listener<T>): Subscription {
    if (typeof listener !== 'function') {
      throw new TypeError(`resilix: an event listener must be a function; received ${typeof listener}`);
    }
    // Copy on write: emitting iterates a snapshot, so subscribing from a listener is safe.
    this.listeners = [...this.listeners, listener];
    let active = true;
    return subscription(() => {
      if (!active) return;
      active = false;
      // This subscription's entry only: the same function subscribed twice stays subscribed once.
      const index = this.listeners.indexOf(listener);
      this.listeners = [...this.listeners.slice(0, index), ...this.listeners.slice(index + 1)];
    });
  }

  emit(event: T): void {
    const listeners = this.listeners;
    for (let i = 0; i < listeners.length; i++) {
      try {
        listeners[i]!(event);
      } catch (error) {
        reportError(error, 'an event listener threw; the policy carried on');
      }
    }
  }
}

/**
 * @internal Reports an error resilix caught from code it calls (a listener, a faulty clock) and
 * carried on from: to the platform's `reportError` where there is one (Workers, browsers), else
 * to `console.error`. Never throws: a reporter that throws is ignored.
 */
export function reportError(error: unknown, what: string): void {
  try {
    const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
    if (typeof report === 'function') report(error);
    else console.error(`resilix: ${what}`, error);
  } catch {
    // Nowhere left to report to; the caller carries on regardless.
  }
}
