/**
 * The merge policy: Lucene's TieredMergePolicy (what ES's `index.merge.policy.*` settings drive),
 * restricted to runs of ADJACENT segments. A shard's segments hold adjacent seqNo ranges and a
 * doc's `_doc` id is its seqNo, so a merge takes a contiguous run of the list (seqNo order) and its
 * output takes the run's place; ES itself merges only adjacent segments for time-based data
 * (LogByteSizeMergePolicy) for the same kind of reason.
 *
 * As TieredMergePolicy: sizes count live bytes (size x (1 - deleted share)) floored at
 * `floor_segment`; the index may hold `segments_per_tier` segments per tier of sizes growing by
 * the merge factor; segments over half of `max_merged_segment` with few deletes are left alone;
 * while over budget (too many segments, or more deleted docs than `deletes_pct_allowed`), the
 * best-scoring candidate is picked: low skew (largest / total), small size (total^0.05), many
 * deletes reclaimed (nonDeleted ratio^2), never a merge whose output is not 1.5x its largest input
 * (unless that one has many deletes), never a single segment without deletes. Pure functions.
 */

/** What the policy needs to know of a segment (list order = seqNo order). */
export interface MergeCandidate {
  name: string;
  sizeBytes: number;
  maxDoc: number;
  delCount: number;
  /** Already being merged: not eligible, and a merge cannot span it. */
  merging?: boolean;
}

/** ES index settings of the merge policy (bytes as numbers). */
export interface MergePolicySettings {
  /** `index.merge.policy.segments_per_tier` */
  segmentsPerTier: number;
  /** `index.merge.policy.max_merge_at_once` */
  maxMergeAtOnce: number;
  /** `index.merge.policy.max_merged_segment` */
  maxMergedSegmentBytes: number;
  /** `index.merge.policy.floor_segment` */
  floorSegmentBytes: number;
  /** `index.merge.policy.deletes_pct_allowed` (5..50) */
  deletesPctAllowed: number;
  /** `index.merge.policy.expunge_deletes_allowed`: `_forcemerge?only_expunge_deletes` rewrites segments above it. */
  expungeDeletesAllowed: number;
}

/** ES 8 defaults (MergePolicyConfig). */
export const DEFAULT_MERGE_POLICY: MergePolicySettings = Object.freeze({
  segmentsPerTier: 10,
  maxMergeAtOnce: 10,
  maxMergedSegmentBytes: 5 * 1024 ** 3,
  floorSegmentBytes: 2 * 1024 ** 2,
  deletesPctAllowed: 20,
  expungeDeletesAllowed: 10,
});

const delRatio = (s: MergeCandidate) => (s.maxDoc > 0 ? s.delCount / s.maxDoc : 1);
/** Bytes of live docs (TieredMergePolicy's size of a segment). */
const liveBytes = (s: MergeCandidate) => s.sizeBytes * (1 - delRatio(s));

/**
 * Natural merges (after a flush or a merge): runs of adjacent segments to merge, each as names in
 * list order; empty when the shard is within budget.
 */
export function findMerges(segments: MergeCandidate[], settings: Partial<MergePolicySettings> = {}): string[][] {
  const o = { ...DEFAULT_MERGE_POLICY, ...settings };
  const maxSeg = o.maxMergedSegmentBytes;
  const floor = (b: number) => Math.max(o.floorSegmentBytes, b);
  let totBytes = 0, minBytes = Infinity, totMaxDoc = 0, totDel = 0;
  for (const s of segments) {
    const b = liveBytes(s);
    totBytes += b;
    minBytes = Math.min(minBytes, b);
    if (s.merging) totMaxDoc += s.maxDoc - s.delCount;
    else {
      totMaxDoc += s.maxDoc;
      totDel += s.delCount;
    }
  }
  if (segments.length === 0) return [];
  const totDelPct = totMaxDoc > 0 ? (100 * totDel) / totMaxDoc : 0;
  let allowedDel = Math.floor((o.deletesPctAllowed * totMaxDoc) / 100);
  // too-big segments are out of the count: over half the max size and few deletes
  const eligible = segments.map((s) => !s.merging);
  segments.forEach((s, i) => {
    if (!eligible[i]) return;
    const pct = 100 * delRatio(s);
    if (liveBytes(s) > maxSeg / 2 && (totDelPct <= o.deletesPctAllowed || pct <= o.deletesPctAllowed)) {
      eligible[i] = false;
      totBytes -= liveBytes(s);
      allowedDel -= s.delCount;
    }
  });
  allowedDel = Math.max(0, allowedDel);
  const mergeFactor = Math.max(2, Math.min(o.maxMergeAtOnce, Math.floor(o.segmentsPerTier)));
  // segments allowed in the index: segmentsPerTier per tier, tiers growing by the merge factor
  let level = Math.max(minBytes, o.floorSegmentBytes);
  let left = totBytes;
  let allowed = 0;
  for (;;) {
    const count = left / level;
    if (count < o.segmentsPerTier || level >= maxSeg) {
      allowed += Math.ceil(count);
      break;
    }
    allowed += o.segmentsPerTier;
    left -= o.segmentsPerTier * level;
    level = Math.min(maxSeg, level * mergeFactor);
  }
  allowed = Math.max(allowed, o.segmentsPerTier);

  const out: string[][] = [];
  let haveLarge = false;
  for (;;) {
    let count = 0, dels = 0;
    segments.forEach((s, i) => {
      if (eligible[i]) {
        count++;
        dels += s.delCount;
      }
    });
    if (count === 0 || (count <= allowed && dels <= allowedDel)) return out;
    let best: { from: number; to: number; score: number; tooLarge: boolean } | undefined;
    for (let i = 0; i < segments.length; i++) {
      if (!eligible[i]) continue;
      let bytes = 0, flooredSum = 0, before = 0, biggest = i;
      for (let j = i; j < segments.length && eligible[j] && j - i < mergeFactor; j++) {
        const s = segments[j];
        if (j > i && bytes + liveBytes(s) > maxSeg) break; // adjacency: no packing around a segment that does not fit
        bytes += liveBytes(s);
        flooredSum += floor(liveBytes(s));
        before += s.sizeBytes;
        if (liveBytes(s) > liveBytes(segments[biggest])) biggest = j;
        const big = segments[biggest];
        // as big as it gets (the next one would pass max_merged_segment): it will not cascade, skew does not matter
        const next = j + 1 < segments.length && eligible[j + 1] ? liveBytes(segments[j + 1]) : 0;
        const tooLarge = bytes > maxSeg || (next > 0 && bytes + next > maxSeg);
        const n = j - i + 1;
        if (!tooLarge && bytes < 1.5 * liveBytes(big) && big.delCount < (big.maxDoc * o.deletesPctAllowed) / 100) continue;
        if (n === 1 && s.delCount === 0) continue;
        const skew = tooLarge ? 1 / mergeFactor : floor(liveBytes(big)) / flooredSum;
        const nonDel = before > 0 ? bytes / before : 1;
        const score = skew * Math.pow(Math.max(bytes, 1), 0.05) * nonDel * nonDel;
        if (!best || score < best.score) best = { from: i, to: j, score, tooLarge };
      }
    }
    if (!best) return out;
    if (!haveLarge || !best.tooLarge) {
      haveLarge ||= best.tooLarge;
      out.push(segments.slice(best.from, best.to + 1).map((s) => s.name));
    }
    for (let k = best.from; k <= best.to; k++) eligible[k] = false;
  }
}

