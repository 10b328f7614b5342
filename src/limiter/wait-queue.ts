/** An intrusive doubly-linked list (a waiter is its own node): O(1) join, serve and leave from anywhere, no search. */
export class QueueNode {
  /** @internal */
  prev: QueueNode | undefined = undefined;
  /** @internal */
  next: QueueNode | undefined = undefined;
  /** @internal The list this node is linked into, if any. */
  list: WaitQueue<QueueNode> | undefined = undefined;
}

/** Which waiter a freed slot goes to: the one that waited longest, or the one that arrived last. */
export type QueueOrder = 'fifo' | 'lifo';

export class WaitQueue<Node extends QueueNode> {
  private head: Node | undefined = undefined;
  private tail: Node | undefined = undefined;
  private count = 0;

  /** `order` decides only which end `take()` serves; nodes always join at the tail. */
  constructor(readonly order: QueueOrder = 'fifo') {}

  get size(): number {
    return this.count;
  }

  /** Appends `node` at the tail. A node already in a list is a programming error. */
  push(node: Node): void {
    if (node.list !== undefined) throw new Error('resilix: internal error: a waiter joined two lists');
    node.list = this;
    node.prev = this.tail;
    node.next = undefined;
    if (this.tail === undefined) this.head = node;
    else this.tail.next = node;
    this.tail = node;
    this.count++;
  }

  /** Unlinks and returns the next node to serve (head for FIFO, tail for LIFO), if any. */
  take(): Node | undefined {
    const node = this.order === 'fifo' ? this.head : this.tail;
    if (node !== undefined) this.unlink(node);
    return node;
  }

  /** The oldest node (the head), without removing it. */
  peekOldest(): Node | undefined {
    return this.head;
  }

  /** The node after `node` towards the tail. */
  after(node: Node): Node | undefined {
    return node.next as Node | undefined;
  }

  /** Unlinks `node` if it is in this list; returns whether it was. O(1). */
  remove(node: Node): boolean {
    if (node.list !== this) return false;
    this.unlink(node);
    return true;
  }

  private unlink(node: Node): void {
    const prev = node.prev as Node | undefined;
    const next = node.next as Node | undefined;
    if (prev === undefined) this.head = next;
    else prev.next = next;
    if (next === undefined) this.tail = prev;
    else next.prev = prev;
    node.prev = undefined;
    node.next = undefined;
    node.list = undefined;
    this.count--;
  }
}
