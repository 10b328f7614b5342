// The public surface, re-exported by src/index.ts; internals (admission, the loop, limiterWithController) stay out.
export { limiter, Limiter, type LimiterOptions, type LimiterSnapshot, type QueueingOptions } from './limiter';
export type { QueueingConfig, AdmissionCounters } from './admission';
export type { QueueOrder } from './wait-queue';
export { CONTROL_DEFAULTS, defaultAlpha, defaultBeta } from './control-config';
export type { BandFunction, ControlOptions, FailureHandling } from './control-config';
export type { AlgorithmName, LimitChange, LimitChangeReason, LimitControllerSnapshot } from './controller';