/**
 * `_forcemerge?max_num_segments=n`: contiguous runs so that at most n segments remain, balanced
 * by live bytes; every segment with deletes is rewritten. Empty when already there.
 */
export function findForcedMerges(segments: MergeCandidate[], maxNumSegments: number): string[][] {
  const out: string[][] = [];
  for (const run of runs(segments, () => true)) {
    // each run between segments already merging gets its share of the target count
    const target = Math.max(1, Math.round((maxNumSegments * run.length) / segments.filter((s) => !s.merging).length));
    for (const g of partition(run, target)) {
      if (g.length > 1 || g[0].delCount > 0) out.push(g.map((s) => s.name));
    }
  }
  return out;
}

/**
 * `_forcemerge?only_expunge_deletes=true`: the segments with more than `pctAllowed` percent deleted
 * docs, adjacent ones merged together up to `max_merged_segment` live bytes, others rewritten alone.
 */
export function findForcedDeletesMerges(
  segments: MergeCandidate[], pctAllowed = DEFAULT_MERGE_POLICY.expungeDeletesAllowed, settings: Partial<MergePolicySettings> = {},
): string[][] {
  const maxSeg = settings.maxMergedSegmentBytes ?? DEFAULT_MERGE_POLICY.maxMergedSegmentBytes;
  const out: string[][] = [];
  for (const run of runs(segments, (s) => 100 * delRatio(s) > pctAllowed)) {
    let cur: MergeCandidate[] = [];
    let bytes = 0;
    for (const s of run) {
      if (cur.length > 0 && bytes + liveBytes(s) > maxSeg) {
        out.push(cur.map((c) => c.name));
        cur = [];
        bytes = 0;
      }
      cur.push(s);
      bytes += liveBytes(s);
    }
    if (cur.length) out.push(cur.map((c) => c.name));
  }
  return out;
}

/** Maximal runs of adjacent segments that are not merging and pass `ok`. */
function runs(segments: MergeCandidate[], ok: (s: MergeCandidate) => boolean): MergeCandidate[][] {
  const out: MergeCandidate[][] = [];
  let cur: MergeCandidate[] = [];
  for (const s of segments) {
    if (!s.merging && ok(s)) cur.push(s);
    else {
      if (cur.length) out.push(cur);
      cur = [];
    }
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Splits a run into at most k contiguous groups minimising the largest group's live bytes. */
function partition(run: MergeCandidate[], k: number): MergeCandidate[][] {
  if (k >= run.length) return run.map((s) => [s]);
  const w = run.map((s) => Math.max(1, liveBytes(s)));
  const groupsFor = (cap: number) => {
    let groups = 1, sum = 0;
    for (const x of w) {
      if (sum + x > cap) {
        groups++;
        sum = 0;
      }
      sum += x;
    }
    return groups;
  };
  let lo = Math.max(...w), hi = w.reduce((a, b) => a + b, 0);
  while (hi - lo > Math.max(1, lo * 1e-9)) {
    const mid = (lo + hi) / 2;
    if (groupsFor(mid) <= k) hi = mid;
    else lo = mid;
  }
  const out: MergeCandidate[][] = [];
  let cur: MergeCandidate[] = [];
  let sum = 0;
  run.forEach((s, i) => {
    if (cur.length && sum + w[i] > hi) {
      out.push(cur);
      cur = [];
      sum = 0;
    }
    cur.push(s);
    sum += w[i];
  });
  out.push(cur);
  return out;
}
