import {
  createNoopMeter,
  type Attributes,
  type BatchObservableCallback,
  type Counter,
  type Meter,
  type MetricOptions,
  type Observable,
  type ObservableGauge,
} from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import { instrument, observeResilix } from '../../examples/telemetry-otel';
import { limiter, pipeline } from '../../src/index';
import { fixture } from './fixtures';

/**
 * `@opentelemetry/api` alone is a no-op. No `@opentelemetry/sdk-metrics` release runs here: the
 * 2.x line wants api < 1.10 and the 3.x line (api 1.10) wants Node >= 22.15. So this test drives
 * the recipe through a small Meter that implements the api's interfaces and runs the batch
 * callbacks the way an SDK's collection does: the wiring (names, units, attributes, values) is
 * what the recipe owns; export is the SDK's job.
 */
class RecordingMeter implements Meter {
  private readonly noop = createNoopMeter();
  readonly instruments = new Map<
    string,
    { kind: string; options: MetricOptions | undefined; instrument: Observable }
  >();
  readonly added: Array<{ value: number; attributes: Attributes | undefined; name: string }> = [];
  private callbacks: Array<{ callback: BatchObservableCallback; observables: Observable[] }> = [];

  private observable(kind: string, name: string, options?: MetricOptions): ObservableGauge {
    // A fresh object per instrument: the no-op meter hands out one shared singleton.
    const instrument: ObservableGauge = { addCallback() {}, removeCallback() {} };
    this.instruments.set(name, { kind, options, instrument });
    return instrument;
  }

  createObservableGauge(name: string, options?: MetricOptions) {
    return this.observable('gauge', name, options);
  }
  createObservableCounter(name: string, options?: MetricOptions) {
    return this.observable('counter', name, options);
  }
  createObservableUpDownCounter(name: string, options?: MetricOptions) {
    return this.observable('updowncounter', name, options);
  }
  createCounter(name: string, _options?: MetricOptions): Counter {
    return { add: (value, attributes) => this.added.push({ name, value, attributes }) };
  }
  createGauge(name: string, options?: MetricOptions) {
    return this.noop.createGauge(name, options);
  }
  createHistogram(name: string, options?: MetricOptions) {
    return this.noop.createHistogram(name, options);
  }
  createUpDownCounter(name: string, options?: MetricOptions) {
    return this.noop.createUpDownCounter(name, options);
  }
  addBatchObservableCallback(callback: BatchObservableCallback, observables: Observable[]): void {
    this.callbacks.push({ callback, observables });
  }
  removeBatchObservableCallback(callback: BatchObservableCallback, observables: Observable[]): void {
    this.callbacks = this.callbacks.filter((c) => c.callback !== callback || c.observables !== observables);
  }

  /** One collection: every batch callback runs; returns `name{attr=value,...}` -> value. */
  async collect(): Promise<Map<string, number>> {
    const points = new Map<string, number>();
    for (const { callback, observables } of this.callbacks) {
      const nameOf = new Map([...this.instruments].map(([name, entry]) => [entry.instrument, name]));
      await callback({
        observe(observable, value, attributes) {
          if (!observables.includes(observable)) throw new Error('observed an instrument the callback did not declare');
          points.set(key(nameOf.get(observable)!, attributes), value);
        },
      });
    }
    return points;
  }
}

function key(name: string, attributes: Attributes | undefined): string {
  const pairs = Object.entries(attributes ?? {}).map(([k, v]) => `${k}=${String(v)}`);
  return `${name}{${pairs.join(',')}}`;
}

describe('the OpenTelemetry recipe (examples/telemetry-otel.ts)', () => {
  it('observes limit, inflight, queued, baseline and shed of each limiter in one batch', async () => {
    const f = await fixture();
    const meter = new RecordingMeter();
    observeResilix(meter, { limiters: { api: f.warm, quota: f.full } });
    const points = await meter.collect();
    expect(points.get('resilix.limiter.limit{resilix.limiter=api}')).toBe(10);
    expect(points.get('resilix.limiter.inflight{resilix.limiter=api}')).toBe(3);
    expect(points.get('resilix.limiter.queued{resilix.limiter=api}')).toBe(0);
    expect(points.get('resilix.limiter.baseline{resilix.limiter=api}')).toBe(120);
    expect(points.get('resilix.limiter.shed{resilix.limiter=quota}')).toBe(2);
    expect(points.get('resilix.limiter.limit{resilix.limiter=quota}')).toBe(4);
  });

  it('declares gauges for levels and counters for running totals, with units', () => {
    const meter = new RecordingMeter();
    observeResilix(meter, {});
    const kinds = Object.fromEntries(
      [...meter.instruments].map(([name, e]) => [name, `${e.kind} ${e.options?.unit ?? ''}`]),
    );
    expect(kinds).toEqual({
      'resilix.limiter.limit': 'gauge {call}',
      'resilix.limiter.inflight': 'gauge {call}',
      'resilix.limiter.queued': 'gauge {call}',
      'resilix.limiter.baseline': 'gauge ms',
      'resilix.limiter.shed': 'counter {call}',
      'resilix.breaker.state': 'gauge ',
      'resilix.breaker.rejected': 'counter {call}',
    });
  });

  it('observes the breaker state one-hot and its refusals', async () => {
    const f = await fixture();
    const meter = new RecordingMeter();
    observeResilix(meter, { breakers: { payments: f.tripped } });
    const points = await meter.collect();
    expect(points.get('resilix.breaker.state{resilix.breaker=payments,resilix.breaker.state=open}')).toBe(1);
    expect(points.get('resilix.breaker.state{resilix.breaker=payments,resilix.breaker.state=closed}')).toBe(0);
    expect(points.get('resilix.breaker.rejected{resilix.breaker=payments}')).toBe(1);
  });

  it('stops observing when the returned function is called', async () => {
    const meter = new RecordingMeter();
    const stop = observeResilix(meter, { limiters: { api: limiter() } });
    expect((await meter.collect()).size).toBe(4); // limit, inflight, queued, shed (no baseline yet)
    stop();
    expect((await meter.collect()).size).toBe(0);
  });

  it('counts calls with the attempt number, a retry flag and the outcome', async () => {
    const meter = new RecordingMeter();
    const quota = limiter({ initialLimit: 4, minLimit: 4, queueing: false });
    const api = instrument(pipeline(quota), 'api', meter);
    await api.execute(() => 'first');
    const held = [quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire()];
    await api.execute(() => 'retried', { attempt: 2 }).catch(() => undefined);
    for (const permit of held) permit!.settle({ verdict: 'ok', latencyMs: 1 });
    expect(meter.added.map((a) => key(a.name, a.attributes))).toEqual([
      'resilix.calls{resilix.executor=api,resilix.attempt=1,resilix.retry=false,resilix.outcome=resolved}',
      'resilix.calls{resilix.executor=api,resilix.attempt=2,resilix.retry=true,resilix.outcome=shed}',
    ]);
  });
});
