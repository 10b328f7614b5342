/**
 * An intrusive doubly linked list in least-recently-used order. The nodes are the registry's own
 * entries, so a hit (move to the newest end) relinks four pointers and allocates nothing; a Map
 * re-inserted on every access would also work, but it grows and compacts its table as it goes.
 */
export class LruNode {
  /** @internal The next node towards the oldest end. */
  older: LruNode | undefined = undefined;
  /** @internal The next node towards the newest end. */
  newer: LruNode | undefined = undefined;
}

export class LruList<N extends LruNode> {
  private oldestNode: N | undefined = undefined;
  private newestNode: N | undefined = undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The least recently used node: the first the registry considers for eviction. */
  get oldest(): N | undefined {
    return this.oldestNode;
  }

  get newest(): N | undefined {
    return this.newestNode;
  }

  /** The node used just after `node`, towards the newest end. */
  newerThan(node: N): N | undefined {
    return node.newer as N | undefined;
  }

  /** Appends a node that is in no list as the most recently used. */
  push(node: N): void {
    node.older = this.newestNode;
    node.newer = undefined;
    if (this.newestNode === undefined) this.oldestNode = node;
    else this.newestNode.newer = node;
    this.newestNode = node;
    this.count++;
  }

  /** Marks a node in this list as the most recently used. */
  touch(node: N): void {
    if (node === this.newestNode) return;
    this.unlink(node);
    this.push(node);
  }

  /** Removes a node that is in this list. */
  remove(node: N): void {
    this.unlink(node);
    node.older = undefined;
    node.newer = undefined;
  }

  private unlink(node: N): void {
    const older = node.older as N | undefined;
    const newer = node.newer as N | undefined;
    if (older === undefined) this.oldestNode = newer;
    else older.newer = newer;
    if (newer === undefined) this.newestNode = older;
    else newer.older = older;
    this.count--;
  }
}
