import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith('.ts') ? [path] : [];
  });
}

const files = sourceFiles('src').map((path) => ({ path, text: readFileSync(path, 'utf8') }));

/** DESIGN.md §2: src/ must run in Workers (web-standard globals only) and own no background timer. */
describe('src/ runs everywhere fetch runs', () => {
  it('has source files to check', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each([
    ['a node: import', /from\s+['"]node:|require\(\s*['"]node:/],
    ['a bare Node builtin import', /from\s+['"](fs|path|events|timers|crypto|util|os|http|https)['"]/],
    ['require()', /\brequire\(/],
    ['setInterval (ADR-001)', /\bsetInterval\s*\(/],
    ['the process global', /\bprocess\./],
    ['the Buffer global', /\bBuffer\./],
    ['setImmediate', /\bsetImmediate\s*\(/],
  ])('contains no %s', (_name, pattern) => {
    const offenders = files
      .filter((f) => pattern.test(f.text.replace(/\/\/.*$|\/\*[\s\S]*?\*\//gm, '')))
      .map((f) => f.path);
    expect(offenders).toEqual([]);
  });

  it('reads time only through the clock seam', () => {
    const direct = files
      .filter((f) => f.path !== join('src', 'core', 'clock.ts'))
      .filter((f) => /\bperformance\.now\(|\bsetTimeout\s*\(/.test(f.text))
      .map((f) => f.path);
    expect(direct).toEqual([]);
  });
});
