import type { Verdict } from './verdict';

/** How a call ended, in the shape of `Promise.allSettled` results. */
export type Settled<T = unknown> =
  | { readonly status: 'fulfilled'; readonly value: T }
  | { readonly status: 'rejected'; readonly reason: unknown };

export interface Classification {
  readonly verdict: Verdict;
  /** The upstream's Retry-After, in ms, when it gave one. */
  readonly retryAfterMs?: number;
}

/**
 * Turns a finished call into a verdict. Return `undefined` to fall back to the default
 * classifier. Our own deadline and the caller's abort are decided before a classifier runs
 * (`timeout` and `cancelled`), so a classifier sees only calls that ended on their own.
 */
export type Classifier = (settled: Settled) => Verdict | Classification | undefined;

interface ResponseLike {
  status: number;
  headers?: { get(name: string): string | null } | Record<string, unknown>;
}

function statusOf(value: unknown): number | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const status = (value as { status?: unknown }).status ?? (value as { statusCode?: unknown }).statusCode;
  return typeof status === 'number' && Number.isInteger(status) && status >= 100 && status <= 599 ? status : undefined;
}

/**
 * The verdict for an HTTP status: 1xx-3xx ok; 429 and 503 overload (the upstream says so);
 * other 4xx answered (the upstream did the work and said no); 5xx failure.
 */
export function verdictForStatus(status: number): Verdict {
  if (status === 429 || status === 503) return 'overload';
  if (status >= 500) return 'failure';
  if (status >= 400) return 'answered';
  return 'ok';
}

/**
 * Parses Retry-After (RFC 9110 §10.2.3): delay-seconds or an HTTP date. Returns ms from now, or
 * undefined when absent or malformed. A date in the past means "now" (0).
 */
export function parseRetryAfter(
  header: string | null | undefined,
  nowEpochMs: number = Date.now(),
): number | undefined {
  if (header === null || header === undefined) return undefined;
  const text = header.trim();
  if (text === '') return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowEpochMs);
}

function retryAfterOf(value: unknown): number | undefined {
  const headers = (value as ResponseLike).headers;
  if (headers === undefined || headers === null || typeof headers !== 'object') return undefined;
  if (typeof (headers as { get?: unknown }).get === 'function') {
    return parseRetryAfter((headers as { get(name: string): string | null }).get('retry-after'));
  }
  const raw =
    (headers as Record<string, unknown>)['retry-after'] ?? (headers as Record<string, unknown>)['Retry-After'];
  return typeof raw === 'string' ? parseRetryAfter(raw) : undefined;
}

/**
 * The default classifier. A value or error that carries an HTTP status (a fetch `Response`, or
 * an SDK error with `status`/`statusCode`, as the OpenAI and AWS SDKs throw) is classified by
 * it; any other value is `ok` and any other error is `failure`.
 */
export function defaultClassify(settled: Settled): Classification {
  return settled.status === 'fulfilled' ? classifyOutcome(true, settled.value) : classifyOutcome(false, settled.reason);
}

/**
 * @internal The default classifier without the `Settled` wrapper: the call runner's fast path
 * when no classifier is configured (saves an object per call).
 */
export function classifyOutcome(fulfilled: boolean, subject: unknown): Classification {
  const status = statusOf(subject);
  if (status === undefined) return fulfilled ? OK : FAILURE;
  const verdict = verdictForStatus(status);
  if (verdict === 'overload') {
    const retryAfterMs = retryAfterOf(subject);
    return retryAfterMs === undefined ? OVERLOAD : { verdict, retryAfterMs };
  }
  return verdict === 'ok' ? OK : verdict === 'failure' ? FAILURE : ANSWERED;
}

const OK: Classification = Object.freeze({ verdict: 'ok' });
const FAILURE: Classification = Object.freeze({ verdict: 'failure' });
const ANSWERED: Classification = Object.freeze({ verdict: 'answered' });
const OVERLOAD: Classification = Object.freeze({ verdict: 'overload' });

/**
 * Runs a user classifier, falling back to the default. A classifier that throws or returns
 * nonsense must not lose the call: it counts as a `failure`, and the caller still gets the
 * call's own result.
 */
export function runClassifier(classify: Classifier | undefined, settled: Settled): Classification {
  if (classify === undefined) return defaultClassify(settled);
  let answer: Verdict | Classification | undefined;
  try {
    answer = classify(settled);
  } catch {
    return FAILURE;
  }
  if (answer === undefined) return defaultClassify(settled);
  if (typeof answer === 'string') return isClassifiedVerdict(answer) ? { verdict: answer } : FAILURE;
  if (typeof answer === 'object' && answer !== null && isClassifiedVerdict(answer.verdict)) return answer;
  return FAILURE;
}

function isClassifiedVerdict(value: unknown): value is Verdict {
  // A classifier may not claim `rejected` or `cancelled`: those belong to our policies and the caller.
  return value === 'ok' || value === 'answered' || value === 'overload' || value === 'failure' || value === 'timeout';
}
