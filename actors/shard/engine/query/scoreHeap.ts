/** The bounded heap of top-k scoring (flatRun.ts, flatTwo.ts). */

/**
 * The k best (score, doc) seen so far. Docs arrive in ascending order, so a newcomer with the same
 * score as the worst kept one ranks below it: it enters only with a score above {@link threshold}.
 */
export class ScoreHeap {
  private readonly s: Float64Array;
  private readonly d: Int32Array;
  private n = 0;
  /** A newcomer enters iff its score is above this: -Infinity until k docs are kept, then the k-th best score (Infinity for k = 0). */
  threshold: number;

  constructor(readonly k: number) {
    this.s = new Float64Array(Math.max(k, 1));
    this.d = new Int32Array(Math.max(k, 1));
    this.threshold = k === 0 ? Infinity : -Infinity;
  }

  /** Whether k docs are kept. */
  get full(): boolean {
    return this.n >= this.k;
  }

  private less(i: number, j: number): boolean {
    // i ranks below j: lower score, or the same score and a later doc
    return this.s[i] < this.s[j] || (this.s[i] === this.s[j] && this.d[i] > this.d[j]);
  }

  private swap(i: number, j: number): void {
    const s = this.s[i], d = this.d[i];
    this.s[i] = this.s[j];
    this.d[i] = this.d[j];
    this.s[j] = s;
    this.d[j] = d;
  }

  /** Keeps (score, doc) if it ranks among the k best so far (doc after every doc offered before). */
  offer(score: number, doc: number): void {
    if (!(score > this.threshold)) return;
    if (this.n < this.k) {
      let i = this.n++;
      this.s[i] = score;
      this.d[i] = doc;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (!this.less(i, p)) break;
        this.swap(i, p);
        i = p;
      }
      if (this.n === this.k) this.threshold = this.s[0];
      return;
    }
    this.s[0] = score;
    this.d[0] = doc;
    for (let i = 0; ; ) {
      const l = 2 * i + 1, r = l + 1;
      let m = i;
      if (l < this.n && this.less(l, m)) m = l;
      if (r < this.n && this.less(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    this.threshold = this.s[0];
  }

  /** The kept docs, best first (score desc, doc asc), with their scores. */
  sorted(): { docs: number[]; scores: number[] } {
    const idx = Array.from({ length: this.n }, (_, i) => i);
    idx.sort((a, b) => this.s[b] - this.s[a] || this.d[a] - this.d[b]);
    return { docs: idx.map((i) => this.d[i]), scores: idx.map((i) => this.s[i]) };
  }
}
