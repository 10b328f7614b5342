/**
 * A copy of src/ whose call runner has its per-call events hook compiled out, for `--compare`:
 * what a call costs when nobody listens, against the same code with no hook at all, in one run.
 *
 *   npx tsx bench/overhead.ts --without-events            # builds the copy and compares with it
 *   npx tsx bench/without-events.ts                       # makes a copy to keep; prints its directory
 *
 * The one
 * change: `listened(plan)`, the check every settle and refusal makes, returns false, so V8 folds
 * the event code away. Rows suffixed `@alt` are then "resilix without per-call events"; the
 * `-listened` row's twin hears nothing there and is not a comparison.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Makes the copy in a scratch directory and returns its path; removed at exit unless `keep`. */
export function withoutEventsCopy(keep = false): string {
  const src = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'src');
  const scratch = mkdtempSync(join(tmpdir(), 'resilix-without-events-'));
  if (!keep) process.once('exit', () => rmSync(scratch, { recursive: true, force: true }));
  const copy = join(scratch, 'src');
  cpSync(src, copy, { recursive: true });
  const runner = join(copy, 'core', 'run-call.ts');
  const text = readFileSync(runner, 'utf8');
  const hook = /function listened\(plan: CallPlan\): boolean \{\n[\s\S]*?\n\}\n/;
  if (!hook.test(text)) throw new Error(`bench/without-events.ts: no listened() in ${runner}; update the pattern`);
  writeFileSync(runner, text.replace(hook, 'function listened(_plan: CallPlan): boolean {\n  return false;\n}\n'));
  return copy;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${withoutEventsCopy(true)}\n`);
}
