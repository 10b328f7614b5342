import type { Verdict } from './verdict';

/** How a call ended, in the shape of `Promise.allSettled` results. */
export type Settled<T = unknown> =
  | { readonly status: 'fulfilled'; readonly value: T }
  | { readonly status: 'rejected'; readonly reason: unknown };

export interface Classification {
  readonly verdict: Verdict;
  /** The upstream's Retry-After, in ms, when it gave one. */
  readonly retryAfterMs?: number | undefined;
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
 * Parses Retry-After (RFC 9110 §10.2.3): `delay-seconds` (ASCII digits only) or an `HTTP-date`
 * in any of the three formats a recipient must accept (§5.6.7: IMF-fixdate, and the obsolete
 * RFC 850 and asctime forms). Returns ms from now, or undefined when absent or anything else
 * ("1.5", "-1", "+5", "in 5", an ISO date, 31 November): a malformed hint is no hint, never
 * "retry now". A date in the past means "now" (0).
 */
export function parseRetryAfter(
  header: string | null | undefined,
  nowEpochMs: number = Date.now(),
): number | undefined {
  if (typeof header !== 'string') return undefined;
  const text = header.trim();
  if (DELAY_SECONDS.test(text)) {
    const ms = Number(text) * 1000;
    // Capped, not dropped: digits past the cap (or a double's range) still say "much later", never
    // "no hint" (which would retry sooner), and more digits never mean a shorter wait.
    return ms > Number.MAX_SAFE_INTEGER ? Number.MAX_SAFE_INTEGER : ms;
  }
  const at = parseHttpDate(text, nowEpochMs);
  return at === undefined ? undefined : Math.max(0, at - nowEpochMs);
}

const DELAY_SECONDS = /^[0-9]+$/;
const MONTHS = 'Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec';
const TIME = '([0-9]{2}):([0-9]{2}):([0-9]{2})';
/** `Sun, 06 Nov 1994 08:49:37 GMT` */
const IMF_FIXDATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), ([0-9]{2}) (${MONTHS}) ([0-9]{4}) ${TIME} GMT$`);
/** `Sunday, 06-Nov-94 08:49:37 GMT` (obsolete) */
const RFC850_DATE = new RegExp(
  `^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), ([0-9]{2})-(${MONTHS})-([0-9]{2}) ${TIME} GMT$`,
);
/** `Sun Nov  6 08:49:37 1994` (obsolete; the day is two digits or a space and one) */
const ASCTIME_DATE = new RegExp(`^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (${MONTHS}) ([0-9]{2}| [0-9]) ${TIME} ([0-9]{4})$`);

/** Epoch ms of an HTTP-date, or undefined when `text` is not one (or names no real instant). */
function parseHttpDate(text: string, nowEpochMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m !== null) return instant(Number(m[3]), m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  m = RFC850_DATE.exec(text);
  if (m !== null) {
    // §5.6.7: a two-digit year more than 50 years in the future is the most recent past year
    // with the same last two digits.
    const nowYear = new Date(nowEpochMs).getUTCFullYear();
    let year = nowYear - (nowYear % 100) + Number(m[3]);
    if (year > nowYear + 50) year -= 100;
    return instant(year, m[2]!, Number(m[1]), m[4]!, m[5]!, m[6]!);
  }
  m = ASCTIME_DATE.exec(text);
  if (m !== null) return instant(Number(m[6]), m[1]!, Number(m[2]!.trim()), m[3]!, m[4]!, m[5]!);
  return undefined;
}

function instant(year: number, monthName: string, day: number, hh: string, mm: string, ss: string): number | undefined {
  const month = MONTHS.indexOf(monthName) / 4;
  const hour = Number(hh);
  const minute = Number(mm);
  const second = Number(ss);
  // §5.6.7 allows second 60 (a leap second); it reads as the first second of the next minute.
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month, day); // unlike Date.UTC, no 19xx for years 0-99
  // A day the month does not have (31 November) rolls over: such a date names no real day.
  if (date.getUTCDate() !== day) return undefined;
  return date.setUTCHours(hour, minute, second);
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

/**
 * The verdict of a call that ended on its own. The default classifier reads the call's result
 * (its `status`, its headers): a getter there that throws is the classifier failing, and counts
 * as a `failure` like a user classifier that throws; the caller still gets the call's own result.
 */
export function classifySafely(classify: Classifier | undefined, fulfilled: boolean, subject: unknown): Classification {
  try {
    return classify === undefined
      ? classifyOutcome(fulfilled, subject)
      : runClassifier(
          classify,
          fulfilled ? { status: 'fulfilled', value: subject } : { status: 'rejected', reason: subject },
        );
  } catch {
    return FAILURE;
  }
}

function isClassifiedVerdict(value: unknown): value is Verdict {
  // A classifier may not claim `rejected` or `cancelled`: those belong to our policies and the caller.
  return value === 'ok' || value === 'answered' || value === 'overload' || value === 'failure' || value === 'timeout';
}
