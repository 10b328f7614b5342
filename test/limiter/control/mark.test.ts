import { describe, expect, it } from 'vitest';
import { resolveControlConfig } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { runScripted } from './support/scripted';
import { observeAt } from './support/feed';

/**
 * The control loop's mark path (adr/0045): `observeMark` takes a stream's latency at its first
 * token, as a sample of its own; the settle that follows (`marked` = true) adds no second sample,
 * only the time the permit was held after the mark, which Little's law needs.
 */

function loop(initialLimit = 4): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig({ initialLimit }));
}

describe('the control loop: marks', () => {
  it("takes a marked call's latency sample at the mark: the slow start grows there", () => {
    const controller = loop();
    expect(controller.observeMark(100, 100, 4)).toBe(true);
    expect(controller.limit).toBe(5);
  });

  it('adds no second sample at the settle of a marked call', () => {
    const marked = loop();
    marked.observeMark(100, 100, 4);
    expect(observeAt(marked, { verdict: 'ok', latencyMs: 100, durationMs: 400 }, 400, 4, true)).toBe(false);
    expect(marked.limit).toBe(5);
    // The same settle unmarked is a sample: it finds the limit binding and grows it.
    const plain = loop();
    plain.observeMark(100, 100, 4);
    observeAt(plain, { verdict: 'ok', latencyMs: 100, durationMs: 400 }, 400, 5);
    expect(plain.limit).toBe(6);
  });

  it('still counts a stream that times out after its first token as a timeout', () => {
    const controller = new LimitControlLoop(
      resolveControlConfig({ algorithm: 'aimd', initialLimit: 10, minSamples: 1 }),
    );
    controller.observeMark(100, 100, 10);
    observeAt(controller, { verdict: 'timeout', latencyMs: 100, durationMs: 5_000 }, 5_000, 10, true);
    // The window (a round: a call admitted after it opened has come back) holds one sample and one
    // timeout: aimd's reduce signal ends its slow start.
    observeAt(controller, { verdict: 'ok', latencyMs: 100 }, 5_100, 10);
    expect(controller.snapshot().slowStart).toBe(false);
  });

  it("drains a slow start of streams to rate x (no-load latency + hold after the mark) x 0.5, Little's law", () => {
    const controller = loop(1);
    // Streams: the first token after 100 ms x max(1, in-flight / 16), then 300 ms of body.
    const { changes, peakInflight } = runScripted({
      controller,
      durationMs: 2_000,
      clients: 400,
      call: ({ inflight }) => ({ latencyMs: 100 * Math.max(1, inflight / 16), holdMs: 300 }),
    });
    expect(peakInflight).toBe(45);
    // At 45 in flight a stream holds its permit 100 x 45/16 + 300 = 581 ms: 45 / 581 ms = 0.077
    // answers a ms, x (100 + 300) ms x 0.5 = 15.5. Without the hold it would be 3.9.
    const drain = changes.find((change) => change.reason === 'drain');
    expect(drain).toMatchObject({ from: 45, to: 15 });
    expect(controller.snapshot().estimate).toBeGreaterThan(15);
    expect(controller.snapshot().estimate).toBeLessThan(16);
  });

  it('exits on the rise of the latency to the first token, not of the whole stream', () => {
    // The same upstream, calls that do not mark: their latency is the whole 400+ ms hold, the rise
    // of its first 100 ms is diluted, and the slow start overshoots twice as far before it exits.
    const controller = loop(1);
    const { changes, peakInflight } = runScripted({
      controller,
      durationMs: 5_000,
      clients: 400,
      call: ({ inflight }) => ({ latencyMs: 100 * Math.max(1, inflight / 16) + 300 }),
    });
    expect(peakInflight).toBe(97);
    expect(changes.find((change) => change.reason === 'drain')).toMatchObject({ from: 97 });
  });
});
