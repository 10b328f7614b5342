import { describe, expect, it } from 'vitest';
import { QueueNode, WaitQueue } from '../../../src/limiter/wait-queue';

class Named extends QueueNode {
  constructor(readonly name: string) {
    super();
  }
}

function drain(queue: WaitQueue<Named>): string[] {
  const names: string[] = [];
  for (let node = queue.take(); node !== undefined; node = queue.take()) names.push(node.name);
  return names;
}

describe('WaitQueue', () => {
  it('serves the longest waiter first in fifo order', () => {
    const queue = new WaitQueue<Named>('fifo');
    for (const name of ['a', 'b', 'c']) queue.push(new Named(name));
    expect(drain(queue)).toEqual(['a', 'b', 'c']);
  });

  it('serves the newest waiter first in lifo order', () => {
    const queue = new WaitQueue<Named>('lifo');
    for (const name of ['a', 'b', 'c']) queue.push(new Named(name));
    expect(drain(queue)).toEqual(['c', 'b', 'a']);
  });

  it('removes a waiter from the middle, the head or the tail without disturbing the rest', () => {
    const queue = new WaitQueue<Named>('fifo');
    const nodes = ['a', 'b', 'c', 'd', 'e'].map((name) => new Named(name));
    for (const node of nodes) queue.push(node);
    expect(queue.remove(nodes[2]!)).toBe(true);
    expect(queue.remove(nodes[0]!)).toBe(true);
    expect(queue.remove(nodes[4]!)).toBe(true);
    expect(queue.size).toBe(2);
    expect(drain(queue)).toEqual(['b', 'd']);
    expect(queue.size).toBe(0);
  });

  it('refuses to remove a node that is not in it, including one already served', () => {
    const queue = new WaitQueue<Named>('fifo');
    const other = new WaitQueue<Named>('fifo');
    const served = new Named('served');
    const elsewhere = new Named('elsewhere');
    queue.push(served);
    other.push(elsewhere);
    queue.take();
    expect(queue.remove(served)).toBe(false);
    expect(queue.remove(elsewhere)).toBe(false);
    expect(other.size).toBe(1);
  });

  it('lets a served node join again, and throws if a node would join two lists at once', () => {
    const queue = new WaitQueue<Named>('lifo');
    const other = new WaitQueue<Named>('lifo');
    const node = new Named('x');
    queue.push(node);
    expect(() => other.push(node)).toThrow(/joined two lists/);
    queue.take();
    other.push(node);
    expect(other.size).toBe(1);
  });

  it('walks from the oldest node with after()', () => {
    const queue = new WaitQueue<Named>('lifo');
    for (const name of ['a', 'b', 'c']) queue.push(new Named(name));
    const names: string[] = [];
    for (let node = queue.peekOldest(); node !== undefined; node = queue.after(node)) names.push(node.name);
    expect(names).toEqual(['a', 'b', 'c']);
  });
});
