/**
 * Where the bytes of a held object graph go: a census of the objects that a piece of code left on
 * the V8 heap, by kind, from two heap snapshots.
 *
 * `census(make)` takes a heap snapshot, runs `make()` (which must keep what it builds reachable,
 * e.g. by returning it), takes another, and counts the objects that are new in the second (V8
 * gives every heap object a stable id, increasing for new ones), grouped by what they are:
 * `CircuitBreaker`, `Object {clock, breaker, limiter, ...}` (a plain object, by its first keys),
 * `(heap number) in RollingWindow` (a number field's box, by its holder), `(backing store) of
 * Float64Array`... Self sizes only: every byte is counted once, in the object that holds it.
 * Compiled code and object shapes are left out: they are the cost of running code, once.
 *
 * Used by scripts/measure-key-memory.ts (what one registry key is made of) and
 * bench/call-census.ts (what one call in flight holds).
 */
import { getHeapSnapshot } from 'node:v8';

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      node_fields: string[];
      node_types: [string[], ...unknown[]];
      edge_fields: string[];
      edge_types: [string[], ...unknown[]];
    };
  };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

async function readSnapshot(): Promise<Snapshot> {
  const chunks: string[] = [];
  const stream = getHeapSnapshot();
  stream.setEncoding('utf8');
  for await (const chunk of stream) chunks.push(chunk as string);
  return JSON.parse(chunks.join('')) as Snapshot;
}

/** Column access to a snapshot's flat node and edge arrays. */
class Graph {
  readonly count: number;
  private readonly nodeWidth: number;
  private readonly edgeWidth: number;
  private readonly at: Record<'type' | 'name' | 'id' | 'size' | 'edges', number>;
  private readonly edgeAt: Record<'type' | 'name' | 'to', number>;
  private readonly types: string[];
  private readonly edgeTypes: string[];
  /** Index of each node's first edge in `edges`. */
  private readonly firstEdge: Int32Array;

  constructor(private readonly s: Snapshot) {
    const meta = s.snapshot.meta;
    this.nodeWidth = meta.node_fields.length;
    this.edgeWidth = meta.edge_fields.length;
    const f = meta.node_fields;
    this.at = {
      type: f.indexOf('type'),
      name: f.indexOf('name'),
      id: f.indexOf('id'),
      size: f.indexOf('self_size'),
      edges: f.indexOf('edge_count'),
    };
    const e = meta.edge_fields;
    this.edgeAt = { type: e.indexOf('type'), name: e.indexOf('name_or_index'), to: e.indexOf('to_node') };
    this.types = meta.node_types[0];
    this.edgeTypes = meta.edge_types[0];
    this.count = s.nodes.length / this.nodeWidth;
    this.firstEdge = new Int32Array(this.count + 1);
    let edge = 0;
    for (let n = 0; n < this.count; n++) {
      this.firstEdge[n] = edge;
      edge += s.nodes[n * this.nodeWidth + this.at.edges]! * this.edgeWidth;
    }
    this.firstEdge[this.count] = edge;
  }

  type(n: number): string {
    return this.types[this.s.nodes[n * this.nodeWidth + this.at.type]!]!;
  }
  name(n: number): string {
    return this.s.strings[this.s.nodes[n * this.nodeWidth + this.at.name]!]!;
  }
  id(n: number): number {
    return this.s.nodes[n * this.nodeWidth + this.at.id]!;
  }
  size(n: number): number {
    return this.s.nodes[n * this.nodeWidth + this.at.size]!;
  }

  /** Each edge of node `n`: its type, its name (a property name, or an element index), its target. */
  *edges(n: number): Generator<{ type: string; name: string; to: number }> {
    const edges = this.s.edges;
    for (let i = this.firstEdge[n]!; i < this.firstEdge[n + 1]!; i += this.edgeWidth) {
      const type = this.edgeTypes[edges[i + this.edgeAt.type]!]!;
      const raw = edges[i + this.edgeAt.name]!;
      const name = type === 'element' || type === 'hidden' ? String(raw) : (this.s.strings[raw] ?? String(raw));
      yield { type, name, to: edges[i + this.edgeAt.to]! / this.nodeWidth };
    }
  }
}

/**
 * Heap objects get increasing ids; native (embedder) nodes take ids from a range of their own, so
 * those count as new when their id was not in the first snapshot.
 */
