import { mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packed, ROOT } from './packed';

/**
 * The packed declarations, type-checked as a Node project without the DOM lib would check them:
 * `lib: ["es2022"]` + @types/node, `skipLibCheck: false` (so dist/*.d.ts itself is checked, and a
 * DOM-only name is an error instead of a silent `any`), strict, with `exactOptionalPropertyTypes`
 * and `noUncheckedIndexedAccess`, under `module: nodenext` (an ES module and a CommonJS consumer,
 * which resolve `import` to dist/index.d.ts and `require` to dist/index.d.cts) and under
 * `moduleResolution: bundler`.
 */
const CONSUMER = `
import {
  breaker, bulkhead, isResilixError, KeyRegistry, limiter, originKey, pipeline, resilientFetch,
  retryAfterHeader, timeout, type FetchFunction, type KeyedExecutor, type PolicySnapshot, type RequestKey,
  type Subscription,
} from 'resilix';

type IsAny<T> = 0 extends 1 & T ? true : false;
type Holds<T extends true> = T;
// A type the declarations took from a lib this project lacks would be an error here, or, with
// skipLibCheck, an \`any\`: both are caught.
export type InputIsTyped = Holds<IsAny<Parameters<FetchFunction>[0]> extends false ? true : false>;
export type KeyInputIsTyped = Holds<IsAny<Parameters<RequestKey>[0]> extends false ? true : false>;

const upstream = pipeline(breaker(), limiter(), bulkhead({ maxConcurrent: 8 }), timeout({ timeoutMs: 1_000 }));
// Node's own fetch is a FetchFunction; a Request, a URL and a string are all inputs.
const api: FetchFunction = resilientFetch(upstream, { fetch: globalThis.fetch });
export const calls: Array<Promise<Response>> = [
  api('https://api.example.com/a'),
  api(new URL('https://api.example.com/b'), { method: 'POST', body: '{}' }),
  api(new Request('https://api.example.com/c')),
];
export const perHost = resilientFetch(new KeyRegistry({ create: () => limiter() }));
declare const ownKeyed: KeyedExecutor;
export const ownKeyedFetch = resilientFetch(ownKeyed, { key: (input) => String(input) });
// @ts-expect-error a keyed executor of your own has no default key: only a KeyRegistry does
export const keyless = resilientFetch(ownKeyed);
export const key: string = originKey(new Request('https://api.example.com/d'));

export function describeSnapshot(s: PolicySnapshot): string {
  return s.kind === 'limiter' ? String(s.limit) : s.kind === 'breaker' ? s.state : s.kind;
}

export function answer(error: unknown): string {
  if (!isResilixError(error)) return 'not ours';
  if (error.code === 'ERR_RESILIX_TIMEOUT') return String(error.timeoutMs);
  return retryAfterHeader(error);
}

// A wrapper forwards optional values as they are: every ExecuteOptions field and every optional
// Observation field takes \`undefined\` under exactOptionalPropertyTypes (adr/0081).
export function forward(signal: AbortSignal | undefined, timeoutMs: number | undefined): Promise<number> {
  return upstream.execute(() => 1, { signal, timeoutMs, attempt: undefined, classify: undefined });
}
// Options read from configuration that may be absent: undefined takes the default (docs/options.md).
export function fromConfig(n: number | undefined, ms: number | undefined): void {
  limiter({ maxLimit: n, minLimit: undefined, queueing: { initialFactor: undefined } });
  breaker({ openMs: ms, minSamples: n });
  bulkhead({ maxConcurrent: 4, clock: undefined });
  timeout({ timeoutMs: 1_000, classify: undefined });
  new KeyRegistry({ create: () => limiter(), maxKeys: n });
  resilientFetch(upstream, { timeoutMs: ms, key: undefined });
  pipeline(breaker(), { classify: undefined });
  // @ts-expect-error an optional function option may be undefined, not return it
  limiter({ random: () => undefined });
  // @ts-expect-error the same for the breaker's wall clock
  breaker({ wallClock: () => undefined });
}
export function settleLowLevel(retryAfterMs: number | undefined): void {
  limiter().tryAcquire()?.settle({ verdict: 'ok', latencyMs: 1, retryAfterMs, attempt: undefined });
}

export function listenBriefly(): void {
  using _sub = breaker().onOpen(() => undefined);
  const sub: Subscription = limiter().onLimitChange(() => undefined);
  sub.dispose();
}
`;

