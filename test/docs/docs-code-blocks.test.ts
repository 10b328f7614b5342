import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packed } from '../package/packed';
import { blocksOf, documentationFiles, extractBlocks, isChecked, isRun, type CodeBlock } from './code-blocks';

/**
 * Every ```ts block in README.md and docs/*.md is compiled as a user would paste it into a fresh
 * project: strict, `module: nodenext`, Node's types and no DOM lib, each block its own ES module,
 * and `import ... from 'resilix'` resolving to the packed tarball's own declarations (the tarball
 * is unpacked into `node_modules/resilix`, so there is no path mapping to src/). There is no
 * tolerance: a free name, an implicit any or a missing import fails the block. A fragment states
 * what it assumes (test/docs/code-blocks.ts) and only that is compiled before it. The example
 * recipes sit next to the blocks, as a user who copied them has them (`./telemetry-prometheus.js`),
 * and are compiled the same way. ```ts run blocks are then executed against the packed dist/.
 */
const ROOT = resolve(__dirname, '../..');
const EXAMPLES = readdirSync(join(ROOT, 'examples')).filter((name) => name.endsWith('.ts'));

interface Compiled {
  readonly block: CodeBlock;
  readonly path: string;
  /** Lines of the file before the block's first line (the fragment's prelude). */
  readonly preludeLines: number;
  errors: string[];
}

const blocks = documentationFiles(ROOT).flatMap((path) => blocksOf(ROOT, path));
const checked = blocks.filter(isChecked);
const compiled = new Map<CodeBlock, Compiled>();
const exampleErrors = new Map<string, string[]>();
let workDir = '';

/** Blocks that must fail, compiled with the real ones: they prove the check catches each kind of mistake. */
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
    file: 'canary/fragment.md',
    line: 20,
    lang: 'ts',
    flags: [],
    fragment: { about: 'a url from the prose', prelude: 'declare const url: string;' },
    code: "import { hedge } from 'resilix';\nhedge(url, body);",
  },
  {
    file: 'canary/dom.md',
    line: 30,
    lang: 'ts',
    flags: [],
    code: "document.title = 'no DOM lib in a Node project';",
  },
];

function fileNameOf(block: CodeBlock): string {
  return `${block.file.replace(/[^a-zA-Z0-9]+/g, '_')}_L${block.line}.ts`;
}

function compileAll(): void {
  const pack = packed();
  // Next to the unpacked package: a bare `resilix` resolves to <dir>/node_modules/resilix, and the
  // other bare imports (prom-client, @opentelemetry/*) to the repository's node_modules above it.
  workDir = join(pack.dir, `docs-blocks-${process.pid}`);
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  // Its own package scope: an ES module project, and no self-reference to the repository's package.
  writeFileSync(join(workDir, 'package.json'), JSON.stringify({ name: 'docs-blocks', private: true, type: 'module' }));
  for (const example of EXAMPLES) copyFileSync(join(ROOT, 'examples', example), join(workDir, example));
  for (const block of [...checked, ...CANARIES]) {
    const path = join(workDir, fileNameOf(block));
    const prelude = block.fragment === undefined ? '' : `${block.fragment.prelude}\n`;
    // `export {}` makes every block its own module, so two blocks may declare the same name.
    writeFileSync(path, `${prelude}${block.code}\nexport {};\n`);
    compiled.set(block, { block, path, preludeLines: prelude.split('\n').length - 1, errors: [] });
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2022.d.ts'],
    types: ['node'],
    typeRoots: [join(ROOT, 'node_modules/@types')],
    strict: true,
    noUncheckedIndexedAccess: true,
    noImplicitOverride: true,
    verbatimModuleSyntax: true,
    isolatedModules: true,
    skipLibCheck: true, // the declarations are checked with skipLibCheck off in test/package
    noEmit: true,
  };
  const exampleFiles = EXAMPLES.map((example) => join(workDir, example));
  const program = ts.createProgram([...[...compiled.values()].map((c) => c.path), ...exampleFiles], options);
  const byPath = new Map([...compiled.values()].map((c) => [resolve(c.path), c]));
  for (const example of EXAMPLES) exampleErrors.set(example, []);
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    if (diagnostic.file === undefined) throw new Error(`TS${diagnostic.code} ${message}`);
    const { line } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    const fileName = resolve(diagnostic.file.fileName);
    const example = EXAMPLES.find((e) => resolve(join(workDir, e)) === fileName);
    if (example !== undefined) {
      exampleErrors.get(example)!.push(`examples/${example}:${line + 1}: TS${diagnostic.code} ${message}`);
      continue;
    }
    const target = byPath.get(fileName);
    // Anything else is a library's own declaration (skipLibCheck) or a bug of this test: say so.
    if (target === undefined) throw new Error(`${fileName}:${line + 1}: TS${diagnostic.code} ${message}`);
    const inBlock = line - target.preludeLines;
    // +1 for the fence line, +1 for 1-based lines; an error in the prelude says so.
    const where =
      inBlock < 0 ? `${target.block.line} (fragment prelude, line ${line + 1})` : target.block.line + inBlock + 1;
    target.errors.push(`${target.block.file}:${where}: TS${diagnostic.code} ${message}`);
  }
}

