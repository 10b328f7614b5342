import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blocksOf, documentationFiles, extractBlocks, isChecked, isRun, type CodeBlock } from './code-blocks';

/**
 * Every ```ts block in README.md and docs/*.md is compiled against the library's source, as its
 * own module, with `import ... from 'resilix'` mapped to src/index.ts; blocks marked ```ts run are
 * executed too. Rules for the info string: test/docs/code-blocks.ts.
 */
const ROOT = resolve(__dirname, '../..');
const SOURCE_ENTRY = join(ROOT, 'src/index.ts');
// Inside node_modules: bare imports (prom-client, @opentelemetry/api) resolve from the project, and
// no other tsconfig or test glob picks the generated files up.
const WORK_DIR = join(ROOT, 'node_modules/.cache/resilix-doc-blocks', String(process.pid));

/**
 * Guides whose blocks are fragments that lean on names from the surrounding prose (`url`, `body`,
 * `registry`, `env`): there, and only there, an unresolved name or an implicitly-`any` parameter
 * is tolerated. Everything else is still checked: a wrong export, a misspelt option, a wrong
 * argument. Every other document must compile as written.
 */
const FRAGMENT_TOLERANT = new Set([
  'docs/algorithms.md',
  'docs/benchmarks.md',
  'docs/breaker.md',
  'docs/fetch.md',
  'docs/options.md',
  'docs/quantiles.md',
  'docs/queueing.md',
  'docs/registry.md',
  'docs/simulation.md',
  'docs/streaming.md',
  'docs/testing.md',
  'docs/workers.md',
]);
/**
 * Cannot find name (2304, 2552, 18004 for a shorthand property); implicit any (7005, 7006, 7031);
 * `return` outside a function (1108: the block is the body of a handler the prose describes).
 */
const FRAGMENT_CODES = new Set([2304, 2552, 18004, 7005, 7006, 7031, 1108]);

interface Compiled {
  readonly block: CodeBlock;
  readonly path: string;
  errors: string[];
}

const blocks = documentationFiles(ROOT).flatMap((path) => blocksOf(ROOT, path));
const checked = blocks.filter(isChecked);
const compiled = new Map<CodeBlock, Compiled>();

/**
 * Blocks that must fail, compiled with the real ones: they prove the check catches a misspelt
 * option, and that a fragment-tolerant guide still catches a name that `resilix` does not export.
 */
const CANARIES: readonly CodeBlock[] = [
  {
    file: 'canary/strict.md',
    line: 1,
    lang: 'ts',
    flags: [],
    code: "import { limiter } from 'resilix';\nlimiter({ minLimt: 4 });",
  },
  { file: 'canary/strict.md', line: 10, lang: 'ts', flags: [], code: 'console.log(url);' },
  {
    file: 'docs/fetch.md',
    line: 100_000,
    lang: 'ts',
    flags: [],
    code: "import { hedge } from 'resilix';\nhedge(url);",
  },
];

function fileNameOf(block: CodeBlock): string {
  return `${block.file.replace(/[^a-zA-Z0-9]+/g, '_')}_L${block.line}.ts`;
}

function compileAll(): void {
  mkdirSync(WORK_DIR, { recursive: true });
  for (const block of [...checked, ...CANARIES]) {
    const path = join(WORK_DIR, fileNameOf(block));
    // `export {}` makes every block its own module, so two blocks may declare the same name.
    writeFileSync(path, `${block.code}\nexport {};\n`);
    compiled.set(block, { block, path, errors: [] });
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true,
    noEmit: true,
    paths: { resilix: [SOURCE_ENTRY] },
  };
  const program = ts.createProgram(
    [...compiled.values()].map((c) => c.path),
    options,
  );
  const byPath = new Map([...compiled.values()].map((c) => [resolve(c.path), c]));
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const target = diagnostic.file === undefined ? undefined : byPath.get(resolve(diagnostic.file.fileName));
    if (target === undefined) continue; // src/ and libraries are checked by `npm run typecheck`
    if (FRAGMENT_TOLERANT.has(target.block.file) && FRAGMENT_CODES.has(diagnostic.code)) continue;
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    // +1 for the fence line, +1 for 1-based lines.
    target.errors.push(`${target.block.file}:${target.block.line + line + 1}: TS${diagnostic.code} ${message}`);
  }
}

beforeAll(() => {
  compileAll();
}, 120_000);

afterAll(() => {
  rmSync(WORK_DIR, { recursive: true, force: true });
});

describe('the fence rules the docs test relies on', () => {
  it('reads the language and the flags of each fence, and the line it opens on', () => {
    const md = ['# t', '```ts run', 'a();', '```', '', '```text', 'x', '```', '```ts nocheck', 'b();', '```'].join(
      '\n',
    );
    const found = extractBlocks(md, 'x.md');
    expect(found.map((b) => [b.line, b.lang, b.flags.join(','), b.code])).toEqual([
      [2, 'ts', 'run', 'a();'],
      [6, 'text', '', 'x'],
      [9, 'ts', 'nocheck', 'b();'],
    ]);
    expect(found.map(isChecked)).toEqual([true, false, false]);
    expect(found.map(isRun)).toEqual([true, false, false]);
  });

  it('refuses a document whose fence never closes', () => {
    expect(() => extractBlocks('```ts\nconst a = 1;\n', 'broken.md')).toThrow(
      'broken.md:1: code fence is never closed',
    );
  });

  it('fails a block with a misspelt option, or a free name outside the fragment-tolerant guides', () => {
    expect(compiled.get(CANARIES[0]!)!.errors).toEqual([
      expect.stringMatching(
        /^canary\/strict\.md:3: TS2561 Object literal may only specify known properties, but 'minLimt' does not exist/,
      ),
    ]);
    expect(compiled.get(CANARIES[1]!)!.errors).toEqual(["canary/strict.md:11: TS2304 Cannot find name 'url'."]);
  });

  it('fails a fragment that imports a name resilix does not export, while tolerating its free names', () => {
    expect(compiled.get(CANARIES[2]!)!.errors).toEqual([
      `docs/fetch.md:100001: TS2305 Module '"resilix"' has no exported member 'hedge'.`,
    ]);
  });

  it('finds code blocks to check in README.md and in the guides', () => {
    expect(checked.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(1);
    for (const guide of ['docs/getting-started.md', 'docs/tuning.md', 'docs/telemetry.md']) {
      expect(checked.filter((b) => b.file === guide).length, guide).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('every ts code block in the docs compiles against the source', () => {
  it.each(checked.map((block) => [`${block.file}:${block.line}`, block] as const))('%s', (_name, block) => {
    expect(compiled.get(block)!.errors).toEqual([]);
  });
});

const runnable = checked.filter(isRun);

describe('the ts run blocks run', () => {
  it.each(runnable.map((block) => [`${block.file}:${block.line}`, block] as const))(
    '%s',
    (_name, block) => {
      const source = compiled.get(block)!;
      expect(source.errors).toEqual([]);
      const path = source.path.replace(/\.ts$/, '.run.mts');
      writeFileSync(
        path,
        block.code.replace(/from 'resilix'/g, `from ${JSON.stringify(SOURCE_ENTRY)}`) + '\nexport {};\n',
      );
      // A child process: a block runs as a user's script would, with its own module graph.
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [path], { cwd: ROOT, stdio: 'pipe', timeout: 30_000 });
    },
    40_000,
  );
});
