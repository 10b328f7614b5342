import { describe, expect, it } from 'vitest';
import { runLoad, type Target } from '../../scripts/e2e-real-load';
import { limiter } from '../../src/index';

/** A target that answers after `ms` on real timers. */
const answersAfter = (ms: number): Target => ({
  name: 'fake',
  call: () => new Promise<void>((resolve) => setTimeout(resolve, ms)),
});

describe("e2e:real's closed-loop load (scripts/e2e-real-load.ts)", () => {
  it('lets each caller think `thinkMs` after an answer before its next call (adr/0141)', async () => {
    // One caller, a fixed cap of 1: its calls follow each other, so the gaps between them are its think time.
    const run = async (thinkMs: number | undefined) => {
      const record = await runLoad({
        target: answersAfter(5),
        limiter: limiter({ algorithm: 'fixed', initialLimit: 1 }),
        load: { kind: 'closed', callers: 1, ...(thinkMs === undefined ? {} : { thinkMs }) },
        durationMs: 300,
        deadlineMs: 1_000,
      });
      const calls = record.calls.filter((call) => call.outcome === 'ok');
      return calls.slice(1).map((call, i) => call.startMs - calls[i]!.endMs);
    };
    const thinking = await run(40);
    expect(thinking.length).toBeGreaterThanOrEqual(3);
    // Timers fire no earlier than asked (to a millisecond of rounding); a gap under the think time would be a bug.
    for (const gap of thinking) expect(gap).toBeGreaterThanOrEqual(39);
    // Without think time a caller calls again at once: well under the 40 ms.
    const eager = await run(undefined);
    expect(eager.length).toBeGreaterThan(thinking.length);
    expect(Math.max(...eager)).toBeLessThan(20);
  });
});
