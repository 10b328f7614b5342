/**
 * The limiter's public surface. `src/index.ts` re-exports this module; internals (admission, the
 * wait queue, the control loop's parts, `limiterWithController`) stay out of it.
 */
export { limiter, Limiter, type LimiterOptions, type LimiterSnapshot, type QueueingOptions } from './limiter';
export type { QueueingConfig, AdmissionCounters } from './admission';
export type { QueueOrder } from './wait-queue';
export {
  CONTROL_DEFAULTS,
  defaultAlpha,
  defaultBeta,
  type BandFunction,
  type ControlOptions,
  type FailureHandling,
} from './control-config';
export type { AlgorithmName, LimitChange, LimitChangeReason, LimitControllerSnapshot } from './controller';
