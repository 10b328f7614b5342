import { fmt } from '../engine/criteria';
import type { ScenarioResult } from '../engine/scenario';
import { matrixKey } from '../scenarios/index';
import { formatTable } from './table';

const ALGORITHMS = ['vegas', 'gradient2', 'aimd'] as const;

/** The headline figure of a matrix cell, by base scenario. */
function headline(result: ScenarioResult): string {
  const f = result.figures;
  const base = matrixKey(result.name)!.base;
  if (base.startsWith('convergence')) return `limit ${fmt(f.settledLimit!)} vs ${fmt(f.capacity!)}`;
  if (base === 'capacity-halves')
    return `${fmt(f.fullLimit!)} / ${fmt(f.halvedLimit!)} / ${fmt(f.restoredLimit!)} vs 50/25/50`;
  if (base === 'latency-cliff')
    return `p99 ${fmt(f.adaptiveCliffP99Ms!)} ms, goodput ${fmt(f.adaptiveCliffGoodput!)}/s`;
  if (base === 'baseline-shift') return `limit ${fmt(f.beforeLimit!)} -> ${fmt(f.afterLimit!)} vs 50`;
  return '';
}

function cell(result: ScenarioResult | undefined): string {
  if (result === undefined) return '-';
  const failed = result.criteria.filter((c) => !c.pass).length;
  return `${failed === 0 ? 'pass' : `FAIL ${failed}/${result.criteria.length}`}: ${headline(result)}`;
}

function rowsOf(results: readonly ScenarioResult[]): string[][] {
  const bases: string[] = [];
  for (const r of results) {
    const key = matrixKey(r.name);
    if (key !== undefined && !bases.includes(key.base)) bases.push(key.base);
  }
  return bases.map((base) => [base, ...ALGORITHMS.map((a) => cell(results.find((r) => r.name === `${base}-${a}`)))]);
}

/** Scenario 10: scenarios 1, 2, 6 and 8 for each algorithm, as a plain-text table. */
export function matrixTable(results: readonly ScenarioResult[]): string {
  return formatTable(['scenario', ...ALGORITHMS], rowsOf(results));
}

export function matrixMarkdown(results: readonly ScenarioResult[]): string {
  const rows = rowsOf(results);
  return [
    `| scenario | ${ALGORITHMS.join(' | ')} |`,
    `|---|${ALGORITHMS.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}
