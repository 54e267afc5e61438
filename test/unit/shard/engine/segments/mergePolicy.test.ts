import {
  DEFAULT_MERGE_POLICY, findForcedDeletesMerges, findForcedMerges, findMerges, type MergeCandidate,
} from '../../../../../actors/shard/engine/segments/mergePolicy';

const MB = 1024 * 1024;
const GB = 1024 * MB;

/** Segments s0, s1, ... of the given sizes (MB), 1,000 docs per MB, optional deleted share and merging flags. */
function segs(sizesMb: number[], extra: Array<Partial<{ del: number; merging: boolean }>> = []): MergeCandidate[] {
  return sizesMb.map((mb, i) => {
    const maxDoc = Math.max(1, Math.round(mb * 1000));
    const x = extra[i] ?? {};
    return { name: `s${i}`, sizeBytes: mb * MB, maxDoc, delCount: Math.round((x.del ?? 0) * maxDoc), ...(x.merging ? { merging: true } : {}) };
  });
}
const names = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `s${from + i}`);
const rep = <T>(n: number, x: T) => Array.from({ length: n }, () => x);

describe('defaults', () => {
  it('are ES 8 MergePolicyConfig defaults', () => {
    expect(DEFAULT_MERGE_POLICY).toEqual({
      segmentsPerTier: 10, maxMergeAtOnce: 10, maxMergedSegmentBytes: 5 * GB, floorSegmentBytes: 2 * MB, deletesPctAllowed: 20, expungeDeletesAllowed: 10,
    });
  });
});

describe('findMerges (adjacent runs only)', () => {
  const cases: Array<[string, MergeCandidate[], Parameters<typeof findMerges>[1], string[][]]> = [
    ['nothing to do with fewer segments than a tier', segs(rep(9, 1)), {}, []],
    ['nothing to do with no segments', [], {}, []],
    ['12 flush-sized segments: the first 10 merge (a whole tier, lowest skew)', segs(rep(12, 1)), {}, [names(0, 9)]],
    ['a tier of 10 x 100 MB, 10 x 10 MB and 5 x 1 MB is within budget', segs([...rep(10, 100), ...rep(10, 10), ...rep(5, 1)]), {}, []],
    ['segments_per_tier 4, max_merge_at_once 4: a run of 4 (then 5 left, the budget)', segs(rep(9, 1)), { segmentsPerTier: 4, maxMergeAtOnce: 4 }, [names(0, 3)]],
    ['a big segment without deletes is a wall: a run of 10 cannot span it', segs([...rep(6, 1), 3000, ...rep(6, 1)]), {}, [names(0, 5)]],
    ['segments being merged are not eligible', segs(rep(12, 1), rep(10, { merging: true })), {}, []],
    ['a run whose output is not 1.5x its biggest input is skipped', segs([100, ...rep(25, 1)]), {}, [names(1, 10)]],
    ['too many deletes (40% > 20%) merge a few segments within the segment budget', segs([10, 10, 10], rep(3, { del: 0.4 })), {}, [names(0, 2)]],
    ['deletes below deletes_pct_allowed are tolerated', segs([10, 10, 10], rep(3, { del: 0.15 })), {}, []],
    ['deletes_pct_allowed 10 makes 15% deletes too many', segs([10, 10, 10], rep(3, { del: 0.15 })), { deletesPctAllowed: 10 }, [names(0, 2)]],
    [
      'big segments with many deletes that do not fit together are each rewritten alone',
      segs([8000, 6000], [{ del: 0.5 }, { del: 0.5 }]), {}, [['s0'], ['s1']],
    ],
    [
      'max_merged_segment caps a merge, and one merge that big per call (as TieredMergePolicy)',
      segs(rep(20, 1)), { maxMergedSegmentBytes: 5.5 * MB }, [names(0, 4)],
    ],
  ];
  it.each(cases)('%s', (_name, list, settings, want) => {
    expect(findMerges(list, settings)).toEqual(want);
  });

  it('only ever proposes contiguous runs of the list, never a segment twice', () => {
    let seed = 1;
    const r = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    for (let k = 0; k < 200; k++) {
      const list = segs(Array.from({ length: 1 + Math.floor(r() * 40) }, () => Math.ceil(r() ** 3 * 500)), Array.from({ length: 40 }, () => ({ del: r() < 0.3 ? r() * 0.6 : 0, merging: r() < 0.05 })));
      const seen = new Set<string>();
      for (const m of findMerges(list)) {
        const at = list.findIndex((s) => s.name === m[0]);
        expect(m).toEqual(list.slice(at, at + m.length).map((s) => s.name));
        for (const n of m) {
          expect(seen.has(n)).toBe(false);
          expect(list.find((s) => s.name === n)!.merging).toBeFalsy();
          seen.add(n);
        }
      }
    }
  });
});

