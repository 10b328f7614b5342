/**
 * Extracts the fenced code blocks of the docs so a test can compile (and, where marked, run) each
 * one: a code block in the docs that no longer compiles is a defect, found in CI, not by a user.
 *
 * The info string after the fence decides what happens to a block:
 * - ```ts (or ```typescript): type-checked, strict, as its own module, as a user would paste it:
 *   `'resilix'` is the packed package (test/docs/docs-code-blocks.test.ts);
 * - ```ts run: type-checked, then executed (it must be self-contained: no network, no timers
 *   that outlive it);
 * - any other language (```text, ```sh, ```json, a bare fence): not code, skipped.
 * There is no way to skip a ```ts block.
 *
 * A block that continues an earlier one, or leans on names the prose introduced, says so in an
 * HTML comment that ends on the line right above its fence (readers of the rendered page do not
 * see it; readers of the source do), and states what it assumes, as TypeScript compiled before it:
 *
 *     <!-- fragment: the registry of the block above
 *     import { KeyRegistry } from 'resilix';
 *     declare const registry: KeyRegistry;
 *     -->
 *     ```ts
 *     await registry.execute('tenant-a', () => work());
 *     ```
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
  /** For a fragment: what the comment above it says it is, and the TypeScript it assumes. */
  readonly fragment?: { readonly about: string; readonly prelude: string };
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const FRAGMENT_OPEN = /^<!--\s*fragment:\s*(.*)$/;

/** The fragment comment that ends on `lines[end]`, if one does. */
function fragmentEndingAt(lines: readonly string[], end: number, file: string) {
  if (end < 0 || lines[end]!.trim() !== '-->') return undefined;
  for (let start = end - 1; start >= 0; start--) {
    const open = FRAGMENT_OPEN.exec(lines[start]!.trim());
    if (open !== null) {
      if (open[1]!.trim() === '') throw new Error(`${file}:${start + 1}: a fragment comment must say what it is`);
      return { start, about: open[1]!.trim(), prelude: lines.slice(start + 1, end).join('\n') };
    }
    if (lines[start]!.includes('-->') || lines[start]!.includes('<!--')) return undefined;
  }
  return undefined;
}

export function extractBlocks(markdown: string, file: string): CodeBlock[] {
  const lines = markdown.split(/\r?\n/);
  const blocks: CodeBlock[] = [];
  let open:
    | {
        fence: string;
        indent: number;
        line: number;
        lang: string;
        flags: string[];
        body: string[];
        fragment: CodeBlock['fragment'];
      }
    | undefined;
  /** Lines that open a fragment comment; each must be claimed by the fence right below it. */
  const fragmentStarts = new Set<number>();
  for (const [index, text] of lines.entries()) {
    const match = FENCE.exec(text);
    if (open === undefined) {
      if (FRAGMENT_OPEN.test(text.trim())) fragmentStarts.add(index);
      if (match === null) continue;
      const [lang = '', ...flags] = match[3]!
        .trim()
        .split(/\s+/)
        .filter((word) => word !== '');
      const fragment = fragmentEndingAt(lines, index - 1, file);
      if (fragment !== undefined) fragmentStarts.delete(fragment.start);
      open = {
        fence: match[2]!,
        indent: match[1]!.length,
        line: index + 1,
        lang: lang.toLowerCase(),
        flags,
        body: [],
        fragment: fragment === undefined ? undefined : { about: fragment.about, prelude: fragment.prelude },
      };
      continue;
    }
    if (match !== null && match[2]!.startsWith(open.fence) && match[3]!.trim() === '') {
      const block: CodeBlock = {
        file,
        line: open.line,
        lang: open.lang,
        flags: open.flags,
        code: open.body.join('\n'),
      };
      if (open.fragment !== undefined && !isChecked(block)) {
        throw new Error(`${file}:${open.line}: only a \`\`\`ts block can be a fragment`);
      }
      blocks.push(open.fragment === undefined ? block : { ...block, fragment: open.fragment });
      open = undefined;
      continue;
    }
    open.body.push(open.indent > 0 ? text.replace(new RegExp(`^ {0,${open.indent}}`), '') : text);
  }
  if (open !== undefined) throw new Error(`${file}:${open.line}: code fence is never closed`);
  for (const start of fragmentStarts) {
    throw new Error(`${file}:${start + 1}: a fragment comment must end on the line right above a \`\`\`ts fence`);
  }
  return blocks;
}

/** A block the docs test compiles: every ```ts or ```typescript block. */
export function isChecked(block: CodeBlock): boolean {
  return block.lang === 'ts' || block.lang === 'typescript';
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
