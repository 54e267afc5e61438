/**
 * Snapshots of the document projection (issue 6 item 6): a shard store encoded at a freeze and
 * decoded into a fresh store is indistinguishable from a store rebuilt by replaying the same
 * logged ops: same doc ids, seqNos, deletes, versions, tombstones, routings, columns and search
 * results, and it continues sequencing exactly like the replayed one. Damaged files are refused.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexMapping, ShardStore, type DocWrite, type LoggedOp } from '../../../actors/shard/engine';
import { ByteReader, ChunkWriter } from '../../../actors/shard/engine/base/binary';
import { decodeStore, encodeStore } from '../../../actors/shard/engine/store/storeCodec';
import type { FrozenStore } from '../../../actors/shard/engine/store/shardStore';
import { SnapshotFormatError, SnapshotWriter, listSnapshots, pruneSnapshots, readSnapshot, type SnapshotHeader } from '../../../actors/shard/snapshot';
import { rng } from '../../support/rng';

const MAPPINGS = {
  properties: {
    n: { type: 'long' },
    dn: { type: 'date_nanos' },
    tags: { type: 'keyword' },
    price: { type: 'double' },
    big: { type: 'unsigned_long' },
  },
};
const settings = () => ({ maxResultWindow: 100_000, maxSlicesPerScroll: 1024 });
const newStore = (mapping: IndexMapping) => new ShardStore({ index: 'idx', shardId: 0, mapping, settings });

/** A random history: creates, overwrites, deletes (also of missing ids), routings, unicode, dynamic fields. */
function history(seed: number, count: number): DocWrite[] {
  const r = rng(seed);
  const idPool = ['a', 'b', 'é', 'ключ', '鍵', '😀', 'x\ud800', 'lone\udc00y', '', 'with space', ...Array.from({ length: 40 }, (_, i) => `d${i}`)];
  const words = ['fox', 'dog', 'red', 'blue', 'naïve', 'straße', '日本', '🦊', 'quick', 'lazy'];
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const out: DocWrite[] = [];
  for (let i = 0; i < count; i++) {
    const id = pick(idPool);
    const x = r();
    if (x < 0.15) {
      out.push({ op: 'delete', id: r() < 0.2 ? `missing${i}` : id });
      continue;
    }
    const doc: Record<string, unknown> = { n: Math.floor(r() * 1000) - 500, title: Array.from({ length: 1 + Math.floor(r() * 6) }, () => pick(words)).join(' ') };
    if (r() < 0.5) doc.tags = r() < 0.3 ? [pick(words), pick(words), pick(words)] : pick(words);
    if (r() < 0.3) doc.price = r() < 0.3 ? [r() * 100, r() * 10] : r() * 100;
    if (r() < 0.2) doc.dn = `2024-01-0${1 + Math.floor(r() * 9)}T00:00:00.${String(Math.floor(r() * 1e9)).padStart(9, '0')}Z`;
    if (r() < 0.1) doc.big = r() < 0.5 ? '18446744073709551615' : String(2 ** 53 + Math.floor(r() * 100));
    if (r() < 0.1) doc[`dyn${Math.floor(r() * 5)}`] = r() < 0.5 ? 'text value' : 42;
    if (r() < 0.05) doc.when = '2023-05-06';
    // raw JSON text kept verbatim, with odd spacing and escapes
    const src = r() < 0.2 ? JSON.stringify(doc, null, 1) : JSON.stringify(doc).replace('"n"', '"n" ');
    out.push({ op: r() < 0.1 ? 'create' : 'index', id, source: src, ...(r() < 0.2 ? { routing: `r${Math.floor(r() * 3)}ü` } : {}) });
  }
  return out;
}

/** Applies writes through `write` (as the shard actor does) and returns the logged ops. */
function writeAll(store: ShardStore, writes: DocWrite[]): LoggedOp[] {
  const log: LoggedOp[] = [];
  for (const w of writes) {
    const o = store.write(w);
    if (o.ok && o.logged) log.push(o.logged);
  }
  return log;
}

