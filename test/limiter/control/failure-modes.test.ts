import { describe, expect, it } from 'vitest';
import type { AlgorithmName } from '../../../src/limiter/controller';
import { defaultBeta, resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { feed, feedUntilClose, feedWindows, observeAt } from './support/feed';
import { fmt, lowestLimit, report, runModel, span } from './support/model';
import { runScripted } from './support/scripted';

/**
 * The failure modes of the reference implementations that resilix must not have (issue 5), one
 * numbered block each. Closed-loop ones run on the model in support/model.ts (C servers, 100 ms
 * service, 400 clients pinned at the limit) and print their figures.
 */

function controllerFor(algorithm: AlgorithmName = 'vegas'): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig({ algorithm }));
}

/** Little-consistent windows whose latencies cycle 90..110 ms; `lucky` replaces one sample. */
function jitteredWindows(controller: LimitControlLoop, windows: number, luckyWindow = -1, luckyMs = 1): number {
  let at = 0;
  for (let w = 0; w < windows; w++) {
    const count = controller.limit * 20;
    for (let i = 0; i < count; i++) {
      const latencyMs = w === luckyWindow && i === 7 ? luckyMs : 90 + (i % 21);
      observeAt(controller, { verdict: 'ok', latencyMs }, at + (i * 2_000) / count, controller.limit);
    }
    at += 2_000;
  }
  observeAt(controller, { verdict: 'ok', latencyMs: 100 }, at, controller.limit);
  return at;
}

/** 3 s of 400 callers on an upstream that answers in 90..110 ms whatever the load; call `luckyIndex` in 1 ms. */
function slowStartOnFlatUpstream(luckyIndex: number): LimitControlLoop {
  const controller = controllerFor();
  runScripted({
    controller,
    durationMs: 3_000,
    clients: 400,
    call: ({ index }) => ({ latencyMs: index === luckyIndex ? 1 : 90 + (index % 21) }),
  });
  return controller;
}

describe('failure mode 1: one lucky fast sample sets the baseline and crashes the limit', () => {
  it('leaves baseline and limit where they would be without it (high traffic)', () => {
    const control = controllerFor();
    const lucky = controllerFor();
    jitteredWindows(control, 12);
    jitteredWindows(lucky, 12, 6, 1);
    report(
      'FM1 lucky 1 ms sample among 100 ms ones',
      `baseline ${fmt(lucky.snapshot().baselineMs!)} ms (without it ${fmt(control.snapshot().baselineMs!)}; a running minimum would say 1), ` +
        `limit ${lucky.limit} (without it ${control.limit})`,
    );
    // One sample among thousands moves the window mean by 0.004%: the baseline does not follow it.
    expect(lucky.snapshot().baselineMs! / control.snapshot().baselineMs!).toBeCloseTo(1, 3);
    expect(lucky.limit).toBe(control.limit);
    expect(control.limit).toBe(200);
  });

  // Known bug (it.fails until fixed): the slow start's young reference pools the mean LOG latency of its first
  // rounds, and ln(1 ms) = 0 next to ln(100 ms) = 4.6: one 1 ms answer among the first 8 samples
  // drags the reference from ~95 ms to ~55 ms for good (a mature reference pools only rounds within
  // 1/8 of it). Every later round then reads as a rise of ~80%: the slow start ends on a flat
  // upstream, and the drain cuts to a fraction of what the upstream serves.
  it.fails('does not end the slow start on one 1 ms answer among its first calls (flat upstream)', () => {
    expect(slowStartOnFlatUpstream(5).limit).toBe(200); // 55: the slow start ended at 119 and drained
  });

  it('reaches maxLimit on the same flat upstream without the lucky answer', () => {
    const controller = slowStartOnFlatUpstream(-1);
    expect(controller.snapshot()).toMatchObject({ limit: 200, slowStart: false });
  });

  it("rejects most of a window's worth of lucky answers at 8 requests a minute (median of three windows)", () => {
    const run = (withLucky: boolean): LimitControlLoop => {
      const controller = controllerFor();
      // 8 a minute for 20 minutes, in-flight 1; 30 s (a window's worth) of 1 ms answers at minute 10.
      for (let i = 0; i < 160; i++) {
        const at = i * 7_500;
        const lucky = withLucky && at >= 600_000 && at < 630_000;
        observeAt(controller, { verdict: 'ok', latencyMs: lucky ? 1 : 200 + (i % 5) * 10 }, at, 1);
      }
      return controller;
    };
    const control = run(false);
    const lucky = run(true);
    report(
      'FM1 30 s of 1 ms answers at 8 req/min',
      `baseline ${fmt(lucky.snapshot().baselineMs!)} ms (without them ${fmt(control.snapshot().baselineMs!)}; within 20%, ` +
        `a running minimum would say 1), limit ${lucky.limit} (${control.limit})`,
    );
    // The four lucky answers straddle two windows (means 61 and 163 ms): the median of three drops
    // the first; the second passes, a 16% dip. Vegas steers on the window mean (adr/0048), which a
    // 1 ms answer among four moves by a quarter (the p90 moved a rank: under 5% before).
    expect(lucky.snapshot().baselineMs! / control.snapshot().baselineMs!).toBeGreaterThan(0.8);
    expect(lucky.limit).toBe(control.limit);
  });
});

