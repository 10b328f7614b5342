import { DataPointType, type Histogram } from '@opentelemetry/sdk-metrics';
import { afterEach, describe, expect, it } from 'vitest';
import {
  instrument,
  LATENCY_BUCKETS_SECONDS,
  observeResilix,
  recordLatency,
  recordRetries,
} from '../../examples/telemetry-otel';
import { limiter, pipeline } from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';
import { fixture, retried } from './fixtures';
import { pointsOf, sdkMeter, type SdkMeter } from './otel-sdk';

let sdk: SdkMeter | undefined;
function meter(): SdkMeter {
  sdk = sdkMeter();
  return sdk;
}

afterEach(async () => {
  await sdk?.shutdown();
  sdk = undefined;
});

describe('the OpenTelemetry recipe (examples/telemetry-otel.ts) on @opentelemetry/sdk-metrics', () => {
  it('exports limit, inflight, queued, baseline, latency and the limiter counters, from one snapshot', async () => {
    const f = await fixture();
    const otel = meter();
    observeResilix(otel.meter, { limiters: { api: f.warm, quota: f.full } });
    const points = pointsOf(await otel.collect());
    expect(points.get('resilix.limiter.limit{resilix.limiter=api}')).toBe(10);
    expect(points.get('resilix.limiter.inflight{resilix.limiter=api}')).toBe(3);
    expect(points.get('resilix.limiter.queued{resilix.limiter=api}')).toBe(0);
    expect(points.get('resilix.limiter.baseline{resilix.limiter=api}')).toBe(0.12);
    expect(points.get('resilix.limiter.latency{resilix.limiter=api}')).toBe(0.12);
    expect(points.get('resilix.limiter.admitted{resilix.limiter=api}')).toBe(303);
    expect(points.get('resilix.limiter.shed{resilix.limiter=quota}')).toBe(2);
    expect(points.get('resilix.limiter.limit{resilix.limiter=quota}')).toBe(4);
  });

  it('declares gauges for levels and monotonic sums for running totals, with UCUM units', async () => {
    const f = await fixture();
    const otel = meter();
    const policy = await retried((p) => recordRetries(p, 'upstream', otel.meter));
    observeResilix(otel.meter, {
      limiters: { api: f.warm },
      breakers: { payments: f.tripped },
      retries: { upstream: policy },
    });
    const kinds = Object.fromEntries(
      (await otel.collect()).map((m) => [
        m.descriptor.name,
        `${DataPointType[m.dataPointType]}${m.dataPointType === DataPointType.SUM && m.isMonotonic ? ' monotonic' : ''} ${m.descriptor.unit}`,
      ]),
    );
    expect(kinds).toEqual({
      'resilix.limiter.limit': 'GAUGE {call}',
      'resilix.limiter.inflight': 'GAUGE {call}',
      'resilix.limiter.queued': 'GAUGE {call}',
      'resilix.limiter.baseline': 'GAUGE s',
      'resilix.limiter.latency': 'GAUGE s',
      'resilix.limiter.admitted': 'SUM monotonic {call}',
      'resilix.limiter.shed': 'SUM monotonic {call}',
      'resilix.limiter.queue_timeouts': 'SUM monotonic {call}',
      'resilix.breaker.state': 'GAUGE ',
      'resilix.breaker.failure_ratio': 'GAUGE 1',
      'resilix.breaker.slow_call_ratio': 'GAUGE 1',
      'resilix.breaker.rejected': 'SUM monotonic {call}',
      'resilix.retry.active': 'GAUGE {call}',
      'resilix.retry.budget.balance': 'GAUGE {retry}',
      'resilix.retry.budget.refusals': 'SUM monotonic {retry}',
      'resilix.retries': 'SUM monotonic {retry}',
      'resilix.retry.giveups': 'SUM monotonic {call}',
    });
  });

  it('exports the breaker state one-hot, its ratios and its refusals', async () => {
    const f = await fixture();
    const otel = meter();
    observeResilix(otel.meter, { breakers: { payments: f.tripped } });
    const points = pointsOf(await otel.collect());
    expect(points.get('resilix.breaker.state{resilix.breaker=payments,resilix.breaker.state=open}')).toBe(1);
    expect(points.get('resilix.breaker.state{resilix.breaker=payments,resilix.breaker.state=closed}')).toBe(0);
    expect(points.get('resilix.breaker.failure_ratio{resilix.breaker=payments}')).toBe(1);
    expect(points.get('resilix.breaker.slow_call_ratio{resilix.breaker=payments}')).toBe(0);
    expect(points.get('resilix.breaker.rejected{resilix.breaker=payments}')).toBe(1);
  });

  it('stops reading the policies when the returned function is called', async () => {
    const otel = meter();
    let reads = 0;
    const api = limiter();
    const stop = observeResilix(otel.meter, {
      limiters: () => {
        reads++;
        return [['api', api]];
      },
    });
    // limit, inflight, queued, admitted, shed, queue_timeouts (no baseline or latency measured yet)
    expect(pointsOf(await otel.collect()).size).toBe(6);
    stop();
    await otel.collect();
    expect(reads).toBe(1);
  });

  it('counts calls by attempt (original or retry) and outcome', async () => {
    const otel = meter();
    const quota = limiter({ initialLimit: 4, minLimit: 4, queueing: false });
    const api = instrument(pipeline(quota), 'api', otel.meter);
    await api.execute(() => 'first');
    const held = [quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire()];
    await api.execute(() => 'retried', { attempt: 2 }).catch(() => undefined);
    for (const permit of held) permit!.settle({ verdict: 'ok', latencyMs: 1 });
    const points = pointsOf(await otel.collect());
    expect(points).toEqual(
      new Map([
        ['resilix.calls{resilix.executor=api,resilix.attempt=original,resilix.outcome=resolved}', 1],
        ['resilix.calls{resilix.executor=api,resilix.attempt=retry,resilix.outcome=shed}', 1],
      ]),
    );
  });

  it('records the latency of settled calls in seconds, in the semantic conventions buckets, by attempt', async () => {
    const clock = new FakeClock();
    const otel = meter();
    const api = pipeline(limiter({ clock }));
    recordLatency(api, 'api', otel.meter);
    const slow = (ms: number) => () => {
      clock.advance(ms);
      return 'ok';
    };
    await api.execute(slow(40));
    await api.execute(slow(250), { attempt: 2 });
    await api.execute(slow(500), { attempt: 3 });
    const [metric] = await otel.collect();
    expect(metric!.descriptor).toMatchObject({ name: 'resilix.call.latency', unit: 's' });
    const byAttempt = Object.fromEntries(
      metric!.dataPoints.map((p) => {
        const h = p.value as Histogram;
        return [
          String(p.attributes['resilix.attempt']),
          { count: h.count, sum: h.sum, boundaries: h.buckets.boundaries },
        ];
      }),
    );
    expect(byAttempt).toEqual({
      original: { count: 1, sum: 0.04, boundaries: [...LATENCY_BUCKETS_SECONDS] },
      retry: { count: 2, sum: 0.75, boundaries: [...LATENCY_BUCKETS_SECONDS] },
    });
    expect(metric!.dataPoints.map((p) => p.attributes)).toEqual([
      { 'resilix.executor': 'api', 'resilix.attempt': 'original', 'resilix.verdict': 'ok' },
      { 'resilix.executor': 'api', 'resilix.attempt': 'retry', 'resilix.verdict': 'ok' },
    ]);
  });

  it('counts retries by verdict and give-ups by reason, from the retry events', async () => {
    const otel = meter();
    await retried((policy) => recordRetries(policy, 'upstream', otel.meter));
    const points = pointsOf(await otel.collect());
    expect(points).toEqual(
      new Map([
        ['resilix.retries{resilix.executor=upstream,resilix.verdict=failure}', 2],
        ['resilix.retry.giveups{resilix.executor=upstream,resilix.retry.reason=maxAttempts}', 1],
        ['resilix.retry.giveups{resilix.executor=upstream,resilix.retry.reason=budget}', 2],
      ]),
    );
  });

  it("observes a retry policy's active calls, budget balance and budget refusals", async () => {
    const otel = meter();
    const policy = await retried(() => {});
    observeResilix(otel.meter, { retries: { upstream: policy } });
    const points = pointsOf(await otel.collect());
    expect(points).toEqual(
      new Map([
        ['resilix.retry.active{resilix.executor=upstream}', 0],
        ['resilix.retry.budget.balance{resilix.executor=upstream}', 0],
        ['resilix.retry.budget.refusals{resilix.executor=upstream}', 2],
      ]),
    );
  });
});
