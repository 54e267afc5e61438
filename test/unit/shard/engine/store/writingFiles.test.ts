/**
 * A commit while a segment is being written (a merge in a worker, a flush in slices) must not take
 * that segment's `.seg.tmp`, or its `.seg` once renamed into place, for garbage: they used to be
 * deleted, the merge or flush failed with ENOENT, and in a long run live docs were lost.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import { mergeInProcess } from '../../../../../actors/shard/engine/store/shardStore';
import { SegmentCache } from '../../../../../actors/shard/engine/segments';

const dir = mkdtempSync(join(tmpdir(), 'shard-writing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const settings = () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 });
const store = new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping({ properties: { n: { type: 'long' } } }), settings, dir, cache: new SegmentCache({ maxBytes: 8 << 20 }), retentionMs: 0 });
afterAll(() => store.close());

function write(from: number, to: number): void {
  for (let i = from; i < to; i++) {
    const p = store.prepare([{ op: 'index', id: `d${i % 150}`, source: JSON.stringify({ n: i }) }]);
    store.commit(p);
  }
}

it('a commit while a merge writes keeps its .seg.tmp and the merge completes', async () => {
  write(0, 100);
  await store.flushAsync();
  write(100, 200);
  await store.flushAsync();
  const seen: boolean[] = [];
  const merged = await store.merge(store.segmentNames(), async (r) => {
    // the merge has started writing; meanwhile new docs are flushed and committed
    const tmp = join(r.dir, `${r.name}.seg.tmp`);
    const meta = mergeInProcess(r);
    write(200, 260);
    await store.flushAsync();
    seen.push(existsSync(join(r.dir, `${r.name}.seg`)) || existsSync(tmp));
    return meta;
  });
  expect(merged).toBe(true);
  store.refresh();
  expect(store.stats().docs).toBe(150);
  await store.commitAsync();
  expect(seen).toEqual([true]);
});