describe('failure mode 2: fast failures (1 ms errors) lower the baseline or raise the limit', () => {
  it('never lets a window of 1 ms failures touch the baseline or grow the limit', () => {
    const controller = controllerFor();
    const start = feedWindows(controller, 4, 0, { inflight: 30 }); // past the slow start, baseline 100 ms
    const end = feedUntilClose(controller, start, { inflight: 30 }); // a window begins here
    const before = controller.snapshot();
    for (let i = 0; i < 20; i++) {
      feed(controller, {
        count: 1_000,
        fromMs: end + 1 + i * 30_000,
        toMs: end + 1 + (i + 1) * 30_000,
        verdict: 'failure',
        latencyMs: 1,
        inflight: 30,
      });
    }
    const after = controller.snapshot();
    report(
      'FM2 ten minutes of 1 ms failures',
      `baseline ${before.baselineMs} -> ${after.baselineMs} ms, estimate ${fmt(before.estimate, 3)} -> ${fmt(after.estimate, 3)}`,
    );
    expect(after.windows).toBeGreaterThan(before.windows + 10);
    expect(after.baselineMs).toBe(100);
    // Failures carry no latency: every window of them holds (vegas has nothing to steer by).
    expect(after.estimate).toBe(before.estimate);
    expect(after.lastChange).toMatchObject({ direction: 'hold', reason: 'warming-up' });
  });

  it('tunes the same with 30% fast failures as without (closed loop, C = 50)', () => {
    const results = [0, 0.3].map((share) => {
      const controller = controllerFor();
      const run = runModel({
        controller,
        seed: 5,
        durationMs: 400_000,
        initial: { capacity: 50, serviceMs: 100, clients: 400, fastFailureShare: share, failureLatencyMs: 1 },
      });
      return span(run, 200_000, 400_000);
    });
    const [clean, failing] = results as [ReturnType<typeof span>, ReturnType<typeof span>];
    report(
      'FM2 30% failures at 1 ms',
      `baseline ${fmt(failing.lastBaselineMs)} ms (clean ${fmt(clean.lastBaselineMs)}; within 3%), limit ${fmt(failing.meanLimit)} (clean ${fmt(clean.meanLimit)}; within 5%)`,
    );
    expect(Math.abs(failing.lastBaselineMs - clean.lastBaselineMs)).toBeLessThanOrEqual(0.03 * clean.lastBaselineMs);
    // A 1 ms failure holds a slot for 1 ms and puts no load on the upstream, so the same limit
    // queues a little less there (54.0 clean, 55.0 failing); a fast sample pulling the latency
    // down would have raised it far more.
    expect(Math.abs(failing.meanLimit - clean.meanLimit)).toBeLessThanOrEqual(0.05 * clean.meanLimit);
  });
});