describe('findForcedMerges (max_num_segments)', () => {
  const cases: Array<[string, MergeCandidate[], number, string[][]]> = [
    ['to 1: everything into one', segs([10, 20, 30]), 1, [names(0, 2)]],
    ['to 1: a single segment without deletes is already merged', segs([10]), 1, []],
    ['to 1: a single segment with deletes is rewritten', segs([10], [{ del: 0.1 }]), 1, [['s0']]],
    ['to 2: balanced by bytes', segs([10, 10, 10, 10]), 2, [names(0, 1), names(2, 3)]],
    ['to 2: a big first segment stays, the rest merge', segs([30, 10, 10, 10]), 2, [names(1, 3)]],
    ['to 3 with 3 segments and no deletes: nothing', segs([1, 2, 3]), 3, []],
    ['to 3 with 3 segments, one with deletes: rewritten alone', segs([1, 2, 3], [{}, { del: 0.2 }]), 3, [['s1']]],
    ['beyond max_merged_segment too (an explicit merge)', segs([4000, 4000]), 1, [names(0, 1)]],
    ['a segment being merged splits the list', segs([1, 1, 1, 1, 1], [{}, {}, { merging: true }]), 1, [names(0, 1), names(3, 4)]],
  ];
  it.each(cases)('%s', (_name, list, n, want) => {
    expect(findForcedMerges(list, n)).toEqual(want);
  });
});

describe('findForcedDeletesMerges (only_expunge_deletes)', () => {
  const cases: Array<[string, MergeCandidate[], number | undefined, string[][]]> = [
    ['segments over expunge_deletes_allowed (10%), adjacent ones together', segs([5, 5, 5, 5], [{ del: 0.5 }, { del: 0.5 }, {}, { del: 0.3 }]), undefined, [names(0, 1), ['s3']]],
    ['at or under the threshold: nothing', segs([5, 5], [{ del: 0.1 }, { del: 0.05 }]), undefined, []],
    ['a lower threshold', segs([5, 5], [{ del: 0.1 }, { del: 0.05 }]), 2, [names(0, 1)]],
  ];
  it.each(cases)('%s', (_name, list, pct, want) => {
    expect(findForcedDeletesMerges(list, pct)).toEqual(want);
  });

  it('splits a run at max_merged_segment', () => {
    expect(findForcedDeletesMerges(segs([6, 6, 6], rep(3, { del: 0.5 })), 10, { maxMergedSegmentBytes: 7 * MB })).toEqual([names(0, 1), ['s2']]);
  });
});

describe('findMerges over a shard life', () => {
  /** Flushes of `mb` MB one after another, merging what the policy asks after each; returns the final list and the bytes merged. */
  function simulate(flushes: number, mb: number, delShare: () => number) {
    let list: MergeCandidate[] = [];
    let merged = 0, n = 0;
    for (let f = 0; f < flushes; f++) {
      list.push({ name: `f${n++}`, sizeBytes: mb * MB, maxDoc: mb * 1000, delCount: 0 });
      // updates delete docs in older segments
      for (const s of list) s.delCount = Math.min(s.maxDoc, s.delCount + Math.round(s.maxDoc * delShare()));
      for (;;) {
        const merges = findMerges(list);
        if (merges.length === 0) break;
        for (const m of merges) {
          const at = list.findIndex((s) => s.name === m[0]);
          const run = list.slice(at, at + m.length);
          const live = run.reduce((s, x) => s + (x.maxDoc - x.delCount), 0);
          const bytes = run.reduce((s, x) => s + x.sizeBytes * (1 - x.delCount / x.maxDoc), 0);
          merged += bytes;
          list.splice(at, m.length, { name: `m${n++}`, sizeBytes: bytes, maxDoc: live, delCount: 0 });
        }
      }
    }
    return { list, merged };
  }

  it('keeps the segment count logarithmic and writes each byte a few times (append-only)', () => {
    const { list, merged } = simulate(1000, 1, () => 0);
    expect(list.length).toBeLessThanOrEqual(30); // tiers of 10 by factors of 10: 1,000 MB in 3 tiers
    expect(merged / (1000 * MB)).toBeLessThan(4); // write amplification
    expect(list.reduce((s, x) => s + x.maxDoc, 0)).toBe(1000 * 1000);
  });

  it('keeps deleted docs near deletes_pct_allowed under steady updates', () => {
    let seed = 7;
    const r = () => ((seed = (seed * 16807) % 2147483647) / 2147483647);
    const { list } = simulate(600, 1, () => r() * 0.02);
    const del = list.reduce((s, x) => s + x.delCount, 0) / list.reduce((s, x) => s + x.maxDoc, 0);
    expect(del).toBeLessThan(0.25); // 19.6 % here: deletes_pct_allowed is 20
    expect(list.length).toBeLessThanOrEqual(30);
  });
});
