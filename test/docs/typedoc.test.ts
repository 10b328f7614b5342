import { spawnSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(__dirname, '../..');

describe('the API reference (typedoc.json, `npm run docs:api`)', () => {
  it('generates from src/index.ts without a warning or an error', () => {
    // --emit none: validate everything (exports, links) without writing docs/api.
    const run = spawnSync(join(ROOT, 'node_modules/.bin/typedoc'), ['--emit', 'none', '--treatWarningsAsErrors'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(output, output).not.toMatch(/\[(warning|error)\]/);
    expect(run.status).toBe(0);
  }, 130_000);
});
