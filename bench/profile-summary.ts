/**
 * Summarises a V8 .cpuprofile: self time per function (with file:line), highest first.
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> [top=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  hitCount?: number;
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const [file, topArg = '25'] = process.argv.slice(2);
if (file === undefined) throw new Error('usage: profile-summary <file.cpuprofile> [top]');
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<string, number>();
let total = 0;
for (let i = 0; i < profile.samples.length; i++) {
  const node = byId.get(profile.samples[i]!)!;
  const dt = profile.timeDeltas[i] ?? 0;
  total += dt;
  const f = node.callFrame;
  const where = f.url === '' ? '' : `${f.url.replace(/^.*\/(src|bench|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;
  const key = `${f.functionName || '(anonymous)'} ${where}`.trim();
  selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
}
const rows = [...selfUs.entries()].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg));
for (const [key, us] of rows) console.log(`${((100 * us) / total).toFixed(1).padStart(5)}%  ${key}`);
