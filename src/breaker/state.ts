import type { Verdict } from '../core/verdict';

/**
 * The breaker's states. `isolated` is `open` held by hand (`isolate()`): no timer or probe ends
 * it, only `reset()` or disposing every isolation handle.
 */
export type CircuitState = 'closed' | 'open' | 'half-open' | 'isolated';

/**
 * Why the state changed.
 * - `failure-rate`, `slow-call-rate`, `consecutive-failures`: closed -> open, a trip condition held
 * - `open-elapsed`: open -> half-open, the open period passed and a call arrived
 * - `probe-failed`: half-open -> open, a probe's verdict was `failure` or `timeout`
 * - `probe-slow`: half-open -> open, a probe was slower than `slowCallDurationMs` (settled slow,
 *   or still unsettled that long after it was admitted)
 * - `probes-succeeded`: half-open -> closed, every probe succeeded
 * - `manual`: `isolate()`, `reset()`, or the last isolation handle disposed
 */
export type StateChangeReason =
  | 'failure-rate'
  | 'slow-call-rate'
  | 'consecutive-failures'
  | 'open-elapsed'
  | 'probe-failed'
  | 'probe-slow'
  | 'probes-succeeded'
  | 'manual';

/** One state change, as listeners receive it. `at` is the breaker's clock reading (ms). */
export interface BreakerStateChange {
  readonly from: CircuitState;
  readonly to: CircuitState;
  readonly reason: StateChangeReason;
  readonly at: number;
}

export const CIRCUIT_STATES: readonly CircuitState[] = Object.freeze([
  'closed',
  'open',
  'half-open',
  'isolated',
] as const);

/**
 * Every legal transition and the reasons that may cause it. The state machine test checks each
 * emitted change against this table; nothing else may happen.
 */
export const LEGAL_TRANSITIONS: Readonly<
  Record<CircuitState, Readonly<Partial<Record<CircuitState, readonly StateChangeReason[]>>>>
> = Object.freeze({
  closed: { open: ['failure-rate', 'slow-call-rate', 'consecutive-failures'], isolated: ['manual'] },
  open: { 'half-open': ['open-elapsed'], closed: ['manual'], isolated: ['manual'] },
  'half-open': {
    open: ['probe-failed', 'probe-slow'],
    closed: ['probes-succeeded', 'manual'],
    isolated: ['manual'],
  },
  isolated: { closed: ['manual'] },
});

export function isLegalTransition(from: CircuitState, to: CircuitState, reason: StateChangeReason): boolean {
  return LEGAL_TRANSITIONS[from][to]?.includes(reason) ?? false;
}

/** What one verdict means to the breaker (DESIGN.md §3, ADR-0020). */
export const IGNORED = 0;
export const SUCCESS = 1;
export const FAILURE = 2;
export type Outcome = typeof IGNORED | typeof SUCCESS | typeof FAILURE;

/**
 * `failure` and `timeout` are failures; `ok` and `answered` successes. `overload` is neither: the
 * upstream is alive and pushing back, which is the limiter's business (spec §8), and counting it
 * as a success would dilute real failures. `rejected` and `cancelled` teach nothing (ADR-007).
 */
export function outcomeOf(verdict: Verdict): Outcome {
  switch (verdict) {
    case 'ok':
    case 'answered':
      return SUCCESS;
    case 'failure':
    case 'timeout':
      return FAILURE;
    default:
      return IGNORED;
  }
}

/**
 * Tickets: `epoch * 2 + probe`. The epoch counts state changes (mod 2^30, so a ticket stays a
 * small integer), and the low bit marks a half-open probe. A settlement whose epoch is not the
 * current one belongs to an earlier state (a call admitted before the breaker opened, a probe of
 * an earlier half-open period) and is ignored. No allocation.
 */
export const EPOCH_MASK = 0x3fffffff;

export function ticketOf(epoch: number, probe: boolean): number {
  return epoch * 2 + (probe ? 1 : 0);
}

export function epochOf(ticket: number): number {
  return Math.floor(ticket / 2);
}

export function isProbeTicket(ticket: number): boolean {
  return ticket % 2 === 1;
}
