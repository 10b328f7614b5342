/**
 * Where the bytes of a held object graph go: a census of the objects that a piece of code left on
 * the V8 heap, by kind, from two heap snapshots.
 *
 * `census(make)` takes a heap snapshot, runs `make()` (which must keep what it builds reachable,
 * e.g. in an array it returns), takes another, and counts the objects that are new in the second
 * (V8 gives every object a stable id, increasing for new ones), grouped by what they are:
 * `CircuitBreaker`, `Array`, `(closure) onFulfilled`, `system / Context`, `ArrayBuffer backing
 * store`... Self sizes only: every byte is counted once, in the object that holds it.
 *
 * Used by scripts/measure-key-memory.ts (what one registry key is made of) and
 * bench/call-census.ts (what one call in flight holds).
 */
import { getHeapSnapshot } from 'node:v8';

interface Snapshot {
  readonly snapshot: { readonly meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  readonly nodes: number[];
  readonly strings: string[];
}

async function readSnapshot(): Promise<Snapshot> {
  const chunks: string[] = [];
  const stream = getHeapSnapshot();
  stream.setEncoding('utf8');
  for await (const chunk of stream) chunks.push(chunk as string);
  return JSON.parse(chunks.join('')) as Snapshot;
}

interface Node {
  readonly type: string;
  readonly name: string;
  readonly id: number;
  readonly selfSize: number;
}

function* nodesOf(s: Snapshot): Generator<Node> {
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const idAt = fields.indexOf('id');
  const sizeAt = fields.indexOf('self_size');
  const types = s.snapshot.meta.node_types[0];
  for (let i = 0; i < s.nodes.length; i += width) {
    yield {
      type: types[s.nodes[i + typeAt]!]!,
      name: s.strings[s.nodes[i + nameAt]!]!,
      id: s.nodes[i + idAt]!,
      selfSize: s.nodes[i + sizeAt]!,
    };
  }
}

/** What a node is, for grouping: its constructor for objects, its kind for the rest. */
function kindOf(node: Node): string {
  switch (node.type) {
    case 'object':
      return node.name;
    case 'closure':
      return `(closure) ${node.name || 'anonymous'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'number':
      return '(heap number)';
    case 'array':
      return `(internal array) ${node.name}`.trim();
    case 'hidden':
    case 'object shape':
      return `(${node.type}) ${node.name.replace(/\s+/g, ' ').slice(0, 40)}`;
    case 'native':
      return `(native) ${node.name.replace(/\s*\/.*$/, '')}`;
    default:
      return `(${node.type}) ${node.name.slice(0, 40)}`;
  }
}

/**
 * Heap objects get increasing ids; native (embedder) nodes take ids from a range of their own, so
 * those count as new when their id was not in the first snapshot.
 */
async function idsNow(): Promise<{ maxId: number; seenNative: Set<number> }> {
  let maxId = 0;
  const seenNative = new Set<number>();
  for (const node of nodesOf(await readSnapshot())) {
    if (node.type === 'native') seenNative.add(node.id);
    else if (node.type !== 'synthetic' && node.id > maxId) maxId = node.id;
  }
  return { maxId, seenNative };
}

export interface CensusRow {
  readonly kind: string;
  readonly count: number;
  readonly bytes: number;
}

/**
 * The objects `make()` left on the heap (new since the first snapshot and alive at the second),
 * by kind, largest first. Hold what `make` returns until the promise resolves.
 */
export async function census(make: () => unknown): Promise<{ rows: CensusRow[]; total: number; held: unknown }> {
  const { maxId, seenNative } = await idsNow();
  const held = make();
  const after = await readSnapshot();
  const byKind = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (const node of nodesOf(after)) {
    // Synthetic nodes are the snapshot's own roots, not objects.
    if (node.type === 'synthetic' || (node.type === 'native' ? seenNative.has(node.id) : node.id <= maxId)) continue;
    const kind = kindOf(node);
    const row = byKind.get(kind) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += node.selfSize;
    byKind.set(kind, row);
    total += node.selfSize;
  }
  const rows = [...byKind.entries()]
    .map(([kind, r]) => ({ kind, count: r.count, bytes: r.bytes }))
    .sort((a, b) => b.bytes - a.bytes);
  return { rows, total, held };
}

/** The census as a markdown table, per unit (`per` = how many units `make` built). */
export function censusTable(rows: readonly CensusRow[], per: number, minBytesPerUnit = 1): string {
  const lines = ['| what | objects per unit | bytes per unit |', '|---|---:|---:|'];
  let shown = 0;
  let rest = 0;
  for (const row of rows) {
    const bytes = row.bytes / per;
    if (bytes < minBytesPerUnit) {
      rest += bytes;
      continue;
    }
    shown += bytes;
    lines.push(`| ${row.kind.replace(/\|/g, '\\|')} | ${(row.count / per).toFixed(2)} | ${bytes.toFixed(0)} |`);
  }
  if (rest > 0) lines.push(`| (everything under ${minBytesPerUnit} B per unit) | | ${rest.toFixed(0)} |`);
  lines.push(`| **total** | | **${(shown + rest).toFixed(0)}** |`);
  return lines.join('\n');
}