describe('failure mode 3: every call ending at the same deadline (stable timeouts) lets the limit grow', () => {
  /** Five minutes of windows where every call times out at a 5 s deadline, after the slow start. */
  function timeoutStorm(): { estimates: number[]; limits: number[]; controller: LimitControlLoop } {
    const controller = controllerFor();
    const end = feedWindows(controller, 4, 0, { inflight: 30 });
    const estimates: number[] = [];
    const limits: number[] = [controller.limit];
    let windows = controller.snapshot().windows;
    for (let w = 0; w < 150; w++) {
      feedWindows(controller, 1, end + w * 2_000, { verdict: 'timeout', latencyMs: 5_000, count: 100 });
      const snapshot = controller.snapshot();
      if (snapshot.windows > windows) {
        estimates.push(snapshot.estimate);
        limits.push(snapshot.limit);
      }
      windows = snapshot.windows;
    }
    return { estimates, limits, controller };
  }

  it('shrinks the estimate on every window of timeouts, x0.81, down to the floor (direct feed)', () => {
    const { estimates, limits, controller } = timeoutStorm();
    report('FM3 five minutes of timeouts at a 5 s deadline', `limit ${limits.slice(0, 18).join(' -> ')} ...`);
    const floorAt = estimates.indexOf(1);
    expect(floorAt).toBeGreaterThan(10);
    for (let w = 1; w < floorAt; w++) {
      expect(estimates[w]).toBeCloseTo(Math.max(1, estimates[w - 1]! * 0.81), 10);
    }
    expect(estimates.slice(floorAt).every((estimate) => estimate === 1)).toBe(true);
    expect(controller.limit).toBe(1);
  });

  // Regression (fixed): the admitted limit is the estimate rounded by error diffusion (adr/0049), and
  // the carry can round a shrinking estimate up past the last admitted limit: here 5 -> 3 -> 4 on
  // windows of nothing but timeouts (the estimate fell x0.81 each time). A window with any reduce
  // signal must never admit more (adr/0035).
  it('never admits more after a window of timeouts (the rounding carry included)', () => {
    const { limits } = timeoutStorm();
    expect(limits.every((limit, i) => i === 0 || limit <= limits[i - 1]!)).toBe(true);
  });

  it('clamps at minLimit in a closed loop where every call hits the deadline (C = 10, 1 s service, 500 ms deadline)', () => {
    const controller = controllerFor();
    const run = runModel({
      controller,
      seed: 3,
      durationMs: 300_000,
      initial: { capacity: 10, serviceMs: 1_000, clients: 400, deadlineMs: 500 },
    });
    const late = span(run, 120_000, 300_000);
    report(
      'FM3 closed loop, all calls time out',
      `limit over the last 3 min in [${late.minLimit}, ${late.maxLimit}] (1)`,
    );
    // The slow start never grows without an answer that came back in time: it stays at 1.
    expect(run.samples.every((sample) => sample.limit === 1)).toBe(true);
    expect(late.maxLimit).toBe(1);
  });
});

