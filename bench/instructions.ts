/**
 * Instructions per call, counted by valgrind's callgrind: a figure that a busy shared machine does
 * not move (time does; instructions depend only on the code and what the JIT made of it).
 *
 *   npx tsx bench/instructions.ts [--src dir] [--calls 1000000] [--runs 1] <case-id> [<case-id>...]
 *
 * Each case runs in a fresh `node --predictable` (single-threaded, fixed seeds) under
 * `valgrind --tool=callgrind`, after the same 200 000-call warm-up: once for `calls` calls and once
 * for 2 x `calls`. The difference of the two totals divided by `calls` is the steady-state cost of
 * one call, start-up, module loading and JIT warm-up cancelled out. `raw` is always measured, and
 * every case is also shown over it. `--src` counts another copy of src/ (an A/B: run it once per
 * copy). With `--runs k` each total is the least of k runs: a run now and then carries a one-off
 * (a collection of the old generation, a re-optimisation) of ~3·10^7 instructions, 30 per call at
 * 10^6 calls. About a minute per case at the defaults.
 *
 * The runner is bench/cases.ts over src/ bundled by esbuild into one ES module (no keepNames, as
 * the published build), with the peers left as imports of node_modules.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { build } from 'esbuild';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values, positionals } = parseArgs({
  options: {
    src: { type: 'string' },
    calls: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '1' },
  },
  allowPositionals: true,
});
const calls = Number(values.calls);
const runs = Number(values.runs);
const src = resolve(values.src ?? join(root, 'src'));
const ids = ['raw', ...positionals.filter((id) => id !== 'raw')];

async function bundle(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'resilix-instructions-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const entry = join(dir, 'runner.ts');
  writeFileSync(
    entry,
    [
      `import * as resilix from ${JSON.stringify(join(src, 'index.ts'))};`,
      `import { buildCases } from ${JSON.stringify(join(root, 'bench', 'cases.ts'))};`,
      `import { Counter } from ${JSON.stringify(join(root, 'bench', 'harness.ts'))};`,
      'const [id, n] = process.argv.slice(2);',
      'const cases = buildCases(resilix);',
      'const c = cases.find((x) => x.id === id);',
      "if (c === undefined) throw new Error('no case ' + id);",
      'const counter = new Counter(0);',
      'await c.loop(counter.reset(200000));',
      'await c.loop(counter.reset(Number(n)));',
      'for (const x of cases) x.close?.();',
    ].join('\n'),
  );
  const out = join(root, 'node_modules', '.cache', 'resilix-instructions.mjs');
  await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'es2022',
    packages: 'external',
    outfile: out,
    logLevel: 'warning',
  });
  return out;
}

function collected(runner: string, id: string, n: number): number {
  const out = join(tmpdir(), `resilix-callgrind-${process.pid}.out`);
  try {
    const result = execFileSync(
      'sh',
      [
        '-c',
        `valgrind --tool=callgrind --callgrind-out-file=${out} "$0" --predictable "$1" "$2" "$3" 2>&1 >/dev/null`,
        process.execPath,
        runner,
        id,
        String(n),
      ],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    );
    const match = /Collected : (\d+)/.exec(result);
    if (match === null) throw new Error(`no callgrind total for ${id}:\n${result.slice(-2000)}`);
    return Number(match[1]);
  } finally {
    rmSync(out, { force: true });
  }
}

async function main(): Promise<void> {
  const runner = await bundle();
  const perCall = new Map<string, number>();
  for (const id of ids) {
    const least = (n: number): number => Math.min(...Array.from({ length: runs }, () => collected(runner, id, n)));
    const once = least(calls);
    const twice = least(2 * calls);
    perCall.set(id, (twice - once) / calls);
    process.stderr.write(`${id}: ${perCall.get(id)!.toFixed(0)} instructions per call\n`);
  }
  const raw = perCall.get('raw')!;
  console.log(`${src}, Node ${process.version}, ${calls} calls\n`);
  console.log('| case | instructions per call | over raw |');
  console.log('|---|---:|---:|');
  for (const [id, n] of perCall)
    console.log(`| ${id} | ${n.toFixed(0)} | ${id === 'raw' ? '' : (n - raw).toFixed(0)} |`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
