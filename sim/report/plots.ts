import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { Phase, Series } from '../engine/metrics';

/** One line set on a plot: a scenario run's series under a label ("fixed 200", "vegas"). */
export interface PlotRun {
  readonly label: string;
  readonly series: Series;
}

export type Panel = 'limit' | 'inflight' | 'upstreamQueue' | 'latencyP99' | 'latencyP50' | 'shedRate' | 'goodput';

export interface PlotOptions {
  readonly title: string;
  readonly runs: readonly PlotRun[];
  readonly phases: readonly Phase[];
  /** Panels, top to bottom; measures that share a panel share its y axis. */
  readonly panels: readonly (readonly Panel[])[];
  /** A reference line on the limit panel (the upstream's true capacity), as steps over time. */
  readonly capacity?: readonly { readonly fromMs: number; readonly toMs: number; readonly value: number }[];
  /** Log scale for latency panels (default true). */
  readonly logLatency?: boolean;
  /** Points per line after downsampling (default 400). */
  readonly points?: number;
}

const LABELS: Record<Panel, string> = {
  limit: 'limit',
  inflight: 'in-flight',
  upstreamQueue: 'upstream queue',
  latencyP99: 'served p99 (ms)',
  latencyP50: 'served p50 (ms)',
  shedRate: 'shed rate',
  goodput: 'goodput (calls/s)',
};

/**
 * Takes a series down to about `points` points: gauges keep the mean of each group, latency
 * keeps the group's maximum (a p99 spike must not vanish in the average).
 */
function downsample(series: Series, measure: Panel, points: number): { t: number; v: number }[] {
  const source =
    measure === 'limit'
      ? series.limit
      : measure === 'inflight'
        ? series.inflight
        : measure === 'upstreamQueue'
          ? series.upstreamQueue
          : measure === 'latencyP99'
            ? series.latencyP99Ms
            : measure === 'latencyP50'
              ? series.latencyP50Ms
              : measure === 'shedRate'
                ? series.shedRate
                : series.goodputPerSec;
  const n = source.length;
  const group = Math.max(1, Math.ceil(n / points));
  const out: { t: number; v: number }[] = [];
  const isLatency = measure === 'latencyP99' || measure === 'latencyP50';
  for (let start = 0; start < n; start += group) {
    const end = Math.min(n, start + group);
    let acc = isLatency ? -Infinity : 0;
    let count = 0;
    for (let i = start; i < end; i++) {
      const v = source[i]!;
      if (!Number.isFinite(v)) continue;
      acc = isLatency ? Math.max(acc, v) : acc + v;
      count++;
    }
    if (count === 0) continue;
    const value = isLatency ? acc : acc / count;
    out.push({ t: round(series.tMs[end - 1]! / 1000), v: round(value) });
  }
  return out;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** A vega-lite spec: stacked panels over a shared time axis, phases as labelled rules. */
export function timeSeriesSpec(options: PlotOptions): TopLevelSpec {
  const points = options.points ?? 400;
  const phaseRules = options.phases.slice(1).map((p) => ({ t: p.startMs / 1000, phase: p.name }));
  const panels = options.panels.map((measures, index) => {
    const rows: { t: number; v: number; line: string }[] = [];
    for (const run of options.runs) {
      for (const measure of measures) {
        const line =
          options.runs.length > 1
            ? measures.length > 1
              ? `${run.label} ${LABELS[measure]}`
              : run.label
            : LABELS[measure];
        for (const p of downsample(run.series, measure, points)) rows.push({ t: p.t, v: p.v, line });
      }
    }
    const isLatency = measures.every((m) => m === 'latencyP99' || m === 'latencyP50');
    const logScale = isLatency && (options.logLatency ?? true);
    const layers: object[] = [
      {
        data: { values: logScale ? rows.filter((r) => r.v > 0) : rows },
        mark: { type: 'line', strokeWidth: 1.4, interpolate: 'step-after' },
        encoding: {
          x: {
            field: 't',
            type: 'quantitative',
            title: index === options.panels.length - 1 ? 'virtual time (s)' : null,
          },
          y: {
            field: 'v',
            type: 'quantitative',
            title: measures.map((m) => LABELS[m]).join(' / '),
            scale: logScale ? { type: 'log' } : { zero: true },
          },
          color: { field: 'line', type: 'nominal', title: null, legend: { orient: 'top-left', labelLimit: 300 } },
        },
      },
    ];
    if (phaseRules.length > 0) {
      layers.push({
        data: { values: phaseRules },
        mark: { type: 'rule', strokeDash: [4, 4], color: '#888' },
        encoding: { x: { field: 't', type: 'quantitative' } },
      });
      if (index === 0) {
        layers.push({
          data: { values: phaseRules },
          mark: { type: 'text', align: 'left', dx: 3, dy: -4, baseline: 'bottom', color: '#555', fontSize: 10 },
          encoding: { x: { field: 't', type: 'quantitative' }, y: { value: 0 }, text: { field: 'phase' } },
        });
      }
    }
    if (options.capacity !== undefined && measures.includes('limit')) {
      layers.push({
        data: {
          values: options.capacity.flatMap((c) => [
            { t: c.fromMs / 1000, v: c.value },
            { t: c.toMs / 1000, v: c.value },
          ]),
        },
        mark: { type: 'line', color: 'black', strokeDash: [2, 2], strokeWidth: 1 },
        encoding: { x: { field: 't', type: 'quantitative' }, y: { field: 'v', type: 'quantitative' } },
      });
    }
    return { width: 640, height: 170, layer: layers };
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: options.title, anchor: 'start' },
    vconcat: panels,
    resolve: { scale: { color: 'independent' } },
    config: { font: 'sans-serif', view: { stroke: '#ddd' } },
  } as TopLevelSpec;
}

/** Renders a vega-lite spec to SVG, headless (no canvas: renderer 'none'). */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const compiled = compile(spec).spec;
  const view = new vega.View(vega.parse(compiled), { renderer: 'none' });
  const svg = await view.toSVG();
  view.finalize();
  return svg;
}
