import type { Clock } from '../../../../src/core/clock';
import { mulberry32 } from '../../../helpers/mulberry32';

interface Event {
  at: number;
  seq: number;
  callback: () => void;
  cancelled: boolean;
}

/**
 * A discrete-event virtual clock for the admission experiments: timers sit in a binary heap
 * ordered by (time, arming order), cancellation is lazy, and `run` fires events one at a time,
 * letting every promise reaction settle between two events. Deterministic: no wall clock.
 */
export class SimClock implements Clock {
  private time = 0;
  private seq = 0;
  private heap: Event[] = [];
  private live = 0;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): Event {
    const event: Event = { at: this.time + Math.max(0, delayMs), seq: this.seq++, callback, cancelled: false };
    this.pushEvent(event);
    this.live++;
    return event;
  }

  clearTimer(handle: unknown): void {
    const event = handle as Event;
    if (!event.cancelled) {
      event.cancelled = true;
      this.live--;
    }
  }

  get pendingTimers(): number {
    return this.live;
  }

  /** Fires every event due up to `untilMs`, in order, draining microtasks after each. */
  async run(untilMs: number): Promise<void> {
    await drainMicrotasks();
    for (;;) {
      const next = this.heap[0];
      if (next === undefined || next.at > untilMs) break;
      this.popEvent();
      if (next.cancelled) continue;
      next.cancelled = true;
      this.live--;
      this.time = next.at;
      next.callback();
      await drainMicrotasks();
    }
    if (untilMs > this.time) this.time = untilMs;
  }

  private pushEvent(event: Event): void {
    const heap = this.heap;
    heap.push(event);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private popEvent(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) return;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
  }
}

function before(a: Event, b: Event): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

/** Node runs every queued promise reaction before a setImmediate callback. */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** mulberry32: a tiny seeded PRNG, uniform in [0, 1). */
export const seededRandom = mulberry32;
