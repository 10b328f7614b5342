import { describe, expect, it } from 'vitest';
import {
  type CallRecord,
  figuresOf,
  kneeOf,
  quantile,
  reconvergenceMs,
  replaceBlock,
  runCriteria,
  type Sample,
  sweepIsFlat,
} from '../../scripts/e2e-real-metrics';

/**
 * The definitions behind `npm run e2e:real` (scripts/e2e-real.ts, adr/0085): the servers and the
 * sockets are in the script; what its figures mean is pinned here, with exact numbers.
 */

const sample = (tMs: number, limit: number, upstreamInflight = 0): Sample => ({
  tMs,
  limit,
  upstreamInflight,
  queued: 0,
});

describe('quantile', () => {
  it('is the nearest rank: the smallest value with at least q of the data at or below it', () => {
    const sorted = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    expect(quantile(sorted, 0.5)).toBe(5);
    expect(quantile(sorted, 0.9)).toBe(9);
    expect(quantile(sorted, 0.99)).toBe(10);
    expect(quantile(sorted, 0.1)).toBe(1);
  });

  it('is NaN for no data', () => {
    expect(quantile([], 0.9)).toBeNaN();
  });
});

describe('the knee of a fixed-cap sweep', () => {
  it('is the smallest cap reaching 95% of the best goodput, not the cap of the best', () => {
    const knee = kneeOf([
      { cap: 1, goodput: 46 },
      { cap: 2, goodput: 92 },
      { cap: 3, goodput: 138 },
      { cap: 4, goodput: 186 },
      { cap: 5, goodput: 196 },
      { cap: 6, goodput: 197 },
    ]);
    // 0.95 x 197 = 187.15: cap 4 (186) falls short, cap 5 reaches it.
    expect(knee).toEqual({ knee: 5, bestGoodput: 197, bestCap: 6 });
  });

  it('takes the first cap past the threshold even when a later cap dips below it', () => {
    const knee = kneeOf([
      { cap: 1, goodput: 50 },
      { cap: 2, goodput: 96 },
      { cap: 3, goodput: 100 },
      { cap: 4, goodput: 90 },
    ]);
    expect(knee.knee).toBe(2);
  });

  it('refuses a sweep that served nothing rather than calling cap 1 the knee', () => {
    expect(() => kneeOf([{ cap: 1, goodput: 0 }])).toThrow(/no cap of the sweep served/);
  });
});

describe('when the sweep stops', () => {
  it('does not stop while a cap still beats every lower cap by more than 3%', () => {
    expect(
      sweepIsFlat([
        { cap: 1, goodput: 50 },
        { cap: 2, goodput: 100 },
        { cap: 3, goodput: 101 },
        { cap: 4, goodput: 104.1 },
      ]),
    ).toBe(false);
  });

  it('stops after two caps in a row gained at most 3% over the best below them', () => {
    expect(
      sweepIsFlat([
        { cap: 1, goodput: 50 },
        { cap: 2, goodput: 100 },
        { cap: 3, goodput: 103 },
        { cap: 4, goodput: 99 },
      ]),
    ).toBe(true);
  });

  it('does not stop on the first two caps alone', () => {
    expect(
      sweepIsFlat([
        { cap: 1, goodput: 50 },
        { cap: 2, goodput: 50 },
      ]),
    ).toBe(false);
  });
});

describe('re-converged after a phase change', () => {
  // A change at 20 s; the next one at 40 s; band [1.4, 4] (0.7-2 x a knee of 2).
  const samples: Sample[] = [];
  const limits = (fromS: number, toS: number, limit: number) => {
    for (let t = fromS * 1000; t < toS * 1000; t += 100) samples.push(sample(t, limit));
  };
  limits(0, 20, 6); // before the change: outside the new band, and not counted
  limits(20, 27, 9);
  limits(27, 31, 4);
  limits(31, 31.1, 5); // one sample out of the band: the clock restarts after it
  limits(31.1, 40, 4);

  it('counts from the change to the first sample after which every sample of the phase is in the band', () => {
    expect(reconvergenceMs(samples, 20_000, 40_000, 1.4, 4)).toBe(11_100);
  });

  it('is undefined when the phase ends outside the band', () => {
    expect(reconvergenceMs(samples, 20_000, 27_000, 1.4, 4)).toBe(undefined);
    expect(reconvergenceMs(samples, 20_000, 31_050, 1.4, 4)).toBe(undefined);
  });

  it('ends the phase at the next change: what follows it does not count', () => {
    expect(reconvergenceMs(samples, 20_000, 30_000, 1.4, 4)).toBe(7_000);
  });

  it('is 0 when the limit is in the band from the change on', () => {
    expect(reconvergenceMs(samples, 31_100, 40_000, 1.4, 4)).toBe(0);
  });
});

