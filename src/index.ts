export type { Clock, ResolvedClock, TimerHandle } from './core/clock';
export { systemClock } from './core/clock';
export type { Verdict } from './core/verdict';
export { VERDICTS, isVerdict } from './core/verdict';
export type { Observation } from './core/observation';
export type { CallContext, CallFn, ExecuteOptions, Executor } from './core/call';
export type { Classifier, Classification, Settled } from './core/classify';
export { defaultClassify, verdictForStatus, parseRetryAfter } from './core/classify';
export type { Permit } from './core/ports';
export type { Policy, PolicyKind } from './core/policy';
export type { Listener, Subscription } from './core/events';
export type { RefusalEvent, RefusalReason, RefusingPolicy } from './core/call-events';
export { POLICY_ORDER } from './core/policy';
export * from './errors/index';
export {
  pipeline,
  Pipeline,
  type PipelineOptions,
  type PipelineSnapshot,
  type PolicySnapshot,
} from './pipeline/pipeline';
export { timeout, TimeoutPolicy, type TimeoutOptions, type TimeoutSnapshot } from './timeout/timeout';
export { bulkhead, Bulkhead, type BulkheadOptions, type BulkheadSnapshot } from './bulkhead/bulkhead';
export * from './breaker/index';
export * from './retry/index';
export {
  KeyRegistry,
  type KeyRegistryOptions,
  type KeyRegistrySnapshot,
  type KeyEvictionEvent,
} from './registry/key-registry';
export { originKey } from './registry/origin-key';
export { TooManyKeysError, isTooManyKeysError, type TooManyKeysErrorOptions } from './registry/too-many-keys-error';
export {
  resilientFetch,
  type FetchFunction,
  type KeyedExecutor,
  type RequestKey,
  type ResilientFetchOptions,
} from './fetch/fetch';
export * from './limiter/index';
