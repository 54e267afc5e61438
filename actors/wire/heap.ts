/**
 * The one binary heap of the project: a min-heap under a comparator (`less(a, b) < 0`: `a` comes
 * out first). The coordinator's page merge and the engine's shard merge pop the next hit from it
 * (O(n log k)); `replaceTop` keeps the best k of a stream with the worst of them at the root.
 */
export class MinHeap<T> {
  private readonly items: T[] = [];
  constructor(private readonly less: (a: T, b: T) => number) {}

  get size(): number {
    return this.items.length;
  }

  /** The first item (undefined when empty). */
  peek(): T | undefined {
    return this.items[0];
  }

  push(x: T): void {
    const a = this.items;
    let i = a.length;
    a.push(x);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (this.less(x, a[p]) >= 0) break;
      a[i] = a[p];
      i = p;
    }
    a[i] = x;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) this.siftDown(last);
    return top;
  }

  /** Replaces the first item with `x` (cheaper than pop then push). */
  replaceTop(x: T): void {
    if (this.items.length === 0) this.items.push(x);
    else this.siftDown(x);
  }

  /** The items in heap order (not sorted). */
  toArray(): T[] {
    return this.items.slice();
  }

  private siftDown(x: T): void {
    const a = this.items;
    const n = a.length;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(a[r], a[l]) < 0 ? r : l;
      if (this.less(a[c], x) >= 0) break;
      a[i] = a[c];
      i = c;
    }
    a[i] = x;
  }
}

/**
 * The best k items of a stream under `cmp` (best first), keeping only k: the root of the heap is
 * the worst kept, so a pass over n candidates costs O(n log k) and never sorts them all.
 */
export function topK<T>(k: number, cmp: (a: T, b: T) => number, feed: (push: (x: T) => void) => void): T[] {
  if (k <= 0) return [];
  const heap = new MinHeap<T>((a, b) => cmp(b, a));
  feed((x) => {
    if (heap.size < k) heap.push(x);
    else if (cmp(x, heap.peek()!) < 0) heap.replaceTop(x);
  });
  return heap.toArray().sort(cmp);
}
