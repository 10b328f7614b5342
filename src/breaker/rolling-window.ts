/**
 * A time-bucketed rolling window of call counts: calls, failures and slow calls over the last
 * `windowMs`, cut into `buckets` equal buckets held in preallocated typed arrays.
 *
 * Buckets rotate by the clock, not by the call: on every read or write the window first moves its
 * head forward by however many buckets of time have passed since it last moved, clearing each one
 * it passes (all of them after an idle gap of a whole window). So a call is always forgotten once
 * it is older than `windowMs` (and at the earliest when it is `windowMs - bucketMs` old), whatever
 * the traffic did in between. cockatiel's SamplingBreaker rotates at most one bucket per call, so
 * after an idle gap it still counts failures from long before (ADR-0020).
 *
 * No allocation after construction. The three counters share one typed array (calls at [i],
 * failures at [size + i], slow calls at [2 size + i]): on 64-bit V8 every typed array carries
 * ~220 bytes of overhead, and a KeyRegistry holds up to 1 000 breakers (docs/registry.md).
 */
export class RollingWindow {
  readonly windowMs: number;
  readonly bucketMs: number;
  private readonly size: number;
  /** calls, then failures, then slow calls: `size` buckets each. */
  private readonly counts: Uint32Array;
  /** Index of the bucket that receives calls now. */
  private head = 0;
  /** Clock time at which the head bucket began. */
  private headStartMs: number;
  private totalCalls = 0;
  private totalFailures = 0;
  private totalSlow = 0;

  constructor(windowMs: number, buckets: number, nowMs: number) {
    this.windowMs = windowMs;
    this.size = buckets;
    this.bucketMs = windowMs / buckets;
    this.counts = new Uint32Array(buckets * 3);
    this.headStartMs = nowMs;
  }

  /** Calls in the window as of the last `advance`. */
  get calls(): number {
    return this.totalCalls;
  }

  get failures(): number {
    return this.totalFailures;
  }

  get slowCalls(): number {
    return this.totalSlow;
  }

  /** Forgets every bucket that has aged out by `nowMs`. */
  advance(nowMs: number): void {
    const elapsedMs = nowMs - this.headStartMs;
    if (elapsedMs < this.bucketMs) return; // the fast path: still inside the head bucket
    const steps = Math.floor(elapsedMs / this.bucketMs);
    this.headStartMs += steps * this.bucketMs;
    if (steps >= this.size) {
      this.zeroAll();
      return;
    }
    let head = this.head;
    const counts = this.counts;
    const size = this.size;
    for (let i = 0; i < steps; i++) {
      head = head + 1 === size ? 0 : head + 1;
      this.totalCalls -= counts[head]!;
      this.totalFailures -= counts[size + head]!;
      this.totalSlow -= counts[2 * size + head]!;
      counts[head] = 0;
      counts[size + head] = 0;
      counts[2 * size + head] = 0;
    }
    this.head = head;
  }

  /** Counts one call at `nowMs`. */
  record(nowMs: number, failure: boolean, slow: boolean): void {
    this.advance(nowMs);
    const head = this.head;
    this.counts[head]!++;
    this.totalCalls++;
    if (failure) {
      this.counts[this.size + head]!++;
      this.totalFailures++;
    }
    if (slow) {
      this.counts[2 * this.size + head]!++;
      this.totalSlow++;
    }
  }

  /** Forgets everything; the head bucket starts at `nowMs`. */
  clear(nowMs: number): void {
    this.zeroAll();
    this.headStartMs = nowMs;
  }

  /**
   * Visits every non-empty bucket, oldest first, with its age at `nowMs` measured from the bucket's
   * start (so a restored bucket is never younger than the calls in it).
   */
  forEachBucket(
    nowMs: number,
    visit: (ageMs: number, calls: number, failures: number, slowCalls: number) => void,
  ): void {
    this.advance(nowMs);
    for (let back = this.size - 1; back >= 0; back--) {
      let index = this.head - back;
      if (index < 0) index += this.size;
      const calls = this.counts[index]!;
      if (calls === 0) continue;
      const startMs = this.headStartMs - back * this.bucketMs;
      // Not below 0: with a fractional bucketMs, headStartMs can round a hair past nowMs, and a restore refuses a negative age.
      visit(Math.max(0, nowMs - startMs), calls, this.counts[this.size + index]!, this.counts[2 * this.size + index]!);
    }
  }

  /**
   * Adds counts that began `ageMs` before `nowMs` (a restore). They land in the bucket that holds
   * that instant; counts older than the window are dropped. Saved ages run from a bucket's start,
   * so restored counts may be forgotten up to one bucket early, never late.
   */
  add(nowMs: number, ageMs: number, calls: number, failures: number, slowCalls: number): void {
    this.advance(nowMs);
    const atMs = nowMs - ageMs;
    const back = atMs >= this.headStartMs ? 0 : Math.ceil((this.headStartMs - atMs) / this.bucketMs);
    if (back >= this.size || calls === 0) return;
    let index = this.head - back;
    if (index < 0) index += this.size;
    this.counts[index]! += calls;
    this.counts[this.size + index]! += failures;
    this.counts[2 * this.size + index]! += slowCalls;
    this.totalCalls += calls;
    this.totalFailures += failures;
    this.totalSlow += slowCalls;
  }

  private zeroAll(): void {
    this.counts.fill(0);
    this.totalCalls = 0;
    this.totalFailures = 0;
    this.totalSlow = 0;
  }
}
