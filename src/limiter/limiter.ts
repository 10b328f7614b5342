import type { CallFn, ExecuteOptions } from '../core/call';
import { subscribeRefused, subscribeSettled, type CallEvents, type RefusalEvent } from '../core/call-events';
import type { Classifier } from '../core/classify';
import { resolveClock, type Clock } from '../core/clock';
import type { Listener, Subscription } from '../core/events';
import {
  choiceOption,
  functionOption,
  knownOptions,
  numberOption,
  optionsObject,
  orderedOptions,
  sharedWhenEqual,
} from '../core/options';
import type { Observation } from '../core/observation';
import type { Policy } from '../core/policy';
import { callPlan, type CallPlan, type LimiterPort } from '../core/ports';
import { runCall } from '../core/run-call';
import { Admission, type AdmissionCounters, type QueueingConfig } from './admission';
import { CONTROL_DEFAULTS, resolveControlConfig, type ControlConfig, type ControlOptions } from './control-config';
import { LimitControlLoop } from './control-loop';
import type { ControlTuning } from './control-tuning';
import type { LimitController, LimitControllerSnapshot } from './controller';
import type { QueueOrder } from './wait-queue';

/** The queue's bounds, as factors of the adapting limit (spec §7; see docs/queueing.md). */
export interface QueueingOptions {
  /**
   * Calls running plus waiting up to `initialFactor`·limit wait without rejection. At least 1. Default 2: the spec's
   * shape (§6, §7) with failsafe-go's `WithQueueing(2, 3)` numbers, which count waiters only (adr/0008).
   */
  initialFactor?: number | undefined;
  /**
   * From `maxFactor`·limit every call is rejected; between the factors the rejection probability rises linearly from
   * 0 to 1. Default 3 (the spec's), or `initialFactor + 1` if larger (ours: the gradual zone stays one limit wide).
   */
  maxFactor?: number | undefined;
}

export type LimiterOptions = ControlOptions & {
  clock?: Clock | undefined;
  /**
   * Factor-based queueing (spec §7, adr/0008). `false`: a call that cannot run at once is rejected. Default
   * `{ initialFactor: 2, maxFactor: 3 }`, counted on running plus waiting (unlike failsafe-go: adr/0008).
   */
  queueing?: QueueingOptions | boolean | undefined;
  /**
   * Which waiter a freed slot goes to. Default 'lifo' (ours, adr/0040-queue-order-lifo.md): under overload with
   * deadlines, the newest waiter is the one that can still finish in time.
   */
  queueOrder?: QueueOrder | undefined;
  /** A uniform number in [0, 1) for gradual rejection. Default `Math.random`; seed it for deterministic runs. */
  random?: (() => number) | undefined;
  /** Classifies calls made through `execute`. */
  classify?: Classifier | undefined;
};

/** The control loop's state (limit, baseline, smoothed latency, last change) and admission's. */
export interface LimiterSnapshot extends LimitControllerSnapshot, AdmissionCounters {
  readonly kind: 'limiter';
  /** Calls holding a permit now (running, or handed a slot and about to run). */
  readonly inflight: number;
  /** Calls waiting for a slot now. */
  readonly queued: number;
  readonly queueing: QueueingConfig | false;
  readonly queueOrder: QueueOrder;
}

// The spec's queue shape (§6, §7) with failsafe-go's numbers, on running plus waiting (adr/0008); LIFO is ours
// (adr/0040). Default objects are frozen and shared by every limiter whose options equal them (ADR-0029, ADR-0086):
// the control config saves a key about 0.3 KB (16 fields and their number boxes).
const DEFAULT_QUEUE_ORDER: QueueOrder = 'lifo';
const QUEUE_ORDERS: readonly QueueOrder[] = ['fifo', 'lifo'];
const DEFAULT_QUEUEING: QueueingConfig = Object.freeze({ initialFactor: 2, maxFactor: 3 });
const DEFAULT_CONTROL_CONFIG: ControlConfig = /* @__PURE__ */ resolveControlConfig(undefined, 'limiter');

/** Every option `limiter()` accepts: the control loop's and admission's. */
const LIMITER_OPTION_NAMES: readonly (keyof LimiterOptions)[] = [
  ...(Object.keys(CONTROL_DEFAULTS) as (keyof ControlOptions)[]),
  'clock',
  'queueing',
  'queueOrder',
  'random',
  'classify',
];

/**
 * The adaptive concurrency limiter: a control loop finds the upstream's capacity from latency, and admission enforces
 * it (counters, permits, a factor-bounded queue). Share one among any number of callers: a change of limit applies to
 * all at once, mid-flight. It *is* its admission (a subclass, not a wrapper) to keep the fast path inlined (adr/0041).
 */
