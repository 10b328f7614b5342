import { reportError } from './events';

/**
 * The one seam for time. Every read of time and every per-call deadline timer in resilix goes
 * through a Clock, so the simulator can run the real code on virtual time (DESIGN.md §2.3).
 */
export type TimerHandle = unknown;

export interface Clock {
  /**
   * Monotonic time in milliseconds; any finite origin, negative included. resilix never lets the
   * time it reads run backwards: a reading below the last one repeats the last one, so **a clock
   * that steps back freezes time until it catches up** (deadlines, breaker open periods and
   * limiter windows wait for it). A reading that is not a finite number, or a `now()` that
   * throws, repeats the last reading too (a throw is reported to `reportError` or
   * `console.error`).
   */
  now(): number;
  /**
   * Arms a one-shot timer for a per-call deadline. Optional: when a clock gives only `now`,
   * resilix arms deadlines on the platform's `setTimeout` (which is wrong for a virtual clock,
   * so a simulated clock must give both timer functions).
   */
  setTimer?(callback: () => void, delayMs: number): TimerHandle;
  clearTimer?(handle: TimerHandle): void;
}

/** A clock with every function present; what policies hold after construction. */
export interface ResolvedClock {
  now(): number;
  setTimer(callback: () => void, delayMs: number): TimerHandle;
  clearTimer(handle: TimerHandle): void;
}

function armPlatformTimer(callback: () => void, delayMs: number): TimerHandle {
  const handle = setTimeout(callback, delayMs) as unknown as { unref?: () => void };
  // ADR-001: a per-call deadline timer must never keep a Node process alive on its own.
  if (typeof handle === 'object' && handle !== null && typeof handle.unref === 'function') handle.unref();
  return handle;
}

function clearPlatformTimer(handle: TimerHandle): void {
  clearTimeout(handle as ReturnType<typeof setTimeout>);
}

/**
 * `performance.now` bound once, at load: the global `performance` is a lazy getter in Node, so
 * reading it on every call costs a getter call, and on Node 24 the arrow around it boxed the
 * reading (16 bytes per call) where the bound builtin does not (docs/benchmarks.md).
 */
const readPlatformTime: () => number =
  typeof performance === 'object' && performance !== null && typeof performance.now === 'function'
    ? performance.now.bind(performance)
    : Date.now;

/** The default clock: `performance.now()` and the platform's timers (unref'd where possible). */
export const systemClock: ResolvedClock = Object.freeze({
  now: readPlatformTime,
  setTimer: armPlatformTimer,
  clearTimer: clearPlatformTimer,
});

const resolvedClocks = new WeakMap<Clock, ResolvedClock>();

/**
 * Normalises a user clock once, at construction. A user clock is wrapped so that a faulty reading
 * cannot corrupt a limiter's windows or a breaker's state:
 * - time never runs backwards: a reading below the last one repeats the last one, so a clock that
 *   steps back freezes time until it catches up;
 * - a reading that is not a finite number (NaN, +-Infinity, not a number at all) or a `now()`
 *   that throws repeats the last reading (a throw is also reported, as listener errors are);
 * - any finite start works, negative included; a faulty reading before the first good one reads
 *   as 0 (and time then holds at 0 until the clock passes it).
 * The same user clock always resolves to the same object, so policies built from one clock can
 * be checked for sharing it.
 */
export function resolveClock(clock: Clock | undefined, owner: string, option = 'clock'): ResolvedClock {
  if (clock === undefined || clock === systemClock) return systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new TypeError(
      `resilix: ${owner} option "${option}" must be an object with a now() function; received ${describe(clock)}`,
    );
  }
  const cached = resolvedClocks.get(clock);
  if (cached !== undefined) return cached;
  if ((clock.setTimer === undefined) !== (clock.clearTimer === undefined)) {
    throw new TypeError(`resilix: ${owner} option "${option}" must give both setTimer and clearTimer, or neither`);
  }
  for (const name of ['setTimer', 'clearTimer'] as const) {
    const timerFunction: unknown = clock[name];
    if (timerFunction !== undefined && typeof timerFunction !== 'function') {
      throw new TypeError(
        `resilix: ${owner} option "${option}.${name}" must be a function or undefined; received ${describe(timerFunction)}`,
      );
    }
  }
  // Not frozen: its last reading changes (it is reachable only through a policy's internal `clock`).
  const resolved: ResolvedClock = new GuardedClock(
    clock,
    clock.setTimer ? clock.setTimer.bind(clock) : armPlatformTimer,
    clock.clearTimer ? clock.clearTimer.bind(clock) : clearPlatformTimer,
  );
  resolvedClocks.set(clock, resolved);
  return resolved;
}

/**
 * A user clock behind the guards `resolveClock` lists. The last reading lives in a number field,
 * which V8 updates in place: a closure variable would box every fractional reading (16 bytes).
 */
class GuardedClock implements ResolvedClock {
  /** -Infinity until the first good reading: every finite reading is at or above it. */
  private lastMs = -Infinity;

  constructor(
    private readonly source: Clock,
    readonly setTimer: (callback: () => void, delayMs: number) => TimerHandle,
    readonly clearTimer: (handle: TimerHandle) => void,
  ) {}

  // Small enough for V8 to inline anywhere (bytecode under its always-inline size): a reading returned from a call it
  // did not inline is boxed, 16 bytes a call; one left in a number field is updated in place. Over the settle path's
  // inlining budget, which V8 reaches or not by compile order, every fractional reading was boxed (adr/0134).
  now(): number {
    this.advance();
    return this.lastMs;
  }

  /** Reads the source into `lastMs`; returns nothing, so it boxes nothing when it is not inlined. */
  private advance(): void {
    let t: unknown;
    try {
      t = this.source.now();
    } catch (error) {
      t = clockThrew(error);
    }
    const last = this.lastMs;
    // `t - t === 0` holds for finite numbers only; `t < last` is a backward step. A bad reading
    // repeats the last good one (0 before any).
    if (typeof t !== 'number' || t - t !== 0 || t < last) t = last === -Infinity ? 0 : last;
    this.lastMs = t as number;
  }
}

function clockThrew(error: unknown): number {
  reportError(error, 'clock.now() threw; the last reading stands in for it');
  return Number.NaN;
}

function describe(value: unknown): string {
  return value === null ? 'null' : typeof value;
}