describe('failure mode 4: during a long incident the baseline drifts up to meet the latency, so shedding stops', () => {
  function incident(
    algorithm: AlgorithmName,
    seed = 11,
  ): {
    before: ReturnType<typeof span>;
    late: ReturnType<typeof span>;
    raises: number;
  } {
    const controller = controllerFor(algorithm);
    const run = runModel({
      controller,
      seed,
      durationMs: 2_100_000,
      initial: { capacity: 50, serviceMs: 100, clients: 400 },
      schedule: [{ atMs: 300_000, set: { capacity: 8 } }],
    });
    const before = span(run, 200_000, 300_000);
    const late = span(run, 1_500_000, 2_100_000);
    report(
      `FM4 ${algorithm}, 30 min incident`,
      `baseline ${fmt(before.lastBaselineMs)} -> ${fmt(late.lastBaselineMs)} ms (unchanged), raises ${controller.snapshot().baselineRaises} (0), ` +
        `limit in the last 10 min ${late.minLimit}..${late.maxLimit} (it was ${fmt(before.meanLimit)}), smoothed latency ${fmt(late.meanLatencyMs)} ms`,
    );
    return { before, late, raises: controller.snapshot().baselineRaises };
  }

  // Known bug (it.fails until fixed), the jump-rule drain below: gradient2's re-measure after the
  // drop can land on a window that straddles it, and its baseline comes out high (0 raises counted:
  // the jump rule re-measures without counting a raise). Seed 4: 12.6% high; over seeds 1-16 the
  // rest are within 1.4%. Seeds 3 and 11 (8.7% and 12.1%) were a second bug, fixed by adr/0101: the
  // window before the jump lowered the baseline to the smoothed latency and gave it its own mean,
  // which half straddled the drop, so the drain aimed at that mean (the test in baseline.test.ts).
  it.fails('gradient2 keeps its baseline and keeps shedding through 30 minutes of capacity 50 -> 8', () => {
    const { before, late, raises } = incident('gradient2', 4);
    expect(raises).toBe(0);
    // Not drifted up to meet the latency (2x the baseline here): within 1%.
    expect(Math.abs(late.lastBaselineMs / before.lastBaselineMs - 1)).toBeLessThan(0.01);
    expect(late.maxLimit).toBeLessThanOrEqual(1.2 * (1.5 * 8 + 4));
  });

  // Was a bug (it.fails until adr/0090; the straddling drain is still in baseline.test.ts): the
  // capacity drop makes the jump rule drain and re-measure, but its drain target is the completion
  // rate of a window that straddles the drop (half of it at 50 servers): 54 -> 10, above the 8
  // servers left, and the baseline window measured our own queue at 10 in flight: 137 ms, not 100.
  // Which seeds end high depends on the path: over seeds 1-16, 3, 4 and 9 ended 8-25% high before
  // adr/0119 and 4, 9 and 11 after it (7.7-25%; adr/0102: a second drain that fixed seed 4 and
  // changed no gated run was not added). So this holds the count, not one seed: at most 3 of 16.
  it('vegas keeps its baseline and keeps shedding through 30 minutes of capacity 50 -> 8, on 13 of 16 seeds', () => {
    const runs = Array.from({ length: 16 }, (_, i) => incident('vegas', i + 1));
    for (const { raises } of runs) expect(raises).toBe(0);
    const kept = runs.filter(({ before, late }) => Math.abs(late.lastBaselineMs / before.lastBaselineMs - 1) < 0.05);
    expect(kept.length).toBeGreaterThanOrEqual(13);
    for (const { late } of kept) expect(late.maxLimit).toBeLessThanOrEqual(1.2 * (8 + defaultBeta(10)));
  });
});

describe('failure mode 5: after a permanent slowdown at unchanged capacity the limit stays clamped at the minimum', () => {
  it('vegas climbs back near capacity once its baseline is re-taken at the slower latency (C = 20, 100 -> 300 ms)', () => {
    const controller = controllerFor();
    const run = runModel({
      controller,
      seed: 9,
      durationMs: 900_000,
      initial: { capacity: 20, serviceMs: 100, clients: 400 },
      schedule: [{ atMs: 300_000, set: { serviceMs: 300 } }],
    });
    const before = span(run, 200_000, 300_000);
    const lowest = lowestLimit(run, 300_000, 900_000);
    const after = span(run, 600_000, 900_000);
    report(
      'FM5 vegas permanent 3x at C = 20',
      `limit ${fmt(before.meanLimit)} -> lowest ${lowest} -> ${fmt(after.meanLimit)} (>= 0.8 x C = 16), baseline ${fmt(before.lastBaselineMs)} -> ` +
        `${fmt(after.lastBaselineMs)} ms`,
    );
    expect(after.meanLimit).toBeGreaterThanOrEqual(16);
    expect(after.lastBaselineMs / before.lastBaselineMs).toBeGreaterThan(2.7);
    expect(after.lastBaselineMs / before.lastBaselineMs).toBeLessThan(3.3);
  });
});

