import { describe, expect, it } from 'vitest';
import type { AlgorithmName } from '../../../src/limiter/controller';
import { LimitControlLoop, resolveControlConfig } from '../../../src/limiter/control-loop';
import { feed, feedWindows } from './support/feed';
import { fmt, lowestLimit, report, runModel, span } from './support/model';

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
      controller.observe({ verdict: 'ok', latencyMs }, at + (i * 2_000) / count, controller.limit);
    }
    at += 2_000;
  }
  controller.observe({ verdict: 'ok', latencyMs: 100 }, at, controller.limit);
  return at;
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
    // One sample among ~2 500 moves the window's p90 by a fraction of a rank: 0.002% here.
    expect(lucky.snapshot().baselineMs! / control.snapshot().baselineMs!).toBeCloseTo(1, 3);
    expect(lucky.limit).toBe(control.limit);
  });

  it("rejects even a window's worth of lucky answers at 8 requests a minute (median of three windows)", () => {
    const run = (withLucky: boolean): LimitControlLoop => {
      const controller = controllerFor();
      // 8 a minute for 20 minutes, in-flight 1; 30 s (a window's worth) of 1 ms answers at minute 10.
      for (let i = 0; i < 160; i++) {
        const at = i * 7_500;
        const lucky = withLucky && at >= 600_000 && at < 630_000;
        controller.observe({ verdict: 'ok', latencyMs: lucky ? 1 : 200 + (i % 5) * 10 }, at, 1);
      }
      return controller;
    };
    const control = run(false);
    const lucky = run(true);
    report(
      'FM1 30 s of 1 ms answers at 8 req/min',
      `baseline ${fmt(lucky.snapshot().baselineMs!)} ms (without them ${fmt(control.snapshot().baselineMs!)}; within 5%, ` +
        `a running minimum would say 1), limit ${lucky.limit} (${control.limit})`,
    );
    // The lucky answers move a window's p90 by a rank or two; no window is made of them.
    expect(lucky.snapshot().baselineMs! / control.snapshot().baselineMs!).toBeGreaterThan(0.95);
    expect(lucky.limit).toBe(control.limit);
  });
});

describe('failure mode 2: fast failures (1 ms errors) lower the baseline or raise the limit', () => {
  it('never lets a window of 1 ms failures touch the baseline or grow the limit', () => {
    const controller = controllerFor();
    const end = feedWindows(controller, 4, 0); // baseline 100 ms, limit 36
    const before = controller.snapshot();
    for (let i = 0; i < 20; i++) {
      feed(controller, {
        count: 1_000,
        fromMs: end + i * 30_000,
        toMs: end + (i + 1) * 30_000,
        verdict: 'failure',
        latencyMs: 1,
      });
    }
    const after = controller.snapshot();
    report(
      'FM2 ten minutes of 1 ms failures',
      `baseline ${before.baselineMs} -> ${after.baselineMs} ms, limit ${before.limit} -> ${after.limit}`,
    );
    expect(after.baselineMs).toBe(100);
    expect(after.limit).toBeLessThanOrEqual(before.limit);
    expect(after.lastChange?.reason).toBe('failures');
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
      `baseline ${fmt(failing.lastBaselineMs)} ms (clean ${fmt(clean.lastBaselineMs)}; within 3%), limit ${fmt(failing.meanLimit)} (clean ${fmt(clean.meanLimit)}; not higher)`,
    );
    expect(Math.abs(failing.lastBaselineMs - clean.lastBaselineMs)).toBeLessThanOrEqual(0.03 * clean.lastBaselineMs);
    expect(failing.meanLimit).toBeLessThanOrEqual(clean.meanLimit);
  });
});

describe('failure mode 3: every call ending at the same deadline (stable timeouts) lets the limit grow', () => {
  it('shrinks on every window of timeouts and never grows (direct feed)', () => {
    const controller = controllerFor();
    const end = feedWindows(controller, 4, 0);
    const limits: number[] = [];
    controller.changes.subscribe((change) => limits.push(change.to));
    feedWindows(controller, 150, end, { verdict: 'timeout', latencyMs: 5_000, count: 100 }); // five minutes
    report('FM3 five minutes of timeouts at a 5 s deadline', `limit 36 -> ${limits.join(' -> ')}`);
    expect(limits.every((limit, i) => i === 0 || limit < limits[i - 1]!)).toBe(true);
    expect(controller.limit).toBe(4);
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
      `limit over the last 3 min in [${late.minLimit}, ${late.maxLimit}] (4)`,
    );
    expect(late.maxLimit).toBe(4);
  });
});

