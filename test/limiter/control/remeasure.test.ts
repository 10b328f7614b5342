import { describe, expect, it } from 'vitest';
import { resolveClock, systemClock } from '../../../src/core/clock';
import { resolveControlConfig, type ControlOptions } from '../../../src/limiter/control-config';
import { LimitControlLoop } from '../../../src/limiter/control-loop';
import { DEFAULT_TUNING } from '../../../src/limiter/control-tuning';
import type { LimitChange } from '../../../src/limiter/controller';
import { limiter } from '../../../src/limiter/limiter';
import { type CallStart, runScripted, type ScriptedCall } from './support/scripted';

/**
 * The re-measure (adr/0088), on the scripted closed loop of support/scripted.ts: every
 * remeasureEveryMs of wall-clock time the loop drains to half its limit for a round trip and a
 * window, measures the no-load latency again, and restores the limit.
 */

const EVERY = DEFAULT_TUNING.remeasureEveryMs;

function loop(options: ControlOptions = {}, epochOffsetMs = 0): LimitControlLoop {
  return new LimitControlLoop(resolveControlConfig(options), DEFAULT_TUNING, epochOffsetMs);
}

/** 16 servers at 100 ms: processor sharing above 16 calls in flight. */
const knee = ({ inflight }: CallStart): ScriptedCall => ({ latencyMs: 100 * Math.max(1, inflight / 16) });

function remeasures(changes: readonly LimitChange[]): LimitChange[] {
  return changes.filter((change) => change.reason === 'remeasure');
}