describe('the figures of a run', () => {
  const call = (startMs: number, endMs: number, outcome: CallRecord['outcome'], upstreamMs?: number): CallRecord => ({
    startMs,
    endMs,
    outcome,
    upstreamMs,
  });
  const calls: CallRecord[] = [
    call(0, 50, 'ok', 20), // ended before the window: not counted
    call(900, 1_100, 'ok', 30),
    call(1_000, 1_400, 'ok', 40),
    call(1_500, 1_500, 'shed'),
    call(1_000, 3_000, 'timeout', 2_500), // answered late: its time inside fn counts, its goodput does not
    call(2_000, 2_010, 'error'),
    call(2_500, Number.NaN, 'ok'), // still running when the run ended
  ];
  const samples = [sample(500, 9, 1), sample(1_000, 5, 2), sample(2_000, 6, 4), sample(3_000, 7, 6)];
  const f = figuresOf(calls, samples, 1_000, 3_001);

  it('counts goodput as successful calls per second of the window', () => {
    expect(f.ok).toBe(2);
    expect(f.goodput).toBeCloseTo(2 / 2.001, 10);
  });

  it('counts outcomes by the time the call ended, and never a call still running', () => {
    expect([f.calls, f.shed, f.timeouts, f.errors]).toEqual([5, 1, 1, 1]);
  });

  it('keeps the upstream latency (inside fn) apart from the caller latency (queue included)', () => {
    expect(f.upstream.p50).toBe(40);
    expect(f.upstream.p99).toBe(2_500);
    expect(f.caller).toEqual({ p50: 200, p90: 400, p99: 400 });
  });

  it('takes the limit and in-flight from the samples of the window only', () => {
    expect(f.limit.median).toBe(6);
    expect(f.upstreamInflight.mean).toBe(4);
  });
});

describe('the criteria of a run of the defaults', () => {
  const knee = { knee: 5, bestGoodput: 200, bestCap: 8 };
  const figures = (goodput: number, p90: number, median: number) => ({
    ...figuresOf([], [], 0, 1_000),
    goodput,
    upstream: { p50: p90, p90, p99: p90 },
    limit: { median, p10: median, p90: median, mean: median },
  });

  it('meets each bound at its edge: 0.9 x best goodput, 2 x no-load p90, 0.7 and 2 x knee', () => {
    const atEdges = runCriteria('s', 'r', figures(180, 50, 3.5), knee, 25);
    expect(atEdges.map((c) => c.pass)).toEqual([true, true, true, true]);
    expect(runCriteria('s', 'r', figures(200, 20, 10), knee, 25).map((c) => c.pass)).toEqual([true, true, true, true]);
  });

  it('fails each bound just past its edge', () => {
    expect(runCriteria('s', 'r', figures(179.9, 50.1, 3.4), knee, 25).map((c) => c.pass)).toEqual([
      false,
      false,
      false,
      true,
    ]);
    expect(runCriteria('s', 'r', figures(200, 20, 10.1), knee, 25)[2]!.pass).toBe(false);
  });

  it('fails every bound on a run that measured nothing (NaN passes no comparison)', () => {
    expect(runCriteria('s', 'r', figuresOf([], [], 0, 1_000), knee, 25).map((c) => c.pass)).toEqual([
      false,
      false,
      false,
      false,
    ]);
  });

  it('prints the measured figure beside its bound', () => {
    const [goodput, p90, limit] = runCriteria('s', 'r', figures(150, 124, 17), knee, 26);
    expect(goodput!.measured).toBe('150.0/s (0.75 x best fixed)');
    expect(goodput!.bound).toBe('>= 180.0/s (0.9 x best fixed 200.0/s at cap 8)');
    expect(p90!.measured).toBe('124.0 ms (4.77 x no-load)');
    expect(p90!.bound).toBe('<= 52.0 ms (2 x no-load p90 26.0 ms)');
    expect(limit!.bound).toBe('in [3.5, 10.0] (0.7-2 x knee 5)');
  });
});

describe('the limit swing (issue 20 item 4)', () => {
  const knee = { knee: 5, bestGoodput: 200, bestCap: 8 };
  const swing = (p10: number, median: number, p90: number) =>
    runCriteria(
      's',
      'r',
      {
        ...figuresOf([], [], 0, 1_000),
        limit: { median, p10, p90, mean: median },
      },
      knee,
      25,
    )[3]!;

  it('holds the p10 and p90 within +-20% of the median', () => {
    expect(swing(8, 10, 12).pass).toBe(true);
    expect(swing(7.9, 10, 12).pass).toBe(false);
    expect(swing(8, 10, 12.1).pass).toBe(false);
    expect(swing(8, 10, 12).measured).toBe('20% (p10 8.0, median 10.0, p90 12.0)');
  });

  it('is never tighter than one call: the limit is an integer', () => {
    expect(swing(2, 3, 4).pass).toBe(true);
    expect(swing(2, 3, 4).bound).toBe('<= 33% (+-20% of the median, at least one call)');
    expect(swing(1, 3, 4).pass).toBe(false);
  });
});

describe('the generated block of docs/real-servers.md', () => {
  it('replaces only what lies between its markers', () => {
    const text = 'a\n<!-- e2e-real:figures -->\nold\n<!-- /e2e-real:figures -->\nb\n';
    expect(replaceBlock(text, 'figures', 'new')).toBe(
      'a\n<!-- e2e-real:figures -->\nnew\n<!-- /e2e-real:figures -->\nb\n',
    );
  });

  it('throws when the markers are gone instead of leaving the doc stale', () => {
    expect(() => replaceBlock('no markers', 'figures', 'new')).toThrow(/no <!-- e2e-real:figures -->/);
  });
});
