/**
 * Term positions of the indexing buffer (issue 24): aligned with the postings, 0.. within a value,
 * values of a multi-valued field 100 apart (position_increment_gap), and what the segment fixture
 * derives from the sources for every term of a random store.
 */
import { TextColumn } from '../../../../../actors/shard/engine/index/columns';
import { tokenPositions } from '../../../../../actors/shard/engine/index/analysis';
import type { TextView } from '../../../../../actors/shard/engine/index/columnViews';
import { positionsOf, randomStore } from '../segments/segmentFixture';

const plain = (p: { starts: Uint32Array; pos: Uint32Array } | undefined) => (p ? { starts: [...p.starts], pos: [...p.pos] } : undefined);

describe('buffer positions', () => {
  it('numbers tokens within a value and leaves a gap of 100 between values', () => {
    expect([...tokenPositions(3)]).toEqual([0, 1, 2]);
    expect([...tokenPositions(5, [2, 2, 5])]).toEqual([0, 1, 202, 203, 204]);
  });

  it('keeps a term per posting, ascending, a lone position as a number', () => {
    const c = new TextColumn();
    c.add(0, ['b a b']);
    c.add(1, ['a', 'c a']);
    c.add(2, ['c']);
    expect(plain(c.positions('a'))).toEqual({ starts: [0, 1, 3], pos: [1, 0, 102] });
    expect(plain(c.positions('b'))).toEqual({ starts: [0, 2], pos: [0, 2] });
    expect(plain(c.positions('c'))).toEqual({ starts: [0, 1, 2], pos: [101, 0] });
    expect(c.positions('zz')).toBeUndefined();
  });

  it('equals the positions re-derived from the sources, for every term of a random store', () => {
    const store = randomStore(7, 800);
    const b = store.activeBuffer();
    for (const path of ['title', 'body']) {
      const col = b.column(path) as TextView;
      const want = positionsOf(b, path, b.maxDoc);
      let n = 0;
      col.forEachTerm((t) => {
        expect(plain(col.positions!(t))).toEqual(plain(want.get(t)));
        n++;
      });
      expect(n).toBe(want.size);
    }
  });

  it('a column loaded without positions answers none, even for docs added after', () => {
    const c = new TextColumn();
    c.hasPositions = false;
    c.add(0, ['a b']);
    expect(c.positions('a')).toBeUndefined();
  });
});