describe('the re-measure', () => {
  it('carries its provenance-documented constants', () => {
    expect(DEFAULT_TUNING).toMatchObject({ remeasureEveryMs: 30_000, remeasureGapWindows: 5 });
  });

  it('halves the limit at each wall-clock period boundary and restores it after one window', () => {
    const controller = loop();
    const { changes } = runScripted({ controller, durationMs: 70_000, clients: 400, call: knee });
    const found = remeasures(changes);
    // Two re-measures (30 s, 60 s), each a drain and a restore.
    expect(found).toHaveLength(4);
    const [down, up, down2, up2] = found as [LimitChange, LimitChange, LimitChange, LimitChange];
    // Starts at the first update check (100 ms) after the boundary.
    expect(down.at).toBeGreaterThanOrEqual(30_000);
    expect(down.at).toBeLessThan(30_000 + 2 * DEFAULT_TUNING.remeasureGapWindows * 100);
    expect(down.direction).toBe('shrink');
    expect(down.to).toBe(Math.floor(down.from / 2));
    // The restore gives back the limit it began from, a round trip and a window (>= 2 s) later.
    expect(up.direction).toBe('grow');
    expect(up.to).toBe(down.from);
    expect(up.at - down.at).toBeGreaterThanOrEqual(2_000);
    expect(up.at - down.at).toBeLessThan(3_000);
    expect(down2.at).toBeGreaterThanOrEqual(60_000);
    expect(up2.to).toBe(down2.from);
  });

  it('reports remeasuring while it holds the limit low', () => {
    const controller = loop();
    let sawMeasuring = false;
    let measuringOutside = false;
    runScripted({
      controller,
      durationMs: 40_000,
      clients: 400,
      call: (start) => {
        const remeasuring = controller.snapshot().remeasuring;
        if (remeasuring && start.now >= 30_000 && start.now < 33_000) sawMeasuring = true;
        if (remeasuring && start.now >= 10_000 && start.now < 30_000) measuringOutside = true;
        return knee(start);
      },
    });
    expect(sawMeasuring).toBe(true);
    expect(measuringOutside).toBe(false);
  });

  it('aligns on the clock plus its epoch offset (clients in different processes drain together)', () => {
    const controller = loop({}, 10_000);
    const { changes } = runScripted({ controller, durationMs: 45_000, clients: 400, call: knee });
    const [down] = remeasures(changes);
    // now + 10 s crosses 30 s at now = 20 s.
    expect(down?.at).toBeGreaterThanOrEqual(20_000);
    expect(down?.at).toBeLessThan(21_000);
  });

  it('finds the no-load latency behind a queue that other clients keep, when they drain too', () => {
    // Other clients hold 32 calls at the upstream (16 of them queued), except in the seconds after 30 s when they
    // re-measure too (they read the same wall clock): our slow start and its drain only ever see
    // latency with their queue in it.
    const controller = loop();
    const others = (now: number): number => (now >= 30_000 && now < 34_000 ? 0 : 32);
    let before = Number.NaN;
    runScripted({
      controller,
      durationMs: 40_000,
      clients: 400,
      call: (start) => {
        if (start.now < 29_000) before = controller.snapshot().baselineMs ?? Number.NaN;
        return { latencyMs: 100 * Math.max(1, (start.inflight + others(start.now)) / 16) };
      },
    });
    const after = controller.snapshot().baselineMs ?? Number.NaN;
    expect(before).toBeGreaterThan(190);
    expect(after).toBeLessThan(115);
  });

  it('does not re-measure an app-limited client (its demand never reaches the limit)', () => {
    const controller = loop();
    const { changes } = runScripted({ controller, durationMs: 70_000, clients: 3, call: knee });
    expect(remeasures(changes)).toEqual([]);
  });

  it('does not re-measure calls that mark (a stream holds its permit long after its latency)', () => {
    const controller = loop();
    const { changes } = runScripted({
      controller,
      durationMs: 70_000,
      clients: 400,
      call: (start) => ({ ...knee(start), holdMs: 500 }),
    });
    expect(changes.length).toBeGreaterThan(0);
    expect(remeasures(changes)).toEqual([]);
  });

  it('runs for gradient2, not for aimd or fixed (they do not steer by latency)', () => {
    for (const [algorithm, expected] of [
      ['gradient2', true],
      ['aimd', false],
      ['fixed', false],
    ] as const) {
      const controller = loop({ algorithm, initialLimit: 8 });
      const { changes } = runScripted({ controller, durationMs: 70_000, clients: 400, call: knee });
      expect(remeasures(changes).length > 0, algorithm).toBe(expected);
    }
  });

  it('is off with remeasureEveryMs 0', () => {
    const controller = new LimitControlLoop(resolveControlConfig({}), { ...DEFAULT_TUNING, remeasureEveryMs: 0 });
    const { changes } = runScripted({ controller, durationMs: 70_000, clients: 400, call: knee });
    expect(remeasures(changes)).toEqual([]);
    expect(EVERY).toBeGreaterThan(0);
  });
});

describe("the clock's epoch offset", () => {
  it('is performance.timeOrigin for the default clock, so now() + offset reads Unix time', () => {
    expect(systemClock.epochOffsetMs).toBe(performance.timeOrigin);
    expect(Math.abs(systemClock.now() + systemClock.epochOffsetMs - Date.now())).toBeLessThan(1_000);
  });

  it('is 0 for a user clock without one, and passes a finite one through', () => {
    expect(resolveClock({ now: () => 5 }, 'test').epochOffsetMs).toBe(0);
    expect(resolveClock({ now: () => 5, epochOffsetMs: -12.5 }, 'test').epochOffsetMs).toBe(-12.5);
  });

  it.each([Number.NaN, Infinity, '3', null])('rejects epochOffsetMs %s, naming the option', (bad) => {
    expect(() => resolveClock({ now: () => 0, epochOffsetMs: bad as never }, 'limiter')).toThrow(
      /limiter option "clock" has epochOffsetMs .* it must be a finite number of milliseconds/,
    );
  });

  it("reaches the limiter's control loop", () => {
    const l = limiter({ clock: { now: () => 0, epochOffsetMs: 1234 } });
    // Internal, on purpose: the wiring is what this test is about.
    expect((l as unknown as { controller: { epochOffsetMs: number } }).controller.epochOffsetMs).toBe(1234);
  });
});
