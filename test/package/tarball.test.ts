import { readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { expectedPackageFiles } from '../../scripts/package-files.mjs';
import { packed, ROOT, type Packed } from './packed';

/**
 * Links from shipped guides to what stays in the repository: the simulation's plots and data
 * (docs/sim/, 1.4 MB), the real-server plots (docs/real-servers/), the simulator's source (sim/)
 * and the release notes (.changeset/). The guides that link there say so (docs/README.md).
 */
const REPOSITORY_ONLY = ['docs/sim/', 'docs/real-servers/', 'sim/', '.changeset/'];

/** Every markdown link target, with the line it is on; images too. Code spans and blocks are not links. */
function linksOf(markdown: string): Array<{ line: number; target: string }> {
  const links: Array<{ line: number; target: string }> = [];
  let fenced = false;
  for (const [index, text] of markdown.split('\n').entries()) {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) continue;
    const prose = text.replace(/`[^`]*`/g, '');
    for (const match of prose.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g))
      links.push({ line: index + 1, target: match[1]! });
  }
  return links;
}

const isExternal = (target: string) => /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#');

let pack: Packed;

beforeAll(() => {
  pack = packed();
}, 240_000);

describe('the published tarball', () => {
  it('holds exactly the build, the guides, the decision records, the examples, README, LICENSE and package.json', () => {
    expect(pack.files).toEqual(expectedPackageFiles(ROOT));
  });

  it('points every entry of package.json at a file it ships, and depends on nothing', () => {
    const manifest = JSON.parse(readFileSync(join(pack.packageDir, 'package.json'), 'utf8'));
    const targets = [
      manifest.main,
      manifest.module,
      manifest.types,
      ...JSON.stringify(manifest.exports).matchAll(/"\.\/([^"]+)"/g),
    ]
      .map((t) => (typeof t === 'string' ? t : t[1]))
      .map((t: string) => t.replace(/^\.\//, ''))
      .filter((t: string) => t !== '.' && t !== 'package.json');
    expect(targets.length).toBe(7);
    for (const target of targets) expect(pack.files, target).toContain(target);
    expect(manifest.dependencies ?? {}).toEqual({});
  });

  it('has a README without relative links, which would break on the npm registry page', () => {
    const readme = readFileSync(join(pack.packageDir, 'README.md'), 'utf8');
    expect(linksOf(readme).filter((l) => !isExternal(l.target))).toEqual([]);
  });

  it('ships every guide and example the README names by path', () => {
    const readme = readFileSync(join(pack.packageDir, 'README.md'), 'utf8');
    const named = [...readme.matchAll(/`((?:docs|examples|adr)\/[\w./-]+\.(?:md|ts))`/g)].map((m) => m[1]!);
    expect(named.length).toBeGreaterThanOrEqual(5);
    for (const path of named) expect(pack.files, path).toContain(path);
  });

  it('resolves every relative link of a shipped guide to a shipped file (or a stated repository-only one)', () => {
    const broken: string[] = [];
    for (const file of pack.files.filter((f) => f.endsWith('.md'))) {
      const markdown = readFileSync(join(pack.packageDir, file), 'utf8');
      for (const { line, target } of linksOf(markdown)) {
        if (isExternal(target)) continue;
        const path = posix.normalize(posix.join(dirname(file), target.split('#')[0]!));
        const shipped =
          pack.files.includes(path) || pack.files.some((f) => f.startsWith(`${path.replace(/\/$/, '')}/`));
        if (!shipped && !REPOSITORY_ONLY.some((prefix) => `${path}/`.startsWith(prefix))) {
          broken.push(`${file}:${line}: ${target}`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
