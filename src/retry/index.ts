/** The retry policy's public surface; `src/index.ts` re-exports it. */
export {
  retry,
  RetryPolicy,
  type RetryEvent,
  type RetryGiveUpEvent,
  type RetrySnapshot,
} from './retry';
export {
  RETRY_DEFAULTS,
  RETRY_GIVE_UP_REASONS,
  type AttemptOutcome,
  type RetryGiveUpReason,
  type RetryOptions,
  type ShouldRetry,
} from './options';
export {
  retryBudget,
  RetryBudget,
  RETRY_BUDGET_DEFAULTS,
  type RetryBudgetOptions,
  type RetryBudgetSnapshot,
} from './budget';
export type { BackoffKind } from './backoff';
