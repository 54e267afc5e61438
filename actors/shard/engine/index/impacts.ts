/**
 * Per-block impacts of text postings, as Lucene keeps them next to its skip lists: for every block
 * of {@link BLOCK} consecutive postings, the (term frequency, norm byte) pairs no other pair of the
 * block beats (the Pareto frontier: higher frequency, shorter field). BM25 grows with the frequency
 * and shrinks with the norm, so the best score of a block under any collection statistics is the
 * best score of its frontier; top-k scoring (topScore.ts) skips blocks whose best cannot compete.
 *
 * Impacts depend only on the postings and on field lengths, which never change once written (doc
 * ids are append-only), so the frontier of a full block is computed once, on first use, and serves
 * every searcher; the last, partial block of a searcher is read from its postings each time.
 */
import { lengthToNorm } from './analysis';
import { grow } from '../base/bits';
import type { BlockImpacts, PostingList } from './columnViews';

/** Postings per impact block. Small blocks keep the bounds tight for short fields. */
export const BLOCK = 8;

const cache = new WeakMap<PostingList, BlockImpacts>();

/** Impacts of the full blocks of `p` (field lengths + 1 in `lens`), extended as `p` grows. */
export function impactsOf(p: PostingList, lens: Uint32Array): BlockImpacts {
  const full = Math.floor(p.len / BLOCK);
  let imp = cache.get(p);
  if (!imp) {
    imp = {
      blocks: 0, off: new Int32Array(Math.max(16, full + 1)), tf: new Uint16Array(Math.max(16, full)), norm: new Uint8Array(Math.max(16, full)), size: 0,
      last: new Int32Array(Math.max(16, full)),
    };
    cache.set(p, imp);
  }
  if (imp.blocks >= full) return imp;
  imp.off = grow(imp.off, full + 1);
  imp.last = grow(imp.last, full);
  const tfs = new Uint16Array(BLOCK);
  const norms = new Uint8Array(BLOCK);
  for (let b = imp.blocks; b < full; b++) {
    const n = frontier(p, lens, b * BLOCK, b * BLOCK + BLOCK, tfs, norms);
    imp.tf = grow(imp.tf, imp.size + n);
    imp.norm = grow(imp.norm, imp.size + n);
    imp.tf.set(tfs.subarray(0, n), imp.size);
    imp.norm.set(norms.subarray(0, n), imp.size);
    imp.size += n;
    imp.off[b + 1] = imp.size;
    imp.last[b] = p.docs[b * BLOCK + BLOCK - 1];
  }
  imp.blocks = full;
  return imp;
}

/**
 * Writes the frontier of postings [from, to) into tfs/norms (norm ascending, tf strictly
 * ascending) and returns its length (at most to - from).
 */
export function frontier(p: PostingList, lens: Uint32Array, from: number, to: number, tfs: Uint16Array, norms: Uint8Array): number {
  const { docs, freqs } = p;
  let n = 0;
  for (let i = from; i < to; i++) {
    const tf = freqs ? freqs[i] : 1;
    const nb = lengthToNorm(lens[docs[i]] - 1);
    // insert (nb, tf) keeping norms ascending; equal norms keep the larger tf
    let j = 0;
    while (j < n && norms[j] < nb) j++;
    if (j < n && norms[j] === nb) {
      if (tfs[j] < tf) tfs[j] = tf;
    } else {
      for (let m = n; m > j; m--) {
        norms[m] = norms[m - 1];
        tfs[m] = tfs[m - 1];
      }
      norms[j] = nb;
      tfs[j] = tf;
      n++;
    }
  }
  // keep the pairs no shorter-field pair matches in frequency
  let w = 0, best = 0;
  for (let j = 0; j < n; j++) {
    if (tfs[j] > best) {
      best = tfs[j];
      norms[w] = norms[j];
      tfs[w++] = tfs[j];
    }
  }
  return w;
}

/** Block maxima kept per posting list, for the latest scorings (weight and field statistics). */
const maxima = new WeakMap<PostingList, Array<{ key: string; max: Float32Array }>>();
const MAXIMA_PER_LIST = 2;

/**
 * The array of best scores of the full blocks [0, blocks) of `p` under the scoring `key` (a
 * clause's weight and its field's statistics fix BM25 completely), shared by every query with that
 * scoring; entries not computed yet are -1. Only full blocks may be stored: they never change.
 */
export function blockMaxima(p: PostingList, key: string, blocks: number): Float32Array {
  let list = maxima.get(p);
  if (!list) maxima.set(p, (list = []));
  const i = list.findIndex((e) => e.key === key);
  let e = i >= 0 ? list.splice(i, 1)[0] : undefined;
  if (!e) e = { key, max: new Float32Array(blocks).fill(-1) };
  else if (e.max.length < blocks) {
    const grown = new Float32Array(blocks).fill(-1);
    grown.set(e.max);
    e.max = grown;
  }
  list.unshift(e);
  if (list.length > MAXIMA_PER_LIST) list.pop();
  return e.max;
}
