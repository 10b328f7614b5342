import type { Meter } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';

/**
 * A real OpenTelemetry metrics SDK (`@opentelemetry/sdk-metrics` 2.x) exporting into memory, as an
 * app's SDK would export to a collector. `collect()` forces one collection and export and returns
 * what was exported. The periodic reader's own interval is an hour: only `collect()` exports.
 */
export interface SdkMeter {
  readonly meter: Meter;
  collect(): Promise<readonly MetricData[]>;
  shutdown(): Promise<void>;
}

export function sdkMeter(): SdkMeter {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ readers: [reader] });
  return {
    meter: provider.getMeter('resilix-test'),
    async collect() {
      exporter.reset();
      await reader.forceFlush();
      const exported = exporter.getMetrics();
      return exported.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
    },
    shutdown: () => provider.shutdown(),
  };
}

/** `name{attr=value,...}` -> value, for every gauge and sum point (attributes in the order given). */
export function pointsOf(metrics: readonly MetricData[]): Map<string, number> {
  const points = new Map<string, number>();
  for (const metric of metrics) {
    for (const point of metric.dataPoints) {
      if (typeof point.value !== 'number') continue;
      const pairs = Object.entries(point.attributes).map(([k, v]) => `${k}=${String(v)}`);
      points.set(`${metric.descriptor.name}{${pairs.join(',')}}`, point.value);
    }
  }
  return points;
}