/** A store rebuilt from logged ops (the full replay the snapshot must equal). */
function replayed(ops: LoggedOp[]): ShardStore {
  const s = newStore(new IndexMapping(MAPPINGS));
  for (const op of ops) s.applyLogged(op);
  return s;
}

/** Everything observable about a store, including internals, as plain data. */
function dump(store: ShardStore) {
  const s = store.activeBuffer();
  const st = s as unknown as { docCount: number; tombs: Map<string, unknown>; routings: Map<number, string>; delLog: Float64Array; delCount: number };
  const n = st.docCount;
  const cols: Record<string, unknown> = {};
  for (const [path, col] of s.columns) {
    cols[path] = Array.from({ length: n }, (_, d) => s.values(path, d).map(String));
    const c = col as unknown as { stats?: (m: number) => unknown; dict?: Map<string, unknown>; terms?: string[] };
    if (c.stats) cols[`${path}#stats`] = [1, Math.floor(n / 2), n].map((m) => c.stats!(m));
    if (c.terms) cols[`${path}#terms`] = [...c.terms];
    else if (c.dict) cols[`${path}#terms`] = [...c.dict.keys()];
  }
  return {
    n,
    seqNo: store.maxSeqNo(),
    ids: s.ids.slice(0, n),
    sources: s.sources.slice(0, n),
    seqNos: Array.from(s.seqNos.subarray(0, n)),
    delSeq: Array.from(s.delSeq.subarray(0, n)),
    versions: Array.from(s.versions.subarray(0, n)),
    prev: Array.from(s.prev.subarray(0, n)),
    idMap: [...s.idMap],
    routings: [...st.routings].sort((a, b) => a[0] - b[0]),
    tombstones: [...st.tombs].sort(),
    delLog: Array.from(st.delLog.subarray(0, st.delCount)),
    mapping: s.mapping.toSnapshot(),
    columns: cols,
  };
}

const QUERIES: unknown[] = [
  undefined,
  { match: { title: 'fox red' } },
  { term: { tags: 'dog' } },
  { range: { n: { gte: -100, lt: 200 } } },
  { bool: { should: [{ match: { title: 'naïve 日本' } }, { exists: { field: 'price' } }], must_not: [{ term: { tags: 'blue' } }] } },
  { range: { dn: { gte: '2024-01-03' } } },
];
function searches(s: ShardStore) {
  const searcher = s.acquireSearcher();
  return QUERIES.flatMap((query) => [
    s.query(searcher, { query, from: 0, size: 1000, trackTotalHits: true, shardIndex: 0 }),
    s.query(searcher, { query, from: 0, size: 50, trackTotalHits: true, shardIndex: 0, sort: [{ field: 'n', order: 'desc' }, { field: '_shard_doc', order: 'asc' }] }),
    s.query(searcher, { query, from: 0, size: 0, trackTotalHits: true, shardIndex: 0, aggs: { t: { terms: { field: 'tags' } }, p: { avg: { field: 'price' } }, s: { sum: { field: 'n' } }, b: { max: { field: 'big' } } } }),
  ]);
}

function roundTrip(store: ShardStore, frozen: FrozenStore): ShardStore {
  const w = new ChunkWriter();
  encodeStore(w, store.activeBuffer(), frozen);
  const img = decodeStore(new ByteReader(Buffer.concat(w.parts())));
  const fresh = newStore(IndexMapping.fromSnapshot(store.mapping.toSnapshot()));
  fresh.loadLegacy(img);
  return fresh;
}

