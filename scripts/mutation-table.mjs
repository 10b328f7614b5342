// Prints the per-file table docs/testing.md records from one or more Stryker JSON reports
// (reports/mutation/mutation.json, copied aside after each run), merged by file; with --list, the
// surviving and uncovered mutants first, one a line. With --union, reports of runs over the same
// files with different tests (the suite; then only new test files, over all its mutants or some
// lines) are combined mutant by mutant (same place, mutator and replacement): detected when any run
// detected it. With --ranges, only the surviving and uncovered mutants' places, as one Stryker --mutate
// list (path:line:column-line:column, columns from 0): the follow-up run of the slow test files over them. Usage:
//   node scripts/mutation-table.mjs reports/runA.json reports/runB.json [--list] [--union] [--ranges]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const list = args.includes('--list');
const union = args.includes('--union');
const ranges = args.includes('--ranges');
const rank = { Killed: 4, CompileError: 4, RuntimeError: 4, Timeout: 3, Survived: 2, NoCoverage: 1, Ignored: 0 };
const keyOf = (m) =>
  `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement}`;
const files = {};
for (const path of args.filter((arg) => !arg.startsWith('--'))) {
  for (const [name, file] of Object.entries(JSON.parse(readFileSync(path, 'utf8')).files)) {
    const seen = files[name];
    if (!union || seen === undefined) {
      files[name] = file;
      continue;
    }
    const byKey = new Map(file.mutants.map((m) => [keyOf(m), m]));
    if (file.source !== seen.source) {
      throw new Error(`${name}: the reports mutated different sources; --union needs the same file`);
    }
    for (const mutant of seen.mutants) {
      // A targeted run (--mutate file:line) covers some of the mutants: the rest keep their status.
      const other = byKey.get(keyOf(mutant));
      if (other === undefined) continue;
      // A static mutant the first report left out stays out: the denominator is the first run's.
      if (mutant.status !== 'Ignored' && rank[other.status] > rank[mutant.status]) mutant.status = other.status;
    }
  }
}

if (ranges) {
  const places = new Set();
  for (const [path, file] of Object.entries(files)) {
    for (const { status, location: at } of file.mutants) {
      if (status !== 'Survived' && status !== 'NoCoverage') continue;
      // The report's columns count from 1, a --mutate range's from 0 (its lines from 1 in both).
      places.add(`${path}:${at.start.line}:${at.start.column - 1}-${at.end.line}:${at.end.column - 1}`);
    }
  }
  console.log([...places].join(','));
  process.exit(0);
}

const empty = () => ({ mutants: 0, killed: 0, timeout: 0, survived: 0, noCoverage: 0, ignored: 0 });
const total = empty();
const rows = [];
for (const [path, file] of Object.entries(files).sort(([a], [b]) => a.localeCompare(b))) {
  const count = empty();
  const lines = file.source.split('\n');
  for (const mutant of file.mutants) {
    if (mutant.status === 'Ignored') {
      count.ignored++;
      continue;
    }
    count.mutants++;
    if (mutant.status === 'Killed' || mutant.status === 'CompileError' || mutant.status === 'RuntimeError')
      count.killed++;
    else if (mutant.status === 'Timeout') count.timeout++;
    else if (mutant.status === 'Survived') count.survived++;
    else if (mutant.status === 'NoCoverage') count.noCoverage++;
    if (list && (mutant.status === 'Survived' || mutant.status === 'NoCoverage')) {
      const { line, column } = mutant.location.start;
      const code = (lines[line - 1] ?? '').trim().slice(0, 100);
      console.log(
        `${path}:${line}:${column} ${mutant.status} ${mutant.mutatorName} -> ${mutant.replacement} | ${code}`,
      );
    }
  }
  for (const key of Object.keys(total)) total[key] += count[key];
  rows.push([path, count]);
}

const score = (c) => {
  const detected = c.killed + c.timeout;
  const valid = detected + c.survived + c.noCoverage;
  return valid > 0 ? `${((100 * detected) / valid).toFixed(1)} %` : 'n/a';
};
console.log('| file | mutants | killed | timed out | survived | no coverage | score |');
console.log('|---|---|---|---|---|---|---|');
for (const [path, c] of rows) {
  const ignored = c.ignored > 0 ? ` (${c.ignored} static, ignored)` : '';
  console.log(
    `| ${path} | ${c.mutants}${ignored} | ${c.killed} | ${c.timeout} | ${c.survived} | ${c.noCoverage} | ${score(c)} |`,
  );
}
console.log(
  `| **total** | ${total.mutants} | ${total.killed} | ${total.timeout} | ${total.survived} | ${total.noCoverage} | **${score(total)}** |`,
);
