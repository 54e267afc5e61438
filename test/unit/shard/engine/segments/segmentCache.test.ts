import { join } from 'node:path';
import { ENTRY_OVERHEAD, openSegment, SegmentCache, writeSegment } from '../../../../../actors/shard/engine/segments';
import type { NumericView, TextView } from '../../../../../actors/shard/engine/index/columnViews';
import { randomStore, storeLeaf, tempDir } from './segmentFixture';

const load = (bytes: number, tag = 0) => () => ({ value: new Float64Array(new ArrayBuffer(bytes)).fill(tag), bytes });

describe('SegmentCache', () => {
  it('counts hits, misses, entries and bytes (with a fixed overhead per entry)', () => {
    const c = new SegmentCache({ maxBytes: 1 << 20 });
    c.get('s', 'a', load(800));
    c.get('s', 'a', load(800));
    c.get('s', 'b', load(1600));
    expect(c.stats()).toEqual({ maxBytes: 1 << 20, bytes: 2400 + 2 * ENTRY_OVERHEAD, entries: 2, hits: 1, misses: 2, evictions: 0, unretained: 0 });
  });

  it('stays within maxBytes, evicting what was not used since the clock hand passed', () => {
    const c = new SegmentCache({ maxBytes: 4 * (1000 + ENTRY_OVERHEAD) });
    for (const k of ['a', 'b', 'c', 'd']) c.get('s', k, load(1000));
    c.get('s', 'a', load(1000)); // a is used again: b goes first
    c.get('s', 'e', load(1000));
    expect(c.peek('s', 'a')).toBeDefined();
    expect(c.peek('s', 'b')).toBeUndefined();
    expect(c.stats()).toMatchObject({ entries: 4, evictions: 1 });
    expect(c.stats().bytes).toBeLessThanOrEqual(c.maxBytes);
  });

  it('serves a load bigger than the whole cache without retaining it', () => {
    const c = new SegmentCache({ maxBytes: 1000 });
    const e = c.get('s', 'big', load(8000, 7));
    expect(e.value[0]).toBe(7);
    expect(e.live).toBe(false);
    expect(c.stats()).toMatchObject({ entries: 0, bytes: 0, unretained: 1 });
  });

  it('keeps a view valid after its buffer is evicted, and tells the owner', () => {
    const c = new SegmentCache({ maxBytes: 2 * (1000 + ENTRY_OVERHEAD) });
    const e = c.get('s', 'a', load(1000, 3));
    let told = 0;
    e.onEvict = () => told++;
    const view = e.value;
    c.get('s', 'b', load(1000));
    c.get('s', 'c', load(1000));
    expect([e.live, e.value, told]).toEqual([false, null, 1]);
    expect(view[124]).toBe(3);
  });

  it('drops every entry of a segment on evictSegment', () => {
    const c = new SegmentCache({ maxBytes: 1 << 20 });
    c.get('s1', 'a', load(8));
    c.get('s1', 'b', load(8));
    c.get('s2', 'a', load(8));
    expect(c.evictSegment('s1')).toBe(2);
    expect(c.stats().entries).toBe(1);
  });
});

describe('a segment over a small cache', () => {
  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  it('loads everything through the cache, within its bound, and answers the same after evictions', () => {
    const store = randomStore(5, 3000);
    writeSegment(tmp.dir, 'c', { leaves: [{ leaf: storeLeaf(store) }] });
    const cache = new SegmentCache({ maxBytes: 64 << 10 });
    const seg = openSegment(join(tmp.dir, 'c.seg'), cache);
    const hi = (seg.column('n') as NumericView).hi;
    const first = Array.from(hi);
    const title = seg.column('title') as TextView;
    for (const t of ['alpha', 'bravo', 'zulu', 'über']) title.postings(t);
    for (let d = 0; d < 3000; d += 97) seg.idOf(d);
    const st = cache.stats();
    expect(st.bytes).toBeLessThanOrEqual(64 << 10);
    expect(st.evictions).toBeGreaterThan(0);
    expect(Array.from(hi)).toEqual(first); // the view outlives the eviction
    expect(Array.from((seg.column('n') as NumericView).hi)).toEqual(first);
    expect(seg.idOf(5)).toBe(store.activeBuffer().idOf(5));
    expect(cache.evictSegment(seg.cacheKey)).toBeGreaterThan(0);
    expect(cache.stats().entries).toBe(0);
    seg.close();
  });
});