describe('shard store snapshot codec', () => {
  it('decodes into a store identical to a full replay of the log', () => {
    const live = newStore(new IndexMapping(MAPPINGS));
    const ops = writeAll(live, history(1, 1500));
    live.refresh();
    const restored = roundTrip(live, live.freeze());
    const full = replayed(ops);
    full.refresh();
    expect(dump(restored)).toEqual(dump(full));
    expect(restored.acquireSearcher()).toEqual(full.acquireSearcher());
    expect(searches(restored)).toEqual(searches(full));
  });

  it('describes the freeze instant even after later writes, and the log tail completes it', () => {
    const live = newStore(new IndexMapping(MAPPINGS));
    const head = writeAll(live, history(2, 800));
    live.refresh();
    const frozen = live.freeze();
    const mappingAtFreeze = live.mapping.toSnapshot();
    const tail = writeAll(live, history(3, 800)); // overwrites, deletes, new terms, new dynamic fields
    const w = new ChunkWriter();
    encodeStore(w, live.activeBuffer(), frozen);
    const restored = newStore(IndexMapping.fromSnapshot(mappingAtFreeze));
    restored.loadLegacy(decodeStore(new ByteReader(Buffer.concat(w.parts()))));

    const atFreeze = replayed(head);
    atFreeze.refresh();
    expect(dump(restored)).toEqual(dump(atFreeze));
    expect(searches(restored)).toEqual(searches(atFreeze));

    for (const op of tail) restored.applyLogged(op);
    const full = replayed([...head, ...tail]);
    restored.refresh();
    full.refresh();
    expect(dump(restored)).toEqual(dump(full));
    expect(searches(restored)).toEqual(searches(full));
  });

  it('keeps an old pinned searcher exact across the round trip', () => {
    const live = newStore(new IndexMapping(MAPPINGS));
    const ops = writeAll(live, history(4, 600));
    live.refresh();
    const pinned = live.acquireSearcher();
    ops.push(...writeAll(live, history(5, 600)));
    live.refresh();
    const restored = roundTrip(live, live.freeze());
    const full = replayed(ops);
    const q = { query: { match: { title: 'fox' } }, from: 0, size: 1000, trackTotalHits: true, shardIndex: 2, sort: [{ field: '_shard_doc', order: 'asc' as const }] };
    expect(restored.query(pinned, q)).toEqual(full.query(pinned, q));
    expect(restored.count(pinned)).toEqual(full.count(pinned));
  });

  it('continues seqNos and versions exactly like the replayed store', () => {
    const live = newStore(new IndexMapping(MAPPINGS));
    const ops = writeAll(live, history(6, 700));
    const restored = roundTrip(live, live.freeze());
    const full = replayed(ops);
    const more = history(7, 400);
    expect(more.map((w) => restored.write(w))).toEqual(more.map((w) => full.write(w)));
    expect(dump(restored)).toEqual(dump(full));
  });

  it('round-trips an empty store', () => {
    const live = newStore(new IndexMapping());
    const restored = roundTrip(live, live.freeze());
    expect(dump(restored)).toEqual(dump(live));
    expect(restored.write({ op: 'index', id: 'a', source: '{}' })).toMatchObject({ seqNo: 0, version: 1 });
  });
});

describe('binary strings', () => {
  it('round-trips ASCII, UTF-8, lone surrogates, split pairs, empty strings and chunks over 1M chars', () => {
    const strs = ['', 'plain', 'é', '😀', '\ud83d', '\ude00', 'a\ud800b', '\udfff', 'x'.repeat(1_500_000), 'tail', ...Array.from({ length: 5000 }, (_, i) => `id-${i}-${'ü'.repeat(i % 3)}`)];
    const w = new ChunkWriter();
    w.strings(strs);
    w.strings(strs.filter((s) => /^[\x00-\x7f]*$/.test(s)));
    const r = new ByteReader(Buffer.concat(w.parts()));
    expect(r.strings()).toEqual(strs);
    expect(r.strings()).toEqual(strs.filter((s) => /^[\x00-\x7f]*$/.test(s)));
    expect(r.done).toBe(true);
  });
});

