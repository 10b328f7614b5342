import { describe, expect, it } from 'vitest';
import { defaultClassify, parseRetryAfter, runClassifier, verdictForStatus } from '../../src/core/classify';

function response(status: number, headers: Record<string, string> = {}): Response {
  return new Response(null, { status, headers });
}

describe('the default classifier', () => {
  it.each([
    [200, 'ok'],
    [204, 'ok'],
    [302, 'ok'],
    [400, 'answered'],
    [404, 'answered'],
    [409, 'answered'],
    [429, 'overload'],
    [500, 'failure'],
    [502, 'failure'],
    [503, 'overload'],
    [504, 'failure'],
  ] as const)('classifies a fetch Response with status %i as %s', (status, verdict) => {
    const r = status === 204 || status === 302 ? new Response(null, { status }) : response(status);
    expect(defaultClassify({ status: 'fulfilled', value: r }).verdict).toBe(verdict);
    expect(verdictForStatus(status)).toBe(verdict);
  });

  it('reads Retry-After in seconds from a 429', () => {
    const c = defaultClassify({ status: 'fulfilled', value: response(429, { 'retry-after': '7' }) });
    expect(c).toEqual({ verdict: 'overload', retryAfterMs: 7000 });
  });

  it('reads Retry-After as an HTTP date from a 503', () => {
    const now = Date.UTC(2026, 10, 30, 12, 0, 0);
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Mon, 30 Nov 2026 11:59:00 GMT', now)).toBe(0);
  });

  it('ignores a malformed or empty Retry-After', () => {
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
    expect(defaultClassify({ status: 'fulfilled', value: response(503, { 'retry-after': 'x' }) })).toEqual({
      verdict: 'overload',
    });
  });

  it('classifies an SDK error that carries an HTTP status by that status', () => {
    const throttled = Object.assign(new Error('rate limited'), { status: 429 });
    const notFound = Object.assign(new Error('missing'), { statusCode: 404 });
    const broken = Object.assign(new Error('bad gateway'), { status: 502 });
    expect(defaultClassify({ status: 'rejected', reason: throttled }).verdict).toBe('overload');
    expect(defaultClassify({ status: 'rejected', reason: notFound }).verdict).toBe('answered');
    expect(defaultClassify({ status: 'rejected', reason: broken }).verdict).toBe('failure');
  });

  it('reads Retry-After from a plain headers object on an SDK error', () => {
    const throttled = Object.assign(new Error('slow down'), { status: 429, headers: { 'retry-after': '2' } });
    expect(defaultClassify({ status: 'rejected', reason: throttled })).toEqual({
      verdict: 'overload',
      retryAfterMs: 2000,
    });
  });

  it('classifies any other thrown value as failure and any other result as ok', () => {
    expect(defaultClassify({ status: 'rejected', reason: new TypeError('fetch failed') }).verdict).toBe('failure');
    expect(defaultClassify({ status: 'rejected', reason: undefined }).verdict).toBe('failure');
    expect(defaultClassify({ status: 'fulfilled', value: 42 }).verdict).toBe('ok');
    expect(defaultClassify({ status: 'fulfilled', value: { status: 'done' } }).verdict).toBe('ok');
  });
});

describe('a custom classifier', () => {
  it('overrides the default when it answers', () => {
    expect(runClassifier(() => 'overload', { status: 'fulfilled', value: 1 })).toEqual({ verdict: 'overload' });
  });

  it('falls back to the default when it returns undefined', () => {
    expect(runClassifier(() => undefined, { status: 'fulfilled', value: response(500) }).verdict).toBe('failure');
  });

  it('counts a throwing classifier as failure instead of losing the call', () => {
    const c = runClassifier(
      () => {
        throw new Error('bug in classifier');
      },
      { status: 'fulfilled', value: 1 },
    );
    expect(c.verdict).toBe('failure');
  });

  it('may not claim rejected or cancelled, which belong to our policies and the caller', () => {
    expect(runClassifier(() => 'rejected', { status: 'fulfilled', value: 1 }).verdict).toBe('failure');
    expect(runClassifier(() => 'cancelled', { status: 'fulfilled', value: 1 }).verdict).toBe('failure');
    expect(runClassifier(() => 'nonsense' as never, { status: 'fulfilled', value: 1 }).verdict).toBe('failure');
  });
});

describe('Retry-After, as RFC 9110 §10.2.3 defines it (issue 15, defect 8)', () => {
  const now = Date.UTC(2026, 10, 30, 12, 0, 0); // Mon, 30 Nov 2026 12:00:00 GMT

  it('reads delay-seconds (digits only) as that many seconds', () => {
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('007', now)).toBe(7_000);
    expect(parseRetryAfter('  5\t', now)).toBe(5_000);
  });

  it.each(['1.5', '0.5', '-1', '+5', 'in 5', '5s', '1e3', '0x10', '5 5', '5,6', 'Infinity', '', '   '])(
    'gives undefined for %j, which is neither delay-seconds nor an HTTP-date',
    (header) => {
      expect(parseRetryAfter(header, now)).toBeUndefined();
    },
  );

  it('reads a delay too long for a double as the longest it can say, not as no hint (which would retry sooner)', () => {
    expect(parseRetryAfter('9'.repeat(400), now)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter('9'.repeat(300), now)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter('1'.padEnd(20, '0'), now)).toBe(Number.MAX_SAFE_INTEGER);
    expect(parseRetryAfter('99999999', now)).toBe(99_999_999_000);
  });

  it('reads an IMF-fixdate', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Tue, 01 Dec 2026 12:00:00 GMT', now)).toBe(86_400_000);
  });

  it('reads the obsolete RFC 850 date, its two-digit year within 50 years of now', () => {
    expect(parseRetryAfter('Monday, 30-Nov-26 12:00:30 GMT', now)).toBe(30_000);
    // 2099 would be more than 50 years ahead: the most recent past year ending in 99, 1999
    expect(parseRetryAfter('Tuesday, 30-Nov-99 12:00:30 GMT', now)).toBe(0);
  });

  it('reads the obsolete asctime date, with a space-padded day', () => {
    expect(parseRetryAfter('Mon Nov 30 12:00:30 2026', now)).toBe(30_000);
    expect(parseRetryAfter('Tue Dec  1 12:00:00 2026', now)).toBe(86_400_000);
  });

  it('reads a leap second as the first second of the next minute', () => {
    expect(parseRetryAfter('Mon, 30 Nov 2026 12:00:60 GMT', now)).toBe(60_000);
  });

  it('gives 0 (retry now) for a date in the past', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(0);
  });

  it.each([
    'Mon, 31 Nov 2026 12:00:00 GMT', // no 31 November
    'Mon, 31 Nov 2026 12:00:60 GMT',
    'Mon, 00 Nov 2026 12:00:00 GMT',
    'Mon, 30 Nov 2026 24:00:00 GMT',
    'Mon, 30 Nov 2026 12:60:00 GMT',
    'Mon, 30 Nov 2026 12:00:30 UTC', // HTTP-dates are in GMT
    'mon, 30 nov 2026 12:00:30 GMT', // day and month names are case-sensitive
    'Mon, 30 Nov 26 12:00:30 GMT',
    'Mon 30 Nov 2026 12:00:30 GMT',
    '2026-11-30T12:00:30Z', // ISO 8601 is not an HTTP-date
    'Nov 30 2026',
    '30 Nov 2026',
  ])('gives undefined for %j, which only looks like a date', (header) => {
    expect(parseRetryAfter(header, now)).toBeUndefined();
  });
});
