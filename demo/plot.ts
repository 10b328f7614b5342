/**
 * One kind of plot, for the demo (demo/run.ts) and the real-server runs (scripts/e2e-real.ts): the
 * limit and the upstream's in-flight over time against a reference line (the secret capacity, or
 * the knee measured with fixed caps), one panel per run. Rendered to SVG, headless, with the
 * simulator's vega-lite pipeline (sim/report/plots.ts).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { TopLevelSpec } from 'vega-lite';
import { renderSvg } from '../sim/report/plots';

export interface PlotSample {
  readonly tMs: number;
  readonly limit: number;
  readonly inflight: number;
}

export interface PlotPanel {
  readonly title: string;
  readonly samples: readonly PlotSample[];
  /** The reference line as steps: [fromMs, toMs) at `value`. */
  readonly reference: readonly { readonly fromMs: number; readonly toMs: number; readonly value: number }[];
  /** Legend name of the reference line ("capacity", "knee (fixed caps)"). */
  readonly referenceLabel: string;
  /** Vertical marks (a phase change), labelled. */
  readonly marks?: readonly { readonly atMs: number; readonly label: string }[];
}

/** In-flight is an instant count and jumps call by call: it is drawn as its mean per bin. */
const INFLIGHT_BIN_MS = 500;

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

function rows(panel: PlotPanel, inflightLabel: string): { t: number; v: number; line: string }[] {
  const out: { t: number; v: number; line: string }[] = [];
  for (const s of panel.samples) out.push({ t: round(s.tMs / 1000), v: s.limit, line: 'limit' });
  let binStart = 0;
  let sum = 0;
  let count = 0;
  for (const s of panel.samples) {
    while (s.tMs >= binStart + INFLIGHT_BIN_MS) {
      if (count > 0)
        out.push({ t: round((binStart + INFLIGHT_BIN_MS) / 1000), v: round(sum / count), line: inflightLabel });
      binStart += INFLIGHT_BIN_MS;
      sum = 0;
      count = 0;
    }
    sum += s.inflight;
    count++;
  }
  if (count > 0)
    out.push({ t: round((binStart + INFLIGHT_BIN_MS) / 1000), v: round(sum / count), line: inflightLabel });
  for (const r of panel.reference) {
    out.push({ t: round(r.fromMs / 1000), v: r.value, line: panel.referenceLabel });
    out.push({ t: round(r.toMs / 1000), v: r.value, line: panel.referenceLabel });
  }
  return out;
}

export function limitPlotSpec(title: string, panels: readonly PlotPanel[], inflightLabel: string): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v5.json',
    title: { text: title, anchor: 'start' },
    vconcat: panels.map((panel, index) => {
      const lines = ['limit', inflightLabel, panel.referenceLabel];
      const layers: object[] = [
        {
          data: { values: rows(panel, inflightLabel) },
          mark: { type: 'line', strokeWidth: 1.4, interpolate: 'step-after' },
          encoding: {
            x: { field: 't', type: 'quantitative', title: index === panels.length - 1 ? 'time (s)' : null },
            y: { field: 'v', type: 'quantitative', title: 'calls', scale: { zero: true } },
            color: {
              field: 'line',
              type: 'nominal',
              title: null,
              scale: { domain: lines, range: ['#1f77b4', '#ff7f0e', 'black'] },
              legend: { orient: 'right', labelLimit: 300 },
            },
            strokeDash: {
              field: 'line',
              type: 'nominal',
              scale: {
                domain: lines,
                range: [
                  [1, 0],
                  [1, 0],
                  [4, 3],
                ],
              },
              title: null,
              legend: { orient: 'right', labelLimit: 300 },
            },
          },
        },
      ];
      if (panel.marks !== undefined && panel.marks.length > 0) {
        const values = panel.marks.map((m) => ({ t: round(m.atMs / 1000), label: m.label }));
        layers.push({
          data: { values },
          mark: { type: 'rule', strokeDash: [2, 2], color: '#888' },
          encoding: { x: { field: 't', type: 'quantitative' } },
        });
        layers.push({
          data: { values },
          mark: { type: 'text', align: 'left', dx: 3, dy: -4, baseline: 'bottom', color: '#555', fontSize: 10 },
          encoding: { x: { field: 't', type: 'quantitative' }, y: { value: 0 }, text: { field: 'label' } },
        });
      }
      return { title: { text: panel.title, fontSize: 12, anchor: 'start' }, width: 640, height: 170, layer: layers };
    }),
    resolve: { scale: { color: 'independent', strokeDash: 'independent' } },
    config: { font: 'sans-serif', view: { stroke: '#ddd' } },
  } as TopLevelSpec;
}

/** Renders the plot and writes it to `path` (its directory is created). */
export async function writeLimitPlot(
  path: string,
  title: string,
  panels: readonly PlotPanel[],
  inflightLabel = 'upstream in-flight',
): Promise<void> {
  const svg = await renderSvg(limitPlotSpec(title, panels, inflightLabel));
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, svg);
}
