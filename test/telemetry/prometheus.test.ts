import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { instrument, registerResilixMetrics } from '../../examples/telemetry-prometheus';
import { limiter, pipeline, type Limiter } from '../../src/index';
import { fixture } from './fixtures';

/** The value of one sample line, e.g. `resilix_limiter_limit{limiter="api"} 10`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('the prom-client recipe (examples/telemetry-prometheus.ts)', () => {
  it('exports limit, inflight, queued and baseline of each limiter, read at scrape time', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { api: f.warm, quota: f.full } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_limit{limiter="api"}')).toBe(10);
    expect(sample(text, 'resilix_limiter_inflight{limiter="api"}')).toBe(3);
    expect(sample(text, 'resilix_limiter_queued{limiter="api"}')).toBe(0);
    expect(sample(text, 'resilix_limiter_baseline_ms{limiter="api"}')).toBe(120);
    expect(sample(text, 'resilix_limiter_limit{limiter="quota"}')).toBe(4);
    expect(sample(text, 'resilix_limiter_inflight{limiter="quota"}')).toBe(4);
    expect(text).toContain('# TYPE resilix_limiter_limit gauge');
  });

  it('omits the baseline of a limiter that has not measured one yet', async () => {
    const registry = new Registry();
    registerResilixMetrics({ registry, limiters: { fresh: limiter() } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_limiter_limit{limiter="fresh"}')).toBe(20);
    expect(sample(text, 'resilix_limiter_baseline_ms{limiter="fresh"}')).toBeUndefined();
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

  it('exports the breaker state one-hot, its failure rate and its refusals', async () => {
    const f = await fixture();
    const registry = new Registry();
    registerResilixMetrics({ registry, breakers: { payments: f.tripped, search: f.healthy } });
    const text = await registry.metrics();
    expect(sample(text, 'resilix_breaker_state{breaker="payments",state="open"}')).toBe(1);
    expect(sample(text, 'resilix_breaker_state{breaker="payments",state="closed"}')).toBe(0);
    expect(sample(text, 'resilix_breaker_state{breaker="search",state="closed"}')).toBe(1);
    expect(sample(text, 'resilix_breaker_failure_rate{breaker="payments"}')).toBe(1);
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
});
