/**
 * The internal entry: the seams that tests, the simulator and scripts need and the package does
 * not export (adr/0083). It is not built or published (tsup and typedoc start from src/index.ts;
 * package.json's `exports` has no `./internal`) and carries no compatibility promise.
 *
 * The rules:
 * - Outside src/, code uses the library as a user does, through src/index.ts. Where it needs to
 *   build a part differently (a limiter around a stand-in controller, admission without a control
 *   loop, the call runner on a hand-made plan) or to measure a building block alone, it imports
 *   that from here, and from nowhere else.
 * - A unit test of one internal module imports that module: the module is its subject, not a seam.
 * - A name is added here for a caller outside src/ that cannot do its job through the public entry;
 *   the comment above it says who. The dead-code check (knip, `npm run deadcode`) flags a name
 *   nobody imports.
 */

// A limiter driven by a given controller: tests script the limit with a stand-in
// (test/limiter/admission).
export { limiterWithController, limiterWithTuning } from './limiter/limiter';
// What a stand-in controller implements, and the channel its `changes` is
// (test/limiter/admission/support/stand-in-controller.ts).
export type { LimitController } from './limiter/controller';
export { EventChannel } from './core/events';
// Admission alone, on a stand-in controller (test/limiter/admission).
export { Admission } from './limiter/admission';
// The call runner on a hand-made plan: a policy stand-in (test/helpers/spy-policy.ts), admission
// with a deadline (test/limiter/admission/deadline.test.ts).
export { runCall } from './core/run-call';
export type { BreakerPort, CallPlan } from './core/ports';
// The statistics building blocks, measured and compared on their own (scripts/quantile-report.ts,
// scripts/measure-key-memory.ts). P2Quantile and SortedRing are the comparison baselines of
// adr/0016 and are used nowhere in the library (adr/0082).
export type { QuantileEstimator } from './stats/quantile-estimator';
export { WindowQuantile } from './stats/window-quantile';
export { P2Quantile } from './stats/p2-quantile';
export { SortedRing } from './stats/sorted-ring';
export { MedianFilter } from './stats/median-filter';
export { Ewma } from './stats/ewma';
