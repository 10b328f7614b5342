import { DEFAULT_TUNING, type ControlTuning } from '../src/limiter/control-tuning';

/**
 * The control loop's tuning for a simulation run. The shipped tuning by default; the ablation
 * study (sim/ablation.ts) sets `SIM_TUNING` to a JSON object of the fields it changes, and every
 * limiter a scenario builds then runs with it. Read once per process, so a sweep worker applies
 * it to every run it makes.
 */
let tuning: ControlTuning | undefined;

export function simTuning(): ControlTuning {
  if (tuning !== undefined) return tuning;
  const raw = process.env.SIM_TUNING;
  if (raw === undefined || raw === '') {
    tuning = DEFAULT_TUNING;
    return tuning;
  }
  const changes = JSON.parse(raw) as Record<string, unknown>;
  for (const key of Object.keys(changes)) {
    if (!(key in DEFAULT_TUNING)) throw new Error(`SIM_TUNING: the control loop has no tuning field "${key}"`);
  }
  tuning = Object.freeze({ ...DEFAULT_TUNING, ...(changes as Partial<ControlTuning>) });
  return tuning;
}