/** The same declarations, with the DOM-only name the issue found: proves these settings catch it. */
const DOM_ONLY_DECLARATION = 'export type FetchFunction = (input: RequestInfo | URL) => Promise<Response>;\n';

interface Consumer {
  readonly name: string;
  readonly file: string;
  readonly options: ts.CompilerOptions;
}

const common: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  types: ['node'],
  typeRoots: [join(ROOT, 'node_modules/@types')],
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  skipLibCheck: false,
  noEmit: true,
};

const CONSUMERS: readonly Consumer[] = [
  {
    name: 'module nodenext, an ES module',
    file: 'consumer.mts',
    options: { ...common, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  },
  {
    name: 'module nodenext, a CommonJS module',
    file: 'consumer.cts',
    options: { ...common, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext },
  },
  {
    name: 'moduleResolution bundler',
    file: 'consumer.ts',
    options: { ...common, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler },
  },
];

let dir = '';
let resolvedTo = new Map<string, string>();

function diagnose(file: string, options: ts.CompilerOptions): string[] {
  const program = ts.createProgram([file], options);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where =
      d.file === undefined
        ? ''
        : `${relative(dir, d.file.fileName)}:${d.file.getLineAndCharacterOfPosition(d.start ?? 0).line + 1}: `;
    return `${where}TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

beforeAll(() => {
  const pack = packed();
  dir = join(pack.dir, `declarations-${process.pid}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'consumer', private: true }));
  for (const consumer of CONSUMERS) writeFileSync(join(dir, consumer.file), CONSUMER);
  // TypeScript resolves symlinks: a node_modules linked from another checkout resolves under its real path.
  const packDir = realpathSync(pack.dir);
  resolvedTo = new Map(
    CONSUMERS.map((c) => {
      // How an import in that file resolves: .mts is an ES module, .cts a CommonJS one.
      const mode = c.file.endsWith('.mts')
        ? ts.ModuleKind.ESNext
        : c.file.endsWith('.cts')
          ? ts.ModuleKind.CommonJS
          : undefined;
      const resolved = ts.resolveModuleName(
        'resilix',
        join(dir, c.file),
        c.options,
        ts.sys,
        undefined,
        undefined,
        mode,
      ).resolvedModule;
      return [c.name, resolved === undefined ? 'unresolved' : relative(packDir, resolved.resolvedFileName)];
    }),
  );
}, 240_000);

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});

describe('the packed declarations under Node-only libs (no DOM), skipLibCheck off', () => {
  it.each(CONSUMERS)('type-check with $name', (consumer) => {
    expect(diagnose(join(dir, consumer.file), consumer.options)).toEqual([]);
  });

  it('resolve import to index.d.ts and require to index.d.cts', () => {
    expect(Object.fromEntries(resolvedTo)).toEqual({
      'module nodenext, an ES module': 'node_modules/resilix/dist/index.d.ts',
      'module nodenext, a CommonJS module': 'node_modules/resilix/dist/index.d.cts',
      'moduleResolution bundler': 'node_modules/resilix/dist/index.d.ts',
    });
  });

  it('would catch a DOM-only name in a declaration (RequestInfo, as before the fix)', () => {
    const canary = join(dir, 'dom-only.d.ts');
    writeFileSync(canary, DOM_ONLY_DECLARATION);
    expect(diagnose(canary, CONSUMERS[0]!.options)).toEqual([
      expect.stringMatching(/^dom-only\.d\.ts:1: TS(2304|2552) Cannot find name 'RequestInfo'/),
    ]);
  });

  it('name no DOM-only type anywhere in the shipped declarations', () => {
    const declarations = ['dist/index.d.ts', 'dist/index.d.cts'].map((f) =>
      readFileSync(join(packed().packageDir, f), 'utf8'),
    );
    for (const text of declarations) expect(text).not.toMatch(/\b(RequestInfo|HeadersInit|BodyInit|DOMException)\b/);
  });
});