describe('failure mode 6: at low traffic the limiter never acts because its window never fills', () => {
  it('closes windows about every 30 s at 8 requests a minute, and acts on a 10x rise within a minute', () => {
    const controller = controllerFor();
    const run = runModel({
      controller,
      seed: 4,
      durationMs: 1_500_000,
      sampleEveryMs: 10_000,
      initial: { capacity: 50, serviceMs: 200, arrivalsPerMinute: 8 },
      schedule: [{ atMs: 600_000, set: { serviceMs: 2_000 } }],
    });
    // One call in flight at a time: the limit sits at the app-limited 2; the rise drains it to 1
    // and re-measures the baseline at the new latency (adr/0047).
    const firstDrop = run.samples.find((s) => s.atMs >= 600_000 && s.limit < 2)?.atMs ?? Number.NaN;
    const remeasured = run.samples.find((s) => s.atMs >= 600_000 && s.baselineMs! > 1_500)?.atMs ?? Number.NaN;
    const windows = controller.snapshot().windows;
    report(
      'FM6 8 req/min',
      `${windows} windows in 25 min (a minSamples-only window of 50 would close ~4), first drop ${fmt((firstDrop - 600_000) / 1_000, 0)} s after ` +
        `the rise (<= 60), baseline re-measured ${fmt((remeasured - 600_000) / 1_000, 0)} s after it (<= 180), limit at the end ${controller.limit}`,
    );
    expect(windows).toBeGreaterThanOrEqual(40);
    expect(firstDrop - 600_000).toBeLessThanOrEqual(60_000);
    expect(remeasured - 600_000).toBeLessThanOrEqual(180_000);
    expect(controller.snapshot().baselineMs).toBeGreaterThan(1_800);
    expect(controller.limit).toBe(2);
  });
});

describe('failure mode 7: queue wait counted as upstream latency (the limiter punishing itself for queueing)', () => {
  it('tunes on latencyMs only: a minute of queuedMs on every call changes nothing', () => {
    const quiet = controllerFor();
    const queued = controllerFor();
    feedWindows(quiet, 30, 0, { latencyMs: 120, inflight: 30 });
    feedWindows(queued, 30, 0, { latencyMs: 120, inflight: 30, queuedMs: 60_000 });
    expect(queued.snapshot()).toEqual(quiet.snapshot());
    expect(quiet.snapshot()).toMatchObject({ limit: 60, baselineMs: 120 });
  });

  it('keeps the service-time baseline in a closed loop where callers wait far longer than the upstream takes', () => {
    const controller = controllerFor();
    const run = runModel({
      controller,
      seed: 2,
      durationMs: 300_000,
      initial: { capacity: 50, serviceMs: 100, clients: 400 },
    });
    const s = span(run, 200_000, 300_000);
    report(
      'FM7 queueing in front of the limiter',
      `longest wait in our queue ${fmt(run.maxQueuedMs, 0)} ms, baseline ${fmt(s.lastBaselineMs)} ms, smoothed latency ${fmt(s.meanLatencyMs)} ms, limit ${fmt(s.meanLimit)}`,
    );
    expect(run.maxQueuedMs).toBeGreaterThan(500);
    // The no-load mean, 100.5 ms: the baseline window takes only calls admitted after the drain.
    expect(s.lastBaselineMs).toBeLessThan(103);
    expect(s.meanLimit).toBeGreaterThanOrEqual(50);
  });
});