describe('failure mode 4: during a long incident the baseline drifts up to meet the latency, so shedding stops', () => {
  for (const algorithm of ['vegas', 'gradient2'] as const) {
    it(`${algorithm} keeps its baseline and keeps shedding through 30 minutes of capacity 50 -> 8`, () => {
      const controller = controllerFor(algorithm);
      const run = runModel({
        controller,
        seed: 11,
        durationMs: 2_100_000,
        initial: { capacity: 50, serviceMs: 100, clients: 400 },
        schedule: [{ atMs: 300_000, set: { capacity: 8 } }],
      });
      const before = span(run, 200_000, 300_000);
      const late = span(run, 1_500_000, 2_100_000);
      const designed = algorithm === 'vegas' ? 8 + 6 : 1.5 * 8 + 4;
      report(
        `FM4 ${algorithm}, 30 min incident`,
        `baseline ${fmt(before.lastBaselineMs)} -> ${fmt(late.lastBaselineMs)} ms (unchanged), resets ${controller.snapshot().baselineResets} (0), ` +
          `limit in the last 10 min ${late.minLimit}..${late.maxLimit} (<= ${fmt(1.2 * designed)}; it was ${fmt(before.meanLimit)}), ` +
          `smoothed latency ${fmt(late.meanLatencyMs)} ms`,
      );
      expect(controller.snapshot().baselineResets).toBe(0);
      expect(late.lastBaselineMs).toBeCloseTo(before.lastBaselineMs, 0);
      expect(late.maxLimit).toBeLessThanOrEqual(1.2 * designed);
    });
  }
});

describe('failure mode 5: after a permanent slowdown at unchanged capacity the limit stays clamped at the minimum', () => {
  it('vegas climbs back near capacity once goodput shows the slowdown is not its queueing (C = 20, 100 -> 300 ms)', () => {
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
        `${fmt(after.lastBaselineMs)} ms, resets ${controller.snapshot().baselineResets}`,
    );
    expect(after.meanLimit).toBeGreaterThanOrEqual(16);
    expect(controller.snapshot().baselineResets).toBeGreaterThanOrEqual(1);
  });
});

describe('failure mode 6: at low traffic the limiter never acts because its window never fills', () => {
  it('closes windows about every 30 s at 8 requests a minute, and acts on a 10x rise within 3 minutes', () => {
    const controller = controllerFor();
    const run = runModel({
      controller,
      seed: 4,
      durationMs: 1_500_000,
      sampleEveryMs: 10_000,
      initial: { capacity: 50, serviceMs: 200, arrivalsPerMinute: 8 },
      schedule: [{ atMs: 600_000, set: { serviceMs: 2_000 } }],
    });
    const firstDrop = run.samples.find((s) => s.atMs >= 600_000 && s.limit < 20)?.atMs ?? Number.NaN;
    const windows = controller.snapshot().windows;
    report(
      'FM6 8 req/min',
      `${windows} windows in 25 min (a minSamples-only window of 50 would close ~4), first drop ${fmt((firstDrop - 600_000) / 1_000, 0)} s after ` +
        `the rise (<= 180), limit at the end ${controller.limit}`,
    );
    expect(windows).toBeGreaterThanOrEqual(40);
    expect(firstDrop - 600_000).toBeLessThanOrEqual(180_000);
    expect(controller.limit).toBeLessThan(20);
  });
});

describe('failure mode 7: queue wait counted as upstream latency (the limiter punishing itself for queueing)', () => {
  it('tunes on latencyMs only: a minute of queuedMs on every call changes nothing', () => {
    const quiet = controllerFor();
    const queued = controllerFor();
    feedWindows(quiet, 30, 0, { latencyMs: 120 });
    feedWindows(queued, 30, 0, { latencyMs: 120, queuedMs: 60_000 });
    expect(queued.snapshot()).toEqual(quiet.snapshot());
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
    expect(s.lastBaselineMs).toBeLessThan(125);
    expect(s.meanLimit).toBeGreaterThanOrEqual(50);
  });
});