describe('mapping snapshot', () => {
  it('keeps field order, dynamic additions and merged parameters', () => {
    const m = new IndexMapping({ dynamic: 'true', date_detection: false, properties: { z: { type: 'keyword' }, '1': { type: 'long' }, obj: { properties: { b: { type: 'text' } } } } });
    m.parse({ new_field: 'x', obj: { a: 5 } }, 'id');
    m.merge({ properties: { obj: { enabled: true, properties: { c: { type: 'long' } } }, z: { type: 'keyword', ignore_above: 10 } } });
    const back = IndexMapping.fromSnapshot(JSON.parse(JSON.stringify(m.toSnapshot())));
    expect(back.toSnapshot()).toEqual(m.toSnapshot());
    expect(back.toJSON()).toEqual(m.toJSON());
    expect(back.leavesUnder('').map((d) => d.path)).toEqual(m.leavesUnder('').map((d) => d.path));
    expect(back.fieldType('obj.a')).toBe('long');
  });
});

describe('snapshot files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'snap-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const header = (seq: number): SnapshotHeader => ({
    seq, stream: { name: 'ES_DATA', at: { subject: 'es.v1.data.meta', timestamp: '2024-01-01T00:00:00.123456789Z' } }, node: 'n1', takenAt: new Date(0).toISOString(), indices: [], clusterSettings: { a: 1 },
  });

  async function writeOne(seq: number, store: ShardStore): Promise<string> {
    const w = await SnapshotWriter.create(dir, header(seq));
    await w.shard('uuid1', 0, store, store.freeze());
    await w.shard('uuid1', 1, store, store.freeze());
    return (await w.commit()).path;
  }
  async function readAll(path: string) {
    const out = [];
    for await (const s of readSnapshot(path)) out.push(s);
    return out;
  }
  const sample = () => {
    const s = newStore(new IndexMapping(MAPPINGS));
    writeAll(s, history(8, 300));
    return s;
  };

  it('writes and reads back a header and every shard', async () => {
    const store = sample();
    const path = await writeOne(42, store);
    const sections = await readAll(path);
    expect(sections.map((s) => s.kind)).toEqual(['header', 'shard', 'shard']);
    expect(sections[0]).toEqual({ kind: 'header', header: header(42) });
    const s1 = sections[2] as Extract<(typeof sections)[number], { kind: 'shard' }>;
    expect([s1.indexUuid, s1.n]).toEqual(['uuid1', 1]);
    const fresh = newStore(IndexMapping.fromSnapshot(store.mapping.toSnapshot()));
    fresh.loadLegacy(s1.image);
    expect(dump(fresh)).toEqual(dump(store));
  });

  it('rejects a flipped byte with a checksum error', async () => {
    const path = await writeOne(1, sample());
    const bytes = await readFile(path);
    bytes[Math.floor(bytes.length * 0.6)] ^= 0x40;
    await writeFile(path, bytes);
    await expect(readAll(path)).rejects.toThrow(/checksum mismatch/);
    await expect(readAll(path)).rejects.toBeInstanceOf(SnapshotFormatError);
  });

  it('rejects a truncated file, a foreign file and another format version', async () => {
    const path = await writeOne(1, sample());
    const bytes = await readFile(path);
    await writeFile(path, bytes.subarray(0, bytes.length - 3));
    await expect(readAll(path)).rejects.toThrow(/truncated/);
    await writeFile(path, bytes.subarray(0, bytes.length - 20)); // whole end section gone
    await expect(readAll(path)).rejects.toThrow(SnapshotFormatError);
    await writeFile(path, Buffer.from('{"not":"a snapshot"}'));
    await expect(readAll(path)).rejects.toThrow(/not a snapshot/);
    const v2 = Buffer.from(bytes);
    v2.writeUInt32LE(99, 8);
    await writeFile(path, v2);
    await expect(readAll(path)).rejects.toThrow(/format 99/);
  });

  it('lists newest first and prunes to the newest two', async () => {
    const s = sample();
    for (const seq of [5, 300, 20]) await writeOne(seq, s);
    expect((await listSnapshots(dir)).map((f) => f.seq)).toEqual([300, 20, 5]);
    await pruneSnapshots(dir, 2);
    expect((await listSnapshots(dir)).map((f) => f.seq)).toEqual([300, 20]);
  });
});
