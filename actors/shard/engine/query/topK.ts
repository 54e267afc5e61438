/**
 * The best k docs under a comparator, with a binary heap whose root is the worst kept doc, so
 * a pass over n candidates costs O(n log k) and never sorts them all.
 */
export function topK(k: number, cmp: (a: number, b: number) => number, feed: (push: (doc: number) => void) => void): number[] {
  if (k <= 0) return [];
  const heap = new Int32Array(Math.min(k, 1 << 16));
  let h = heap;
  let n = 0;
  const worse = (a: number, b: number) => cmp(a, b) > 0;
  const siftDown = (i: number) => {
    const x = h[i];
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && worse(h[r], h[l]) ? r : l;
      if (!worse(h[c], x)) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = x;
  };
  feed((d) => {
    if (n < k) {
      if (n === h.length) {
        const g = new Int32Array(Math.min(k, h.length * 2));
        g.set(h);
        h = g;
      }
      // sift up
      let i = n++;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!worse(d, h[p])) break;
        h[i] = h[p];
        i = p;
      }
      h[i] = d;
    } else if (cmp(d, h[0]) < 0) {
      h[0] = d;
      siftDown(0);
    }
  });
  return Array.from(h.subarray(0, n)).sort(cmp);
}
