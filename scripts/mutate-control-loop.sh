#!/usr/bin/env bash
# A full mutation run over the control loop (issue 14 item 7, docs/testing.md), in two Stryker runs that fit a
# session: every mutant against test/limiter/control without its two slowest files, then the mutants that survived
# it against those two files alone (a --mutate range takes every mutant inside it, so mutants nested in a survivor's
# span run again too). Scored together mutant by mutant (scripts/mutation-table.mjs --union): a mutant is detected
# when either run detected it, as one run with every test would report (bail stops at the first kill).
#
#   scripts/mutate-control-loop.sh [out-dir]     # default reports/mutation-control (from the repository root); a
#                                                # finished part's report is kept and the part skipped, so a stopped
#                                                # job resumes at the part it was in (from that part's start).
#                                                # Delete out-dir after changing src/ or the tests: --union refuses
#                                                # reports of different sources, but only after run 2.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-reports/mutation-control}"
mkdir -p "$out"

# Half the control loop's test time, and they cover nearly every mutant: whole-ms-clock.test.ts's five 40 s runs
# (adr/0125) and failure-modes.test.ts's 30-minute incident.
slow='test/limiter/control/whole-ms-clock.test.ts,test/limiter/control/failure-modes.test.ts'
files='src/limiter/control-loop.ts,src/limiter/algorithms/*.ts,src/limiter/window.ts,src/limiter/baseline.ts,src/limiter/control-config.ts,src/limiter/control-tuning.ts,src/limiter/controller.ts,src/limiter/timeout-tail.ts'
run_stryker() { # <report> <incremental file> <mutate> [env...]: one fresh run, its JSON report copied to <report>
  local report="$1" incremental="$2" mutate="$3"
  shift 3
  rm -f "$incremental"
  env -u STRYKER_TEST_FILES -u STRYKER_EXCLUDE_FILES STRYKER_TESTS=limiter/control "$@" npx stryker run --concurrency 2 --incrementalFile "$incremental" \
    --reporters clear-text,json,progress-append-only --mutate "$mutate"
  cp reports/mutation/mutation.json "$report"
}

if [[ ! -f "$out/run1.json" ]]; then
  echo "== run 1: every mutant, test/limiter/control without $slow"
  run_stryker "$out/run1.json" "$out/inc-1.json" "$files" STRYKER_EXCLUDE_FILES="$slow"
fi
if [[ ! -f "$out/run2.json" ]]; then
  ranges="$(node scripts/mutation-table.mjs "$out/run1.json" --ranges)"
  if [[ -z "$ranges" ]]; then
    cp "$out/run1.json" "$out/run2.json" # nothing survived: nothing for the slow files to kill
  else
    echo "== run 2: every mutant inside run 1's $(tr ',' '\n' <<<"$ranges" | wc -l) places that a mutant survived or no test covered, against $slow alone"
    run_stryker "$out/run2.json" "$out/inc-2.json" "$ranges" STRYKER_TEST_FILES="$slow"
  fi
fi
node scripts/mutation-table.mjs "$out/run1.json" "$out/run2.json" --union
