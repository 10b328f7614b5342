import { describe, expect, it } from 'vitest';
import { LruList, LruNode } from '../../src/registry/lru';

class Named extends LruNode {
  constructor(readonly name: string) {
    super();
  }
}

function names(list: LruList<Named>): string[] {
  const out: string[] = [];
  for (let n = list.oldest; n !== undefined; n = list.newerThan(n)) out.push(n.name);
  return out;
}

describe('the LRU list', () => {
  it('keeps nodes in the order they were pushed, oldest first', () => {
    const list = new LruList<Named>();
    const [a, b, c] = [new Named('a'), new Named('b'), new Named('c')];
    list.push(a);
    list.push(b);
    list.push(c);
    expect(names(list)).toEqual(['a', 'b', 'c']);
    expect(list.size).toBe(3);
    expect(list.oldest).toBe(a);
    expect(list.newest).toBe(c);
  });

  it('moves a touched node to the newest end from the oldest end, the middle, or leaves the newest in place', () => {
    const list = new LruList<Named>();
    const [a, b, c] = [new Named('a'), new Named('b'), new Named('c')];
    for (const n of [a, b, c]) list.push(n);
    list.touch(a);
    expect(names(list)).toEqual(['b', 'c', 'a']);
    list.touch(c);
    expect(names(list)).toEqual(['b', 'a', 'c']);
    list.touch(c);
    expect(names(list)).toEqual(['b', 'a', 'c']);
    expect(list.size).toBe(3);
  });

  it('removes nodes from either end and the middle, down to empty', () => {
    const list = new LruList<Named>();
    const [a, b, c] = [new Named('a'), new Named('b'), new Named('c')];
    for (const n of [a, b, c]) list.push(n);
    list.remove(b);
    expect(names(list)).toEqual(['a', 'c']);
    list.remove(a);
    expect(names(list)).toEqual(['c']);
    list.remove(c);
    expect(names(list)).toEqual([]);
    expect(list.size).toBe(0);
    expect(list.oldest).toBeUndefined();
    expect(list.newest).toBeUndefined();
    list.push(b);
    expect(names(list)).toEqual(['b']);
    expect(b.older).toBeUndefined();
    expect(b.newer).toBeUndefined();
  });
});
