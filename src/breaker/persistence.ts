import { choiceOption, requireNumber } from '../core/options';
import { CIRCUIT_STATES, type CircuitState } from './state';

/**
 * A breaker's state as plain JSON (`breaker.toJSON()`), to carry across processes: a serverless
 * function saves it at the end of one invocation and restores it at the start of the next.
 *
 * Every time in it is relative ("open for another N ms", "this bucket began N ms ago"), because
 * monotonic clock readings mean nothing in another process. `savedAt` is the one absolute time: a
 * wall-clock reading (epoch ms) taken at save, so a restore can subtract the time that passed in
 * between. Without it a breaker restored ten minutes later would stay open for its full remaining
 * period and count ten-minute-old failures as fresh (ADR-0023).
 */
export interface PersistedBreakerState {
  /** The format version; a restore refuses any other. */
  readonly version: 1;
  readonly state: CircuitState;
  /** Wall-clock time of the save, epoch ms (`wallClock()`, default `Date.now()`). */
  readonly savedAt: number;
  /** `open` only: how much longer it would have stayed open at the save. 0 otherwise. */
  readonly openForMs: number;
  /** Re-opens in a row straight from half-open (drives `backoffMultiplier`). */
  readonly backoffLevel: number;
  /** Times the breaker has opened (telemetry). */
  readonly opens: number;
  readonly consecutiveFailures: number;
  /** How long the window had been collecting at the save, capped at `windowMs` (ADR-0021). */
  readonly windowAgeMs: number;
  /** Non-empty window buckets, oldest first: [ageMs at the save, calls, failures, slowCalls]. */
  readonly buckets: ReadonlyArray<readonly [number, number, number, number]>;
}

const OWNER = 'breaker';

/** Validates a saved state (it may come from storage anyone could have written). */
export function parsePersistedState(value: unknown): PersistedBreakerState {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `resilix: breaker option "restore" must be an object from breaker.toJSON(); received ${describe(value)}`,
    );
  }
  const saved = value as Record<string, unknown>;
  if (saved.version !== 1) {
    throw new RangeError(
      `resilix: breaker option "restore.version" must be 1 (a state saved by this version of resilix); received ${String(saved.version)}`,
    );
  }
  // `null` as the fallback: a missing state is refused like a wrong one (choiceOption names the choices).
  const state = choiceOption<CircuitState>(OWNER, 'restore.state', saved.state ?? null, 'closed', CIRCUIT_STATES);
  const count = { min: 0, integer: true };
  // The window counts in 32-bit cells (rolling-window.ts): more would wrap there, and never age out of the totals.
  const cell = { ...count, max: 0xffff_ffff };
  const duration = { min: 0 };
  const savedAt = requireNumber(OWNER, 'restore.savedAt', saved.savedAt, {});
  const openForMs = requireNumber(OWNER, 'restore.openForMs', saved.openForMs, duration);
  const backoffLevel = requireNumber(OWNER, 'restore.backoffLevel', saved.backoffLevel, count);
  const opens = requireNumber(OWNER, 'restore.opens', saved.opens, count);
  const consecutiveFailures = requireNumber(OWNER, 'restore.consecutiveFailures', saved.consecutiveFailures, count);
  const windowAgeMs = requireNumber(OWNER, 'restore.windowAgeMs', saved.windowAgeMs, duration);
  if (!Array.isArray(saved.buckets)) {
    throw new TypeError(
      `resilix: breaker option "restore.buckets" must be an array; received ${describe(saved.buckets)}`,
    );
  }
  const buckets = saved.buckets.map((bucket: unknown, i: number): readonly [number, number, number, number] => {
    const name = `restore.buckets[${i}]`;
    if (!Array.isArray(bucket) || bucket.length !== 4) {
      throw new TypeError(
        `resilix: breaker option "${name}" must be [ageMs, calls, failures, slowCalls]; received ${describe(bucket)}`,
      );
    }
    const ageMs = requireNumber(OWNER, `${name}[0]`, bucket[0], duration);
    const calls = requireNumber(OWNER, `${name}[1]`, bucket[1], cell);
    const failures = requireNumber(OWNER, `${name}[2]`, bucket[2], { ...count, max: calls });
    const slowCalls = requireNumber(OWNER, `${name}[3]`, bucket[3], { ...count, max: calls });
    return [ageMs, calls, failures, slowCalls];
  });
  // Restored buckets may share a cell (rolling-window.ts `add`): their sum must fit one too.
  const total = buckets.reduce((sum, bucket) => sum + bucket[1], 0);
  if (total > 0xffff_ffff) {
    throw new RangeError(
      `resilix: breaker option "restore.buckets" must hold at most ${0xffff_ffff} calls in all; received ${total}`,
    );
  }
  return { version: 1, state, savedAt, openForMs, backoffLevel, opens, consecutiveFailures, windowAgeMs, buckets };
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
