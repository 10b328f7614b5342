import type { ScenarioResult } from '../engine/scenario';
import { timeSeriesSpec, type PlotRun } from './plots';
import type { TopLevelSpec } from 'vega-lite';

/** A figure for docs/sim/: a file name and the vega-lite spec that renders it. */
export interface Figure {
  readonly file: string;
  readonly caption: string;
  readonly spec: TopLevelSpec;
}

function byName(results: readonly ScenarioResult[], name: string): ScenarioResult | undefined {
  return results.find((r) => r.name === name);
}

function runsOf(result: ScenarioResult, mainLabel: string): PlotRun[] {
  return [
    { label: mainLabel, series: result.series },
    ...result.comparisons.map((c) => ({ label: c.label, series: c.series })),
  ];
}

/** The figures the docs show, from whichever results are present. */
export function figures(results: readonly ScenarioResult[]): Figure[] {
  const out: Figure[] = [];
  for (const capacity of [10, 50, 150]) {
    const r = byName(results, `convergence-c${capacity}-vegas`);
    if (r === undefined) continue;
    out.push({
      file: `convergence-c${capacity}.svg`,
      caption: `Scenario 1: vegas against capacity ${capacity} under 2x overload`,
      spec: timeSeriesSpec({
        title: r.title,
        runs: [{ label: 'vegas', series: r.series }],
        phases: r.phases,
        panels: [['limit', 'inflight'], ['latencyP99', 'latencyP50'], ['shedRate']],
        capacity: [{ fromMs: 0, toMs: r.simulatedMs, value: capacity }],
      }),
    });
  }
  const halves = byName(results, 'capacity-halves-vegas');
  if (halves !== undefined) {
    const [full, halved, restored] = halves.phases;
    out.push({
      file: 'capacity-halves.svg',
      caption: 'Scenario 2: capacity 50 -> 25 -> 50',
      spec: timeSeriesSpec({
        title: halves.title,
        runs: [{ label: 'vegas', series: halves.series }],
        phases: halves.phases,
        panels: [['limit', 'inflight'], ['latencyP99', 'latencyP50'], ['shedRate']],
        capacity: [
          { fromMs: full!.startMs, toMs: full!.endMs, value: 50 },
          { fromMs: halved!.startMs, toMs: halved!.endMs, value: 25 },
          { fromMs: restored!.startMs, toMs: restored!.endMs, value: 50 },
        ],
      }),
    });
  }
  const production = byName(results, 'production-slowdown');
  if (production !== undefined) {
    out.push({
      file: 'production-slowdown.svg',
      caption: 'Scenario 3: p50 0.35 s -> 10.4 s; breaker alone vs breaker + limiter',
      spec: timeSeriesSpec({
        title: production.title,
        runs: runsOf(production, 'breaker + limiter'),
        phases: production.phases,
        panels: [['inflight'], ['latencyP50'], ['shedRate']],
      }),
    });
  }
  const streaming = byName(results, 'streaming-mark');
  if (streaming !== undefined) {
    out.push({
      file: 'streaming.svg',
      caption: 'Scenario 4: 45 s streams, ctx.mark() at the first token vs no mark',
      spec: timeSeriesSpec({
        title: streaming.title,
        runs: runsOf(streaming, 'mark()'),
        phases: streaming.phases,
        panels: [['limit'], ['inflight'], ['latencyP99'], ['shedRate']],
      }),
    });
  }
  const low = byName(results, 'low-traffic');
  if (low !== undefined) {
    out.push({
      file: 'low-traffic.svg',
      caption: 'Scenario 5: 8 calls/min, a 10x latency rise for 10 minutes',
      spec: timeSeriesSpec({
        title: low.title,
        runs: [{ label: 'vegas', series: low.series }],
        phases: low.phases,
        panels: [['limit'], ['latencyP50']],
        points: 2400,
      }),
    });
  }
  const tail = byName(results, 'tail-timeouts');
  if (tail !== undefined) {
    out.push({
      file: 'tail-timeouts.svg',
      caption: 'Scenario 11: a healthy upstream where 1% of calls outlive the deadline',
      spec: timeSeriesSpec({
        title: tail.title,
        runs: [{ label: 'vegas', series: tail.series }],
        phases: tail.phases,
        panels: [['limit', 'inflight'], ['latencyP50'], ['shedRate']],
        points: 2400,
      }),
    });
  }
  const cliff = byName(results, 'latency-cliff-vegas');
  if (cliff !== undefined) {
    const runs: PlotRun[] = [{ label: 'fixed 200', series: cliff.comparisons[0]!.series }];
    for (const algorithm of ['vegas', 'gradient2', 'aimd']) {
      const r = byName(results, `latency-cliff-${algorithm}`);
      if (r !== undefined) runs.push({ label: algorithm, series: r.series });
    }
    out.push({
      file: 'latency-cliff.svg',
      caption: 'Scenario 6: the latency cliff of seed 000, fixed 200 vs adaptive',
      spec: timeSeriesSpec({
        title: 'Latency cliff 5 ms -> 100 ms -> 5 ms: served p99 and shed rate, fixed 200 vs adaptive',
        runs,
        phases: cliff.phases,
        panels: [['latencyP99'], ['shedRate'], ['limit']],
      }),
    });
  }
  const secretRuns: PlotRun[] = [];
  // aimd runs without the queue only: its 32 ms deadline would count our queue's wait (secret-capacity.ts).
  for (const [name, label] of [
    ['secret-capacity-aimd-noqueue', 'aimd (no queue)'],
    ['secret-capacity-vegas', 'vegas'],
  ] as const) {
    const r = byName(results, name);
    if (r !== undefined) secretRuns.push({ label, series: r.series });
  }
  if (secretRuns.length > 0) {
    const any = byName(results, 'secret-capacity-aimd-noqueue') ?? byName(results, 'secret-capacity-vegas')!;
    out.push({
      file: 'secret-capacity.svg',
      caption: 'Scenario 7: the secret capacity 3 of seed 002, minLimit 1',
      spec: timeSeriesSpec({
        title: 'Secret capacity 3 (seed 002): aimd and vegas, minLimit 1',
        runs: secretRuns,
        phases: any.phases,
        panels: [['limit'], ['latencyP50']],
        capacity: [{ fromMs: 0, toMs: any.simulatedMs, value: 3 }],
      }),
    });
  }
  const shift = byName(results, 'baseline-shift-vegas');
  if (shift !== undefined) {
    out.push({
      file: 'baseline-shift.svg',
      caption: 'Scenario 8: a permanent 3x baseline shift at capacity 50',
      spec: timeSeriesSpec({
        title: shift.title,
        runs: [{ label: 'vegas', series: shift.series }],
        phases: shift.phases,
        panels: [['limit', 'inflight'], ['latencyP50'], ['shedRate']],
        capacity: [{ fromMs: 0, toMs: shift.simulatedMs, value: 50 }],
      }),
    });
  }
  const shared = byName(results, 'shared-upstream-vegas');
  if (shared !== undefined) {
    out.push({
      file: 'shared-upstream.svg',
      caption: 'Scenario 9: ten clients with their own limiters sharing capacity 100',
      spec: timeSeriesSpec({
        title: `${shared.title}: sum of the ten limits and aggregate in-flight`,
        runs: [{ label: 'ten clients', series: shared.series }],
        phases: shared.phases,
        panels: [['limit', 'inflight'], ['latencyP99']],
        capacity: [{ fromMs: 0, toMs: shared.simulatedMs, value: 100 }],
      }),
    });
  }
  return out;
}