export class Limiter extends Admission implements Policy<LimiterSnapshot>, LimiterPort {
  /** @internal Per-call events, made on the first `onSettle` or `onRefuse` (issue 17). */
  events: CallEvents | undefined = undefined;
  /** The plan of `execute` (this limiter alone), made on its first call: in a pipeline it is never needed. */
  private ownPlan: CallPlan | undefined = undefined;
  private readonly classifier: Classifier | undefined;

  constructor(options?: LimiterOptions);
  /** @internal Tests inject a stand-in controller, the ablation study a tuning (src/internal.ts). */
  constructor(options: LimiterOptions | undefined, internal: { controller?: LimitController; tuning?: ControlTuning });
  constructor(options?: LimiterOptions, internal?: { controller?: LimitController; tuning?: ControlTuning }) {
    const o = optionsObject<LimiterOptions>('limiter', options);
    knownOptions('limiter', o, LIMITER_OPTION_NAMES);
    const controller =
      internal?.controller ??
      new LimitControlLoop(
        sharedWhenEqual(resolveControlConfig(o, 'limiter'), DEFAULT_CONTROL_CONFIG),
        internal?.tuning,
      );
    const clock = resolveClock(o.clock, 'limiter');
    const queueing = resolveQueueing(o.queueing);
    const queueOrder = choiceOption('limiter', 'queueOrder', o.queueOrder, DEFAULT_QUEUE_ORDER, QUEUE_ORDERS);
    const random = functionOption<() => number>('limiter', 'random', o.random) ?? Math.random;
    const classify = functionOption<Classifier>('limiter', 'classify', o.classify);
    super({ clock, controller, queueing, queueOrder, random });
    this.classifier = classify;
  }

  // Getters on the prototype, not fields: 16 bytes less per limiter (ADR-0029).
  get kind(): 'limiter' {
    return 'limiter';
  }

  /** @internal The call runner drives admission directly. */
  get port(): LimiterPort {
    return this;
  }

  execute<T>(fn: CallFn<T>, options?: ExecuteOptions): Promise<T> {
    this.ownPlan ??= callPlan(this.clock, { limiter: this }, this.classifier);
    return runCall(this.ownPlan, fn, options);
  }

  /**
   * Hears every call this limiter admitted that ran, when it settles (in a pipeline or alone), after the policies
   * learned from it. resilix reuses its Observation for every call, valid only during the listener: copy what you keep.
   */
  onSettle(listener: Listener<Observation>): Subscription {
    return subscribeSettled(this, listener);
  }

  /** Hears every call this limiter refuses (`shed`, `queue-timeout`, `abandoned`), in a pipeline or alone. */
  onRefuse(listener: Listener<RefusalEvent>): Subscription {
    return subscribeRefused(this, listener);
  }

  snapshot(): LimiterSnapshot {
    return {
      ...this.controller.snapshot(),
      ...this.counters(),
      kind: 'limiter',
      limit: this.limit,
      inflight: this.inflight,
      queued: this.queued,
      queueing: this.queueing ?? false,
      queueOrder: this.queueOrder,
    };
  }
}

/** An adaptive concurrency limiter; see `LimiterOptions` for the knobs and their provenance. */
export function limiter(options?: LimiterOptions): Limiter {
  return new Limiter(options);
}

/** @internal A limiter around a given controller (a test stand-in, a scripted limit); not exported by the package. */
export function limiterWithController(options: LimiterOptions | undefined, controller: LimitController): Limiter {
  return new Limiter(options, { controller });
}

/** @internal A limiter whose control loop runs with a given tuning (the ablation study). */
export function limiterWithTuning(options: LimiterOptions | undefined, tuning: ControlTuning): Limiter {
  return new Limiter(options, { tuning });
}

function resolveQueueing(value: unknown): QueueingConfig | undefined {
  if (value === false) return undefined;
  if (value === undefined || value === true) return DEFAULT_QUEUEING;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TypeError(
      `resilix: limiter option "queueing" must be false or an object { initialFactor, maxFactor }; received ${
        value === null ? 'null' : typeof value
      }`,
    );
  }
  const q = value as QueueingOptions;
  knownOptions('limiter', q, ['initialFactor', 'maxFactor'], 'queueing.');
  const d = DEFAULT_QUEUEING;
  const initialFactor = numberOption('limiter', 'queueing.initialFactor', q.initialFactor, d.initialFactor, { min: 1 });
  const maxDefault = Math.max(d.maxFactor, initialFactor + 1);
  const maxFactor = numberOption('limiter', 'queueing.maxFactor', q.maxFactor, maxDefault, { min: 1 });
  orderedOptions('limiter', 'queueing.initialFactor', initialFactor, 'queueing.maxFactor', maxFactor);
  return sharedWhenEqual(Object.freeze({ initialFactor, maxFactor }), DEFAULT_QUEUEING);
}
