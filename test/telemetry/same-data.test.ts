import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PrometheusSerializer } from '@opentelemetry/exporter-prometheus';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import * as otel from '../../examples/telemetry-otel';
import * as prom from '../../examples/telemetry-prometheus';
import { breaker, limiter, pipeline } from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';
import { fixture, retried } from './fixtures';

/**
 * docs/telemetry.md says the two recipes export the same data under each ecosystem's names, and
 * gives the mapping as two tables. This test reads those tables, runs both recipes on the same
 * policies and the same calls, renders the OpenTelemetry side through the real SDK and
 * `@opentelemetry/exporter-prometheus`'s serializer, renames it by the tables, and compares every
 * sample (name, labels, value) and every type with prom-client's exposition.
 */
const TELEMETRY_DOC = join(__dirname, '../../docs/telemetry.md');

/** The rows of the markdown table whose header row starts with `firstHeader`, as header -> cell. */
function table(markdown: string, firstHeader: string): Array<Record<string, string>> {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${firstHeader} |`));
  if (start < 0) throw new Error(`docs/telemetry.md has no table headed "${firstHeader}"`);
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split('|')
      .map((c) => c.trim().replace(/^`|`$/g, ''));
  const headers = cells(lines[start]!);
  const rows: Array<Record<string, string>> = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(Object.fromEntries(cells(line).map((c, i) => [headers[i]!, c])));
  }
  return rows;
}

/** `name{label="value",...} value` lines (labels sorted) and `# TYPE name type` lines, sorted. */
function exposition(text: string, rename: (name: string) => string, relabel: (label: string) => string): string[] {
  const out: string[] = [];
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type !== null) out.push(`# TYPE ${rename(type[1]!)} ${type[2]}`);
    if (line === '' || line.startsWith('#')) continue;
    const sample = /^([^{\s]+)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (sample === null) throw new Error(`not a sample line: ${line}`);
    const labels = [...(sample[2] ?? '').matchAll(/([^=,]+)="((?:[^"\\]|\\.)*)"/g)]
      .map((m) => `${relabel(m[1]!)}="${m[2]}"`)
      .sort();
    out.push(`${rename(sample[1]!)}{${labels.join(',')}} ${Number(sample[3])}`);
  }
  return out.sort();
}

const sanitize = (otelName: string) => otelName.replace(/[^a-zA-Z0-9_]/g, '_');

/** Both recipes on the same policies, after the same calls: the fixture's, and a pipeline's. */
async function bothRecipes() {
  const f = await fixture();
  const clock = new FakeClock();
  const quota = limiter({ clock, initialLimit: 4, minLimit: 4, queueing: false });
  const guard = breaker({ clock });
  const upstream = pipeline(guard, quota);

  const registry = new Registry();
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  const meter = provider.getMeter('resilix-test');

  // A retry policy both recipes hear from the start (its events), then read (its snapshot).
  const retrying = await retried((policy) => {
    prom.recordRetries(policy, 'retrying', registry);
    otel.recordRetries(policy, 'retrying', meter);
  });

  const limiters = { api: f.warm, full: f.full, quota };
  const breakers = { payments: f.tripped, search: f.healthy, guard };
  const retries = { retrying };
  prom.registerResilixMetrics({ registry, limiters, breakers, retries });
  otel.observeResilix(meter, { limiters, breakers, retries });
  prom.recordLatency(upstream, 'upstream', registry);
  otel.recordLatency(upstream, 'upstream', meter);
  // Every call passes both wrappers, so both count the same calls.
  const api = prom.instrument(otel.instrument(upstream, 'upstream', meter), 'upstream', registry);

  const taking =
    (ms: number, fail = false) =>
    () => {
      clock.advance(ms);
      if (fail) throw new Error('upstream 500');
      return 'ok';
    };
  await api.execute(taking(40));
  await api.execute(taking(120), { attempt: 2 });
  await api.execute(taking(7_000, true)).catch(() => undefined);
  const held = [quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire()];
  await api.execute(taking(1), { attempt: 3 }).catch(() => undefined); // shed
  for (const permit of held) permit!.settle({ verdict: 'ok', latencyMs: 5 });
  await api.execute(taking(250), { attempt: 2 });

  const promText = await registry.metrics();
  await reader.forceFlush();
  const [resourceMetrics] = exporter.getMetrics().slice(-1);
  const otelText = new PrometheusSerializer(undefined, false, undefined, true, true).serialize(resourceMetrics!);
  await provider.shutdown();
  return { promText, otelText };
}

describe('the Prometheus and OpenTelemetry recipes export the same data (docs/telemetry.md)', () => {
  const doc = readFileSync(TELEMETRY_DOC, 'utf8');
  const metrics = table(doc, 'Prometheus');
  const labels = table(doc, 'Prometheus label');

  it('maps every metric both recipes register, and every label they use, in the docs tables', () => {
    expect(metrics.length).toBe(19);
    expect(labels.length).toBe(8);
    for (const row of metrics) expect(row.Prometheus, row.OpenTelemetry).toMatch(/^resilix_[a-z_]+$/);
  });

  it('gives the same samples, values and types under the mapped names', async () => {
    const { promText, otelText } = await bothRecipes();
    // exporter-prometheus names an OTel metric by its sanitised name (+ `_total` for a counter);
    // a histogram's series add `_bucket`, `_sum` and `_count`.
    const byExporterName = new Map<string, string>();
    for (const row of metrics) {
      const exported = sanitize(row.OpenTelemetry!) + (row.type === 'counter' ? '_total' : '');
      byExporterName.set(exported, row.Prometheus!);
      for (const suffix of ['_bucket', '_sum', '_count']) {
        byExporterName.set(exported + suffix, row.Prometheus! + suffix);
      }
    }
    const byAttribute = new Map(
      labels.map((row) => [sanitize(row['OpenTelemetry attribute']!), row['Prometheus label']!]),
    );
    const rename = (name: string) => byExporterName.get(name) ?? `UNMAPPED:${name}`;
    const relabel = (label: string) => (label === 'le' ? 'le' : (byAttribute.get(label) ?? `UNMAPPED:${label}`));

    const fromProm = exposition(
      promText,
      (n) => n,
      (l) => l,
    );
    const fromOtel = exposition(otelText, rename, relabel);
    expect(fromOtel).toEqual(fromProm);
    // What the comparison covered: every metric of the table, the histogram with all its buckets.
    const names = new Set(fromProm.filter((l) => l.startsWith('# TYPE')).map((l) => l.split(' ')[2]));
    expect([...names].sort()).toEqual(metrics.map((m) => m.Prometheus).sort());
    // Three latency series (original ok, original failure, retry ok; the shed call never ran),
    // each with 14 buckets and +Inf.
    expect(fromProm.filter((l) => l.startsWith('resilix_call_latency_seconds_bucket{')).length).toBe(3 * 15);
  });
});
