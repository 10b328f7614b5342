import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  instrument,
  LATENCY_BUCKETS_SECONDS,
  recordLatency,
  recordRetries,
  registerResilixMetrics,
} from '../../examples/telemetry-prometheus';
import { limiter, pipeline, retry, type Limiter } from '../../src/index';
import { FakeClock } from '../helpers/fake-clock';
import { fixture, retried } from './fixtures';

/** The value of one sample line, e.g. `resilix_limiter_limit{limiter="api"} 10`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the prom-client recipe (examples/telemetry-prometheus.ts)', () => {
  it('exports limit, inflight, queued, baseline and latency (in seconds) of each limiter, read at scrape time', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { api: f.warm, quota: f.full } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_limit{limiter="api"}')).toBe(10);
    expect(sample(text, 'resilix_limiter_inflight{limiter="api"}')).toBe(3);
    expect(sample(text, 'resilix_limiter_queued{limiter="api"}')).toBe(0);
    expect(sample(text, 'resilix_limiter_baseline_seconds{limiter="api"}')).toBe(0.12);
    expect(sample(text, 'resilix_limiter_latency_seconds{limiter="api"}')).toBe(0.12);
    expect(sample(text, 'resilix_limiter_limit{limiter="quota"}')).toBe(4);
    expect(sample(text, 'resilix_limiter_inflight{limiter="quota"}')).toBe(4);
    expect(text).toContain('# TYPE resilix_limiter_limit gauge');
  });

  it('omits the baseline of a limiter that has not measured one yet', async () => {
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { fresh: limiter() } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_limit{limiter="fresh"}')).toBe(1); // initialLimit: a slow start begins at 1
    expect(sample(text, 'resilix_limiter_baseline_seconds{limiter="fresh"}')).toBeUndefined();
  });

  it('exports shed and admitted counts as counters', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { quota: f.full } });
    const text = await registry.metrics();
    expect(text).toContain('# TYPE resilix_limiter_shed_total counter');
    expect(sample(text, 'resilix_limiter_shed_total{limiter="quota"}')).toBe(2);
    expect(sample(text, 'resilix_limiter_admitted_total{limiter="quota"}')).toBe(4);
  });

  it('reports the newest values at every scrape, not the ones at registration', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { quota: f.full } });
    await registry.metrics();
    await f.full.execute(() => 'never runs').catch(() => undefined);
    f.full.resize(9);
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_shed_total{limiter="quota"}')).toBe(3);
    expect(sample(text, 'resilix_limiter_limit{limiter="quota"}')).toBe(9);
  });

  it('exports the breaker state one-hot, its ratios and its refusals', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, breakers: { payments: f.tripped, search: f.healthy } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_breaker_state{breaker="payments",state="open"}')).toBe(1);
    expect(sample(text, 'resilix_breaker_state{breaker="payments",state="closed"}')).toBe(0);
    expect(sample(text, 'resilix_breaker_state{breaker="search",state="closed"}')).toBe(1);
    expect(sample(text, 'resilix_breaker_failure_ratio{breaker="payments"}')).toBe(1);
    expect(sample(text, 'resilix_breaker_slow_call_ratio{breaker="payments"}')).toBe(0);
    expect(sample(text, 'resilix_breaker_rejected_total{breaker="payments"}')).toBe(1);
  });

  it('follows a changing set of limiters given as a function (a KeyRegistry), dropping the gone ones', async () => {
    const perHost = new Map<string, Limiter>([['https://a.example', limiter({ initialLimit: 5 })]]);
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: () => perHost });
    expect(sample(await registry.metrics(), 'resilix_limiter_limit{limiter="https://a.example"}')).toBe(5);
    perHost.delete('https://a.example');
    perHost.set('https://b.example', limiter({ initialLimit: 6 }));
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_limit{limiter="https://a.example"}')).toBeUndefined();
    expect(sample(text, 'resilix_limiter_limit{limiter="https://b.example"}')).toBe(6);
  });

  it('counts original attempts apart from retries, by outcome', async () => {
    const registry = new Registry();
    const quota = limiter({ initialLimit: 4, minLimit: 4, queueing: false });
    const api = instrument(pipeline(quota), 'api', registry);
    await api.execute(() => 'first');
    await api.execute(() => 'second', { attempt: 2 });
    const held = [quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire(), quota.tryAcquire()];
    await api.execute(() => 'shed', { attempt: 3 }).catch(() => undefined);
    await api.execute(() => 'shed').catch(() => undefined);
    for (const permit of held) permit!.settle({ verdict: 'ok', latencyMs: 1 });
    await api
      .execute(() => {
        throw new Error('boom');
      })
      .catch(() => undefined);
    const text = await registry.metrics();
    expect(sample(text, 'resilix_calls_total{executor="api",attempt="original",outcome="resolved"}')).toBe(1);
    expect(sample(text, 'resilix_calls_total{executor="api",attempt="retry",outcome="resolved"}')).toBe(1);
    expect(sample(text, 'resilix_calls_total{executor="api",attempt="retry",outcome="shed"}')).toBe(1);
    expect(sample(text, 'resilix_calls_total{executor="api",attempt="original",outcome="shed"}')).toBe(1);
    expect(sample(text, 'resilix_calls_total{executor="api",attempt="original",outcome="error"}')).toBe(1);
  });

  it('names every series by the Prometheus naming guide: base units, _total counters, _ratio ratios', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { api: f.warm }, breakers: { payments: f.tripped } });
    const p = pipeline(limiter());
    instrument(p, 'api', registry);
    recordLatency(p, 'api', registry);
    recordRetries(retry(), 'api', registry);
    const types = (await registry.getMetricsAsJSON()).map((m) => `${m.name} ${m.type}`);
    expect(types).toEqual([
      'resilix_limiter_limit gauge',
      'resilix_limiter_inflight gauge',
      'resilix_limiter_queued gauge',
      'resilix_limiter_baseline_seconds gauge',
      'resilix_limiter_latency_seconds gauge',
      'resilix_limiter_admitted_total counter',
      'resilix_limiter_shed_total counter',
      'resilix_limiter_queue_timeouts_total counter',
      'resilix_breaker_failure_ratio gauge',
      'resilix_breaker_slow_call_ratio gauge',
      'resilix_breaker_rejected_total counter',
      'resilix_retry_active gauge',
      'resilix_retry_budget_balance gauge',
      'resilix_retry_budget_refusals_total counter',
      'resilix_breaker_state gauge',
      'resilix_calls_total counter',
      'resilix_call_latency_seconds histogram',
      'resilix_retries_total counter',
      'resilix_retry_giveups_total counter',
    ]);
  });

  it('records settled calls in a latency histogram in seconds, by attempt and verdict', async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const api = pipeline(limiter({ clock }));
    const subscription = recordLatency(api, 'api', registry);
    const taking =
      (ms: number, fail = false) =>
      () => {
        clock.advance(ms);
        if (fail) throw new Error('upstream 500');
        return 'ok';
      };
    await api.execute(taking(40));
    await api.execute(taking(250), { attempt: 2 });
    await api.execute(taking(500, true), { attempt: 2 }).catch(() => undefined);
    subscription.dispose();
    await api.execute(taking(40)); // after dispose: not recorded
    const text = await registry.metrics();
    const original = 'executor="api",attempt="original",verdict="ok"';
    expect(sample(text, `resilix_call_latency_seconds_count{${original}}`)).toBe(1);
    expect(sample(text, `resilix_call_latency_seconds_sum{${original}}`)).toBe(0.04);
    expect(sample(text, `resilix_call_latency_seconds_bucket{le="0.025",${original}}`)).toBe(0);
    expect(sample(text, `resilix_call_latency_seconds_bucket{le="0.05",${original}}`)).toBe(1);
    expect(sample(text, 'resilix_call_latency_seconds_sum{executor="api",attempt="retry",verdict="ok"}')).toBe(0.25);
    expect(sample(text, 'resilix_call_latency_seconds_sum{executor="api",attempt="retry",verdict="failure"}')).toBe(
      0.5,
    );
    const buckets = text
      .split('\n')
      .filter((l) => l.startsWith('resilix_call_latency_seconds_bucket{') && l.includes(original));
    expect(buckets.map((l) => /le="([^"]+)"/.exec(l)![1])).toEqual([...LATENCY_BUCKETS_SECONDS.map(String), '+Inf']);
  });

  it('counts retries by the verdict they retry, and give-ups by reason, from the retry events', async () => {
    const registry = new Registry();
    await retried((policy) => recordRetries(policy, 'upstream', registry));
    const text = await registry.metrics();
    expect(sample(text, 'resilix_retries_total{executor="upstream",verdict="failure"}')).toBe(2);
    expect(sample(text, 'resilix_retry_giveups_total{executor="upstream",reason="maxAttempts"}')).toBe(1);
    expect(sample(text, 'resilix_retry_giveups_total{executor="upstream",reason="budget"}')).toBe(2);
    expect(text).toContain('# TYPE resilix_retries_total counter');
  });

  it('stops counting retries when the returned function is called', async () => {
    const registry = new Registry();
    let stop = () => {};
    const policy = await retried((p) => {
      stop = recordRetries(p, 'upstream', registry);
      stop();
    });
    expect(policy.snapshot().retries).toBe(2);
    expect(sample(await registry.metrics(), 'resilix_retries_total{executor="upstream",verdict="failure"}')).toBe(
      undefined,
    );
  });

  it("exports a retry policy's active calls, budget balance and budget refusals, read at scrape time", async () => {
    const policy = await retried(() => {});
    const registry = new Registry();
    registerResilixMetrics({ registry, retries: { upstream: policy } });
    let text = await registry.metrics();
    expect(sample(text, 'resilix_retry_active{executor="upstream"}')).toBe(0);
    expect(sample(text, 'resilix_retry_budget_balance{executor="upstream"}')).toBe(0);
    expect(sample(text, 'resilix_retry_budget_refusals_total{executor="upstream"}')).toBe(2);
    let answer = (_value: string) => {};
    const pending = pipeline(policy).execute(() => new Promise<string>((resolve) => (answer = resolve)));
    text = await registry.metrics();
    expect(sample(text, 'resilix_retry_active{executor="upstream"}')).toBe(1);
    answer('ok');
    await pending;
  });

  it('omits the budget balance of a retry policy without a budget', async () => {
    const registry = new Registry();
    registerResilixMetrics({ registry, retries: { unbudgeted: retry({ budget: false }) } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_retry_active{executor="unbudgeted"}')).toBe(0);
    expect(sample(text, 'resilix_retry_budget_balance{executor="unbudgeted"}')).toBeUndefined();
  });
});
