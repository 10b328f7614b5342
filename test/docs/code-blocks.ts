/**
 * Extracts the fenced code blocks of the docs so a test can compile (and, where marked, run) each
 * one: a code block in the docs that no longer compiles is a defect, found in CI, not by a user.
 *
 * The info string after the fence decides what happens to a block:
 * - ```ts (or ```typescript): type-checked as its own module, `'resilix'` mapped to src/index.ts;
 * - ```ts run: type-checked, then executed (it must be self-contained: no network, no timers
 *   that outlive it);
 * - ```ts nocheck: skipped (say why next to it);
 * - any other language (```text, ```sh, ```json, a bare fence): skipped.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

export interface CodeBlock {
  /** Path relative to the repository root, e.g. `docs/tuning.md`. */
  readonly file: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  readonly lang: string;
  readonly flags: readonly string[];
  readonly code: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

export function extractBlocks(markdown: string, file: string): CodeBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  let open: { fence: string; indent: number; line: number; lang: string; flags: string[]; body: string[] } | undefined;
  for (const [index, text] of lines.entries()) {
    const match = FENCE.exec(text);
    if (open === undefined) {
      if (match === null) continue;
      const [lang = '', ...flags] = match[3]!
        .trim()
        .split(/\s+/)
        .filter((word) => word !== '');
      open = { fence: match[2]!, indent: match[1]!.length, line: index + 1, lang: lang.toLowerCase(), flags, body: [] };
      continue;
    }
    if (match !== null && match[2]!.startsWith(open.fence) && match[3]!.trim() === '') {
      blocks.push({ file, line: open.line, lang: open.lang, flags: open.flags, code: open.body.join('\n') });
      open = undefined;
      continue;
    }
    open.body.push(open.indent > 0 ? text.replace(new RegExp(`^ {0,${open.indent}}`), '') : text);
  }
  if (open !== undefined) throw new Error(`${file}:${open.line}: code fence is never closed`);
  return blocks;
}

/** A block the docs test compiles: ```ts or ```typescript without `nocheck`. */
export function isChecked(block: CodeBlock): boolean {
  return (block.lang === 'ts' || block.lang === 'typescript') && !block.flags.includes('nocheck');
}

export function isRun(block: CodeBlock): boolean {
  return isChecked(block) && block.flags.includes('run');
}

/** README.md and every docs/*.md (not docs/api, which TypeDoc generates). */
export function documentationFiles(root: string): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => join(root, 'docs', name));
  return [join(root, 'README.md'), ...docs];
}

export function blocksOf(root: string, path: string): CodeBlock[] {
  return extractBlocks(readFileSync(path, 'utf8'), relative(root, path).split('\\').join('/'));
}