beforeAll(() => {
  compileAll();
}, 240_000);

afterAll(() => {
  if (workDir !== '') rmSync(workDir, { recursive: true, force: true });
});

describe('the fence rules the docs test relies on', () => {
  it('reads the language and the flags of each fence, and the line it opens on', () => {
    const md = ['# t', '```ts run', 'a();', '```', '', '```text', 'x', '```'].join('\n');
    const found = extractBlocks(md, 'x.md');
    expect(found.map((b) => [b.line, b.lang, b.flags.join(','), b.code])).toEqual([
      [2, 'ts', 'run', 'a();'],
      [6, 'text', '', 'x'],
    ]);
    expect(found.map(isChecked)).toEqual([true, false]);
    expect(found.map(isRun)).toEqual([true, false]);
  });

  it('reads a fragment comment right above a fence as what the block assumes', () => {
    const md = [
      '<!-- fragment: the url of the prose',
      'declare const url: string;',
      '-->',
      '```ts',
      'use(url);',
      '```',
    ];
    expect(extractBlocks(md.join('\n'), 'f.md')).toEqual([
      {
        file: 'f.md',
        line: 4,
        lang: 'ts',
        flags: [],
        code: 'use(url);',
        fragment: { about: 'the url of the prose', prelude: 'declare const url: string;' },
      },
    ]);
  });

  it('refuses a fragment comment that no ts fence follows, or that says nothing about itself', () => {
    expect(() => extractBlocks('<!-- fragment: lost\ndeclare const a: 1;\n-->\n\n```ts\na;\n```\n', 'lost.md')).toThrow(
      'lost.md:1: a fragment comment must end on the line right above a ```ts fence',
    );
    expect(() => extractBlocks('<!-- fragment:\n-->\n```ts\na;\n```\n', 'mute.md')).toThrow(
      'mute.md:1: a fragment comment must say what it is',
    );
  });

  it('refuses a document whose fence never closes', () => {
    expect(() => extractBlocks('```ts\nconst a = 1;\n', 'broken.md')).toThrow(
      'broken.md:1: code fence is never closed',
    );
  });

  it('fails a block with a misspelt option, a free name, or a DOM-only global', () => {
    expect(compiled.get(CANARIES[0]!)!.errors).toEqual([
      expect.stringMatching(
        /^canary\/strict\.md:3: TS2561 Object literal may only specify known properties, but 'minLimt' does not exist/,
      ),
    ]);
    // TS2304, or TS2552 when TypeScript suggests `URL`: which one depends on the rest of the program.
    expect(compiled.get(CANARIES[1]!)!.errors).toEqual([
      expect.stringMatching(/^canary\/strict\.md:11: TS(2304|2552) Cannot find name 'url'\./),
    ]);
    expect(compiled.get(CANARIES[3]!)!.errors).toEqual([
      "canary/dom.md:31: TS2584 Cannot find name 'document'. Do you need to change your target library? Try changing the 'lib' compiler option to include 'dom'.",
    ]);
  });

  it('fails a fragment on a name its prelude does not state, and on a name resilix does not export', () => {
    expect(compiled.get(CANARIES[2]!)!.errors).toEqual([
      `canary/fragment.md:21: TS2305 Module '"resilix"' has no exported member 'hedge'.`,
      `canary/fragment.md:22: TS2304 Cannot find name 'body'.`,
    ]);
  });

  it('finds code blocks to check in README.md and in the guides', () => {
    expect(checked.filter((b) => b.file === 'README.md').length).toBeGreaterThanOrEqual(2);
    for (const guide of ['docs/getting-started.md', 'docs/tuning.md', 'docs/telemetry.md', 'docs/non-goals.md']) {
      expect(checked.filter((b) => b.file === guide).length, guide).toBeGreaterThanOrEqual(1);
    }
  });
});

describe('every ts code block in the docs compiles against the packed package', () => {
  it.each(checked.map((block) => [`${block.file}:${block.line}`, block] as const))('%s', (_name, block) => {
    expect(compiled.get(block)!.errors).toEqual([]);
  });
});

describe('every example recipe compiles against the packed package, as a user who copied it has it', () => {
  it.each(EXAMPLES)('examples/%s', (example) => {
    expect(exampleErrors.get(example)).toEqual([]);
  });
});

const runnable = checked.filter(isRun);

describe('the ts run blocks run against the packed dist/', () => {
  it.each(runnable.map((block) => [`${block.file}:${block.line}`, block] as const))(
    '%s',
    (_name, block) => {
      const source = compiled.get(block)!;
      expect(source.errors).toEqual([]);
      const path = source.path.replace(/\.ts$/, '.run.mts');
      writeFileSync(path, `${block.fragment?.prelude ?? ''}\n${block.code}\nexport {};\n`);
      // A child process: a block runs as a user's script would, with its own module graph.
      execFileSync(join(ROOT, 'node_modules/.bin/tsx'), [path], { cwd: workDir, stdio: 'pipe', timeout: 30_000 });
    },
    40_000,
  );
});
