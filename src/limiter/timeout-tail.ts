/**
 * The expected timeout tail (adr/0037-expected-timeout-tail.md). A healthy upstream has a latency
 * tail, and a caller whose deadline sits inside it sees a steady share of `timeout`s (a p99 past
 * the deadline: 1% of calls, every window, whatever the load). That share does not grow with
 * in-flight and arrives without a latency rise, so it is not saturation evidence; counted as a
 * reduce signal (adr/0035) it cuts the limit a little every window, forever, and a window with a
 * timeout never grows, so nothing wins the limit back (the soak: limit 15 -> minLimit 4, shed
 * 35% -> 78%).
 *
 * The loop keeps a slow EWMA of the timeout share, learnt only from windows whose latency has not
 * risen, capped at TAIL_CAP, and counts as reduce signals only the timeouts beyond the expected
 * count plus TAIL_NOISE_Z of its Poisson noise. A real incident still cuts at once: its share
 * jumps past the cap (or comes with a latency rise, which stops the learning), and a tail of 1%
 * excuses only about 1% + noise. Allocates nothing.
 */

/**
 * Weight of one window in the expected tail. Ours: 0.1, about ten windows (20 s or more): slow
 * next to the latency EWMA's 1/3, so a share that rises over a few windows stays mostly excess.
 */
export const TAIL_WEIGHT = 0.1;
/**
 * The largest timeout share ever excused as tail. Ours: 5%, half of PRESSURE_SATURATION (adr/0035):
 * a deadline at the upstream's p95 or later is a tail; anything more is a deadline the upstream no
 * longer meets, and every share above the cap cuts as before (100% timeouts: the full x0.81).
 */
export const TAIL_CAP = 0.05;
/**
 * Standard deviations of the expected count (Poisson: sqrt(expected)) also excused. Ours: 2, so a
 * window of 600 calls with a 1% tail (6 expected) cuts from its 12th timeout, not from its 7th
 * (half the windows would otherwise cut, and those cuts alone walk a limit down).
 */
export const TAIL_NOISE_Z = 2;

export class TimeoutTail {
  /** The expected timeout share; 0 until a window teaches otherwise. */
  share = 0;

  /**
   * Learns one closed window's timeout share (`timeouts` of `reached`). Call it only for windows
   * whose latency has not risen: timeouts that come with a queue are the queue's, not the tail's.
   */
  learn(timeouts: number, reached: number): void {
    if (!(reached > 0)) return;
    const seen = timeouts / reached;
    const next = this.share + TAIL_WEIGHT * ((seen < TAIL_CAP ? seen : TAIL_CAP) - this.share);
    this.share = next < TAIL_CAP ? next : TAIL_CAP;
  }

  /** The timeouts of a window of `reached` calls beyond the expected tail and its noise, >= 0. */
  excess(timeouts: number, reached: number): number {
    if (timeouts === 0) return 0;
    const expected = this.share * reached;
    const allowed = expected + TAIL_NOISE_Z * Math.sqrt(expected);
    return timeouts > allowed ? timeouts - allowed : 0;
  }
}
