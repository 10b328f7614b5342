/**
 * The one seam for time. Every read of time and every per-call deadline timer in resilix goes
 * through a Clock, so the simulator can run the real code on virtual time (DESIGN.md §2.3).
 */
export type TimerHandle = unknown;

export interface Clock {
  /** Monotonic time in milliseconds. */
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

const readPlatformTime: () => number =
  typeof performance === 'object' && performance !== null && typeof performance.now === 'function'
    ? () => performance.now()
    : () => Date.now();

/** The default clock: `performance.now()` and the platform's timers (unref'd where possible). */
export const systemClock: ResolvedClock = Object.freeze({
  now: readPlatformTime,
  setTimer: armPlatformTimer,
  clearTimer: clearPlatformTimer,
});

const resolvedClocks = new WeakMap<Clock, ResolvedClock>();

/**
 * Normalises a user clock once, at construction. A user clock is wrapped so that time never
 * runs backwards and a NaN reading repeats the last good one: a faulty clock must not corrupt
 * a limiter's windows or a breaker's state. The same user clock always resolves to the same
 * object, so policies built from one clock can be checked for sharing it.
 */
export function resolveClock(clock: Clock | undefined, owner: string): ResolvedClock {
  if (clock === undefined || clock === systemClock) return systemClock;
  if (typeof clock !== 'object' || clock === null || typeof clock.now !== 'function') {
    throw new TypeError(
      `resilix: ${owner} option "clock" must be an object with a now() function; received ${describe(clock)}`,
    );
  }
  const cached = resolvedClocks.get(clock);
  if (cached !== undefined) return cached;
  if ((clock.setTimer === undefined) !== (clock.clearTimer === undefined)) {
    throw new TypeError(`resilix: ${owner} option "clock" must give both setTimer and clearTimer, or neither`);
  }
  let lastMs = 0;
  const source = clock;
  const resolved: ResolvedClock = Object.freeze({
    now(): number {
      const t = source.now();
      // `t >= lastMs` is false for NaN too, so NaN and backward steps both repeat the last reading.
      if (t >= lastMs) lastMs = t;
      return lastMs;
    },
    setTimer: source.setTimer ? source.setTimer.bind(source) : armPlatformTimer,
    clearTimer: source.clearTimer ? source.clearTimer.bind(source) : clearPlatformTimer,
  });
  resolvedClocks.set(clock, resolved);
  return resolved;
}

function describe(value: unknown): string {
  return value === null ? 'null' : typeof value;
}
