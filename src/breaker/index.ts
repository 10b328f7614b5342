export { breaker, CircuitBreaker, type BreakerSnapshot } from './breaker';
export { BREAKER_DEFAULTS, type BreakerOptions, type BreakerConfig } from './options';
export type { PersistedBreakerState } from './persistence';
export type { BreakerStateChange, CircuitState, StateChangeReason } from './state';
