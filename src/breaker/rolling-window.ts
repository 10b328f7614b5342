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
 * No allocation after construction.
 */
export class RollingWindow {
  readonly windowMs: number;
  readonly bucketMs: number;
  private readonly size: number;
  private readonly callCounts: Uint32Array;
  private readonly failureCounts: Uint32Array;
  private readonly slowCounts: Uint32Array;
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
    this.callCounts = new Uint32Array(buckets);
    this.failureCounts = new Uint32Array(buckets);
    this.slowCounts = new Uint32Array(buckets);
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
    for (let i = 0; i < steps; i++) {
      head = head + 1 === this.size ? 0 : head + 1;
      this.totalCalls -= this.callCounts[head]!;
      this.totalFailures -= this.failureCounts[head]!;
      this.totalSlow -= this.slowCounts[head]!;
      this.callCounts[head] = 0;
      this.failureCounts[head] = 0;
      this.slowCounts[head] = 0;
    }
    this.head = head;
  }

  /** Counts one call at `nowMs`. */
  record(nowMs: number, failure: boolean, slow: boolean): void {
    this.advance(nowMs);
    const head = this.head;
    this.callCounts[head]!++;
    this.totalCalls++;
    if (failure) {
      this.failureCounts[head]!++;
      this.totalFailures++;
    }
    if (slow) {
      this.slowCounts[head]!++;
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
  forEachBucket(nowMs: number, visit: (ageMs: number, calls: number, failures: number, slowCalls: number) => void): void {
    this.advance(nowMs);
    for (let back = this.size - 1; back >= 0; back--) {
      let index = this.head - back;
      if (index < 0) index += this.size;
      const calls = this.callCounts[index]!;
      if (calls === 0) continue;
      const startMs = this.headStartMs - back * this.bucketMs;
      visit(nowMs - startMs, calls, this.failureCounts[index]!, this.slowCounts[index]!);
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
    this.callCounts[index]! += calls;
    this.failureCounts[index]! += failures;
    this.slowCounts[index]! += slowCalls;
    this.totalCalls += calls;
    this.totalFailures += failures;
    this.totalSlow += slowCalls;
  }

  private zeroAll(): void {
    this.callCounts.fill(0);
    this.failureCounts.fill(0);
    this.slowCounts.fill(0);
    this.totalCalls = 0;
    this.totalFailures = 0;
    this.totalSlow = 0;
  }
}
