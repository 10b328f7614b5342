import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type DemoPhase, runDemo } from '../../demo/run';

/**
 * The demo, shortened, on real sockets: a loopback server with a secret capacity of 4 (40 ms per
 * request, so 100 req/s), a quiet start, then twice the load it can serve. 1 320 requests in
 * about 8 s. The limiter's windows are shortened (500 ms, 20 samples) so it acts within the test;
 * everything else is the real library, real fetch and a real server.
 */
const PHASES: DemoPhase[] = [
  { name: 'quiet', seconds: 3, offeredPerSecond: 40, upstream: { capacity: 4, serviceMs: 40 } },
  { name: 'busy', seconds: 5, offeredPerSecond: 240, upstream: { capacity: 4, serviceMs: 40 } },
];

describe('the live demo, end to end on loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'resilix-demo-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds the capacity from latency, sheds the excess fast and never lets the upstream queue up', {
    timeout: 15_000,
  }, async () => {
    const lines: string[] = [];
    const svgPath = join(dir, 'demo.svg');
    const summary = await runDemo({
      phases: PHASES,
      timeoutMs: 1_000,
      limiter: { minWindowMs: 500, minSamples: 20 },
      print: (line) => lines.push(line),
      svgPath,
    });
    const [quiet, busy] = summary.phases;

    // Bounded: exactly the offered schedule, and the whole run inside the test's budget.
    expect(summary.offered).toBe(3 * 40 + 5 * 240);
    expect(summary.elapsedMs).toBeLessThan(12_000);

    // Quiet: everything served near the no-load latency, nothing shed.
    expect(quiet!.shed).toBe(0);
    expect(quiet!.ok).toBe(quiet!.offered);

    // Busy (2.4x the capacity): the limit rose from 1 by a slow start to about the capacity of 4, the excess
    // was shed by resilix (the server's own 503 never fired), and what ran finished inside the
    // budget: without the limiter the server's backlog would grow by 140 requests a second.
    expect(summary.initialLimit).toBe(1);
    expect(busy!.settledLimit).toBeLessThan(16);
    expect(busy!.settledLimit).toBeGreaterThanOrEqual(4);
    expect(busy!.shed).toBeGreaterThan(busy!.offered * 0.3);
    expect(busy!.errors).toBe(0);
    expect(busy!.timedOut).toBeLessThan(busy!.offered * 0.02);
    expect(busy!.ok + busy!.shed + busy!.timedOut).toBe(busy!.offered);
    // The server never had more in flight than the limiter ever allowed, plus the calls we gave up
    // on (their work runs on at the server after the client hangs up).
    expect(busy!.upstreamPeak).toBeLessThanOrEqual(summary.peakLimit + busy!.timedOut);

    // The table printed a header, one row a second, and the summary.
    expect(lines.filter((l) => /^\s+\d+\/8s\s+(quiet|busy)\s/.test(l)).length).toBeGreaterThanOrEqual(6);
    expect(lines.some((l) => l.includes("the upstream's secret: 4 requests at a time, 40 ms each (100 req/s)"))).toBe(
      true,
    );

    // The capacity found, beside the secret one: the busy phase's limit median (100 ms samples over
    // its second half, so within the limits the limiter took) and whether it lies in [C, 2C].
    const found = summary.found!;
    expect(found.phase).toBe('busy');
    expect(found.capacity).toBe(4);
    expect(found.limitMedian).toBeLessThanOrEqual(summary.peakLimit);
    expect(found.within).toBe(found.limitMedian >= 4 && found.limitMedian <= 8);
    const verdict = found.within
      ? 'within [4, 8].'
      : `NOT within [4, 8], ${found.limitMedian > 8 ? 'too high' : 'too low'}.`;
    expect(lines).toContain(
      `  the capacity resilix found: a limit of ${found.limitMedian} (median over the busy phase's second half) against the secret 4: ${verdict}`,
    );

    // The plot: written where the summary says, an SVG with the limit, the in-flight and the capacity line.
    expect(summary.svgPath).toBe(svgPath);
    expect(
      lines.some(
        (l) => l.startsWith('  plot of limit and in-flight against the capacity line: ') && l.endsWith('demo.svg'),
      ),
    ).toBe(true);
    const svg = readFileSync(svgPath, 'utf8');
    expect(svg.startsWith('<svg')).toBe(true);
    for (const legend of ['limit', "server's in-flight", 'secret capacity']) expect(svg).toContain(legend);
  });
});
