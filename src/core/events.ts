/** What subscribing returns: call `dispose()` (or use `using`) to stop listening. */
export interface Disposable {
  dispose(): void;
}

export type Listener<T> = (event: T) => void;

/**
 * A typed event channel. Costs nothing when nobody listens (one length check), and a listener
 * that throws breaks neither the call nor the policy that emitted: its error goes to the
 * platform's `reportError` where there is one (Workers, browsers), else to `console.error`. It is
 * never rethrown: a crashed process is a worse outcome than a missed metric.
 */
export class EventChannel<T> {
  private listeners: Array<Listener<T>> = [];

  get size(): number {
    return this.listeners.length;
  }

  subscribe(listener: Listener<T>): Disposable {
    if (typeof listener !== 'function') {
      throw new TypeError(`resilix: an event listener must be a function; received ${typeof listener}`);
    }
    // Copy on write: emitting iterates a snapshot, so subscribing from a listener is safe.
    this.listeners = [...this.listeners, listener];
    let active = true;
    return {
      dispose: () => {
        if (!active) return;
        active = false;
        this.listeners = this.listeners.filter((l) => l !== listener);
      },
    };
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