async function idsNow(): Promise<{ maxId: number; seenNative: Set<number> }> {
  let maxId = 0;
  const seenNative = new Set<number>();
  const g = new Graph(await readSnapshot());
  for (let n = 0; n < g.count; n++) {
    const type = g.type(n);
    if (type === 'native') seenNative.add(g.id(n));
    else if (type !== 'synthetic' && g.id(n) > maxId) maxId = g.id(n);
  }
  return { maxId, seenNative };
}

/** Nodes that hold another node's bytes without being a thing of their own: named by their holder. */
const HELD = new Set(['number', 'array', 'native', 'hidden']);

/** A node's own label: its constructor for objects, a plain object by its first keys, its kind for the rest. */
function ownKind(g: Graph, n: number): string {
  const type = g.type(n);
  const name = g.name(n);
  switch (type) {
    case 'object':
      if (name === 'Object') {
        const keys: string[] = [];
        for (const edge of g.edges(n)) {
          if (edge.type === 'property' && !edge.name.startsWith('<') && edge.name !== '__proto__') keys.push(edge.name);
          if (keys.length === 4) break;
        }
        return `Object {${keys.join(', ')}${keys.length === 4 ? ', ...' : ''}}`;
      }
      return name;
    case 'closure':
      return `(closure) ${name || 'anonymous'}`;
    case 'string':
    case 'concatenated string':
    case 'sliced string':
      return '(string)';
    case 'number':
      return '(heap number)';
    case 'array':
      return `(internal array${name === '' ? '' : ` ${name}`})`;
    case 'native':
      return name.includes('ArrayBuffer') || name === 'system / JSArrayBufferData'
        ? '(backing store)'
        : `(native ${name.replace(/\s*\/.*$/, '')})`;
    default:
      return `(${type}) ${name.replace(/\s+/g, ' ').slice(0, 40)}`;
  }
}

export interface CensusRow {
  readonly kind: string;
  readonly count: number;
  readonly bytes: number;
}

/**
 * The objects `make()` left on the heap (new since the first snapshot and alive at the second),
 * by kind, largest first. `make` may be async (its promise is awaited before the second
 * snapshot); what it returns (or resolves with) is held until then, and handed back.
 */
export async function census(make: () => unknown): Promise<{ rows: CensusRow[]; total: number; held: unknown }> {
  const { maxId, seenNative } = await idsNow();
  const held = await make();
  const g = new Graph(await readSnapshot());
  const isNew = new Uint8Array(g.count);
  for (let n = 0; n < g.count; n++) {
    const type = g.type(n);
    if (type === 'synthetic' || type === 'code' || type === 'object shape') continue;
    if (type === 'native' ? !seenNative.has(g.id(n)) : g.id(n) > maxId) isNew[n] = 1;
  }
  // Who holds each new box, array and backing store: the first new, non-held node with a strong
  // edge to it (an ArrayBuffer's backing store goes to its typed array, through the buffer).
  const holder = new Int32Array(g.count).fill(-1);
  for (let n = 0; n < g.count; n++) {
    if (isNew[n] === 0) continue;
    for (const edge of g.edges(n)) {
      if (edge.type === 'weak' || isNew[edge.to] === 0 || holder[edge.to] !== -1 || edge.to === n) continue;
      if (HELD.has(g.type(edge.to)) || g.name(edge.to) === 'ArrayBuffer') holder[edge.to] = n;
    }
  }
  const kindOf = (n: number): string => {
    const own = ownKind(g, n);
    let h = holder[n]!;
    for (let hops = 0; h !== -1 && hops < 4 && (HELD.has(g.type(h)) || g.name(h) === 'ArrayBuffer'); hops++) {
      h = holder[h]!;
    }
    if (h === -1 || !(HELD.has(g.type(n)) || g.name(n) === 'ArrayBuffer')) return own;
    return `${own} in ${ownKind(g, h)}`;
  };
  const byKind = new Map<string, { count: number; bytes: number }>();
  let total = 0;
  for (let n = 0; n < g.count; n++) {
    if (isNew[n] === 0) continue;
    const kind = kindOf(n);
    const row = byKind.get(kind) ?? { count: 0, bytes: 0 };
    row.count++;
    row.bytes += g.size(n);
    byKind.set(kind, row);
    total += g.size(n);
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
