import { fmt } from '../engine/criteria';
import type { ScenarioResult } from '../engine/scenario';

/** Pads a table of strings into aligned columns (plain text: it reads the same in CI logs). */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** One row per criterion: scenario, seed, criterion, measured, bound, verdict. */
export function criteriaTable(results: readonly ScenarioResult[]): string {
  const rows: string[][] = [];
  for (const r of results) {
    for (const c of r.criteria) {
      rows.push([
        r.name,
        r.seed,
        c.name,
        fmt(c.measured) + (c.unit ? ` ${c.unit}` : ''),
        c.criterion,
        c.pass ? 'pass' : 'FAIL',
      ]);
    }
  }
  return formatTable(['scenario', 'seed', 'criterion', 'measured', 'bound', ''], rows);
}

/** Markdown version of the criteria table, for docs/simulation.md. */
export function criteriaMarkdown(result: ScenarioResult): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const rows = result.criteria.map(
    (c) =>
      `| ${cell(c.name)} | ${fmt(c.measured)}${c.unit ? ` ${c.unit}` : ''} | ${cell(c.criterion)} | ${c.pass ? 'pass' : '**FAIL**'} |`,
  );
  return ['| criterion | measured | bound | |', '|---|---|---|---|', ...rows].join('\n');
}
