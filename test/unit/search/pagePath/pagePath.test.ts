/**
 * The binary page path (shard page replies, columnar merge, byte-copy rendering) against the old
 * JSON-framed path kept in oldPagePath.ts: on random corpora and random searches, both give the
 * same hits, order, scores, sort values, sources, totals, aggregations and the same response bytes.
 */
import { executeSearch, renderSearch, type RenderExtra, type ShardTarget } from '../../../../actors/search/coordinator';
import type { SearchServices } from '../../../../actors/search/services';
import { IndexMapping, parseSearchRequest, shardDocValue, ShardStore, type SearchRequest } from '../../../../actors/shard/engine';
import type { SearcherRef, ShardQueryRequest, SortValue } from '../../../../actors/shard/engine/types';
import { encodeFetchPage, encodeQueryPage, hitMeta, replySources, ShardPage } from '../../../../actors/shard/pageCodec';
import type { RenderSpec } from '../../../../actors/shard/hitRender';
import { ByteWriter } from '../../../../actors/wire/byteWriter';
import { parseJson, stringify } from '../../../../actors/wire/json';
import { OldClient, oldExecuteSearch, oldRenderSearch } from './oldPagePath';
import { rng } from '../../../support/rng';

type Rand = ReturnType<typeof rng>;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));

const MAPPINGS = {
  properties: {
    n: { type: 'long' }, d: { type: 'double' }, f: { type: 'float' }, k: { type: 'keyword' }, t: { type: 'text' },
    b: { type: 'boolean' }, ts: { type: 'date' }, u: { type: 'unsigned_long' },
  },
};
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hôtel', '日本'];
const KEYWORDS = ['a', 'b', 'zz', 'é', 'quote"d', 'back\\slash', '😀', 'Z', '\u0001ctl', 'new\nline', '', 'Infinity'];
const ROUTINGS = ['r1', 'user"7', 'é日本', 'back\\slash', '😀', '\u0002', '12'];
const ID_CHARS = ['a', 'b', '1', '9', '"', '\\', 'é', '日', '😀', '/', ' ', '\u0007', '%'];

/** The JSON text of a random document (64-bit numbers written as digits, fields in random order). */
function randomSource(r: Rand): string {
  const fields: string[] = [];
  if (r() < 0.85) {
    fields.push(`"n":${pick(r, [() => String(int(r, -1000, 1000)), () => (r() < 0.5 ? '-' : '') + String(2n ** 53n + BigInt(int(r, 1, 1e6))), () => '9223372036854775807', () => String(int(r, 0, 5))])()}`);
  }
  if (r() < 0.8) fields.push(`"d":${pick(r, ['-12.5', '3.14159', '1e20', '1.5e300', '0', '-0.0', '7', String(r() * 100)])}`);
  if (r() < 0.7) fields.push(`"f":${pick(r, ['0.1', '2.5', '-3', '100.25'])}`);
  if (r() < 0.85) {
    fields.push(r() < 0.2 ? `"k":${JSON.stringify([pick(r, KEYWORDS), pick(r, KEYWORDS)])}` : `"k":${JSON.stringify(pick(r, KEYWORDS))}`);
  }
  if (r() < 0.9) fields.push(`"t":${JSON.stringify(Array.from({ length: int(r, 1, 5) }, () => pick(r, WORDS)).join(' '))}`);
  if (r() < 0.6) fields.push(`"b":${r() < 0.5}`);
  if (r() < 0.7) fields.push(`"ts":"${new Date(Date.UTC(2020, 0, 1) + int(r, 0, 1e6) * 60_000).toISOString()}"`);
  if (r() < 0.6) fields.push(`"u":${pick(r, ['0', '18446744073709551615', '9223372036854775808', '42', String(int(r, 0, 1e9))])}`);
  if (r() < 0.3) fields.push(`"extra":{"nested":["y","x",null],"s":"ünï\\u00e9 \\"q\\""}`);
  for (let i = fields.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [fields[i], fields[j]] = [fields[j], fields[i]];
  }
  return r() < 0.2 ? `{ ${fields.join(' , ')} }` : `{${fields.join(',')}}`;
}

function randomStores(r: Rand, shards: number): ShardStore[] {
  const mapping = new IndexMapping(MAPPINGS);
  const settings = () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 });
  return Array.from({ length: shards }, (_, n) => {
    const store = new ShardStore({ index: 'idx', shardId: n, mapping, settings });
    const docs = int(r, 0, 60);
    const routed = r() < 0.4;
    const ids: string[] = [];
    for (let i = 0; i < docs; i++) {
      const id = r() < 0.15 && ids.length ? pick(r, ids) : Array.from({ length: int(r, 1, 6) }, () => pick(r, ID_CHARS)).join('');
      ids.push(id);
      // some shards hold docs indexed with a custom routing (then hits carry `_routing`)
      const routing = routed && r() < 0.4 ? pick(r, ROUTINGS) : undefined;
      const o = r() < 0.08 ? store.write({ op: 'delete', id }) : store.write({ op: 'index', id, source: randomSource(r), ...(routing !== undefined ? { routing } : {}) });
      if (!o.ok && o.status !== 404) throw new Error(`${id}: ${o.error.reason}`);
    }
    store.refresh();
    if (r() < 0.3) store.write({ op: 'index', id: 'after-refresh', source: '{"n":1}' }); // invisible to the searcher
    return store;
  });
}

const QUERIES = [
  undefined,
  { match_all: {} },
  { match: { t: 'alpha bravo' } },
  { match: { t: '日本 hôtel charlie' } },
  { term: { k: 'é' } },
  { bool: { should: [{ match: { t: 'delta' } }], filter: [{ exists: { field: 'n' } }] } },
  { range: { n: { gte: 0 } } },
];
const SORTS: unknown[] = [
  undefined, ['_score'], [{ n: 'asc' }], [{ n: 'desc' }], [{ d: { order: 'desc', missing: '_first' } }], [{ k: 'asc' }, { n: 'desc' }],
  [{ k: { order: 'desc', missing: '_last' } }], [{ ts: 'asc' }], [{ b: 'desc' }, { d: 'asc' }], [{ u: 'asc' }], [{ u: 'desc' }],
  ['_doc'], [{ f: 'asc' }], [{ _score: 'asc' }, { n: 'asc' }], [{ n: { order: 'asc', missing: 5 } }], [{ d: 'asc' }, '_doc'],
];
const SOURCES = [undefined, false, ['k', 'n'], { excludes: ['t'] }, { includes: ['extra.*', 'ts'] }];
const AGGS = [undefined, undefined, { kk: { terms: { field: 'k' } } }, { mx: { max: { field: 'd' } }, av: { avg: { field: 'n' } } }];

/** A random search request as the edge parses it; `walk` makes it a `_shard_doc` walk (scroll `_doc` pages). */
function randomRequest(r: Rand, walk: boolean, storedSource = false): SearchRequest {
  const body: Record<string, unknown> = {};
  const q = pick(r, QUERIES);
  if (q) body.query = q;
  const sort = walk ? undefined : pick(r, SORTS);
  if (sort) body.sort = sort;
  if (!walk) body.from = pick(r, [0, 0, 1, 3, 7]);
  body.size = pick(r, [0, 1, 5, 10, 30, 200]);
  if (r() < 0.3) body.track_scores = true;
  if (r() < 0.3) body.version = true;
  if (r() < 0.3) body.seq_no_primary_term = true;
  const tth = pick(r, [undefined, true, false, 3]);
  if (tth !== undefined && !walk) body.track_total_hits = tth;
  const src = storedSource ? pick(r, [undefined, true]) : pick(r, SOURCES);
  if (src !== undefined) body._source = src;
  const aggs = walk ? undefined : pick(r, AGGS);
  if (aggs) body.aggs = aggs;
  const sr = parseSearchRequest(body, {}, { scroll: false, indicesInPath: true });
  if (walk) return { ...sr, sort: [{ field: '_shard_doc', order: 'asc' }], trackTotalHits: false, from: 0, size: Math.max(1, sr.size) };
  // a PIT search's implicit tiebreaker
  if (sr.sort?.length && r() < 0.3) return { ...sr, sort: [...sr.sort, { field: '_shard_doc', order: 'asc' }] };
  return sr;
}

/**
 * An in-process shard client speaking the new page replies (what ShardActor and ShardClient do over
 * NATS). `bytes`: the store hands out sources as UTF-8 bytes, several at once (segments on disk).
 */
function newServices(stores: ShardStore[], maxPayload: number, bytes = false): SearchServices {
  const storeOf = (ref: { n: number }) => stores[ref.n];
  const bulk = (store: ShardStore) => (bytes ? (docs: number[]) => docs.map((d) => Buffer.from(store.source(d))) : undefined);
  const shards = {
    async query(ref: { n: number }, m: { req: ShardQueryRequest; searcher?: SearcherRef; fetch?: boolean; render?: RenderSpec }) {
      const store = storeOf(ref);
      const searcher = m.searcher ?? store.acquireSearcher();
      const result = store.query(searcher, m.req);
      const sources = m.fetch ? replySources(result.hits.map((h) => h.doc), (d) => store.source(d), maxPayload, bulk(store)) : [];
      return new ShardPage(encodeQueryPage(searcher, result, sources, m.req.shardIndex, hitMeta(store, result.hits, m.req), m.render));
    },
    async fetch(ref: { n: number }, docs: number[]) {
      const out: ShardPage[] = [];
      let rest = docs;
      while (rest.length) {
        const page = new ShardPage(encodeFetchPage(replySources(rest, (d) => storeOf(ref).source(d), maxPayload, bulk(storeOf(ref)))));
        out.push(page);
        rest = rest.slice(page.fetched);
      }
      return out;
    },
  };
  const stats = { queryCurrent: 0, queryTotal: 0, queryTimeMs: 0, queryFailure: 0, fetchCurrent: 0, fetchTotal: 0, fetchTimeMs: 0 };
  return { shards, stats, ctx: { node: { id: 'node-1' } } } as unknown as SearchServices;
}

const NAMES = ['idx', 'other-ïndex', 'q"uote'];

/** Hits seen with each kind of metadata (the corpora and requests do exercise them). */
const withMeta = { routing: 0, version: 0, seqNo: 0 };
/** Responses whose hits went out as the shards rendered them (byte ranges of their pages). */
const rendered = { responses: 0, hits: 0 };

async function compare(seed: number, walk: boolean, storedSource = false): Promise<number> {
  const r = rng(seed);
  const shardCount = walk ? int(r, 2, 3) : storedSource ? 1 : int(r, 1, 3);
  const stores = randomStores(r, shardCount);
  const maxPayload = pick(r, [1024 * 1024, 1024 * 1024, 3000, 600]);
  const targets: ShardTarget[] = stores.map((_, n) => ({ ref: { index: NAMES[n], indexUuid: `uuid${n}`, n }, shardIndex: n }));
  const old = new OldClient(new Map(stores.map((s, n) => [n, s])), maxPayload);
  let req = randomRequest(r, walk, storedSource);
  // search_after from a hit of a first page (same request), as clients do
  if (req.sort?.length && r() < 0.5) {
    const first = oldExecuteSearch(old, { ...req, from: 0 }, targets);
    if (first.hits.length) req = { ...req, from: 0, searchAfter: pick(r, first.hits).sort };
  }
  const extra: RenderExtra = {};
  if (r() < 0.3) extra.scrollId = 'scroll"id\u00e9';
  if (r() < 0.2) extra.pitId = 'pit-id';
  if (r() < 0.3) extra.restTotalHitsAsInt = true;
  if (r() < 0.2) extra.noTotal = true;
  if (r() < 0.2) extra.total = { value: 12345, relation: 'gte' };
  if (r() < 0.3) extra.sortLength = int(r, 0, 2);
  if (walk && r() < 0.5) extra.docSortValues = true;

  let before: ReturnType<typeof oldExecuteSearch> | undefined;
  let oldError: string | undefined;
  try {
    before = oldExecuteSearch(old, req, targets);
  } catch (e) {
    oldError = (e as Error).message;
  }
  let after: Awaited<ReturnType<typeof executeSearch>> | undefined;
  let newError: string | undefined;
  try {
    after = await executeSearch(newServices(stores, maxPayload), req, targets);
  } catch (e) {
    newError = (e as Error).message;
  }
  const where = `seed ${seed}: ${stringify(req)}`;
  if (oldError !== undefined || newError !== undefined) {
    expect({ where, error: newError }).toEqual({ where, error: oldError });
    return 0;
  }
  after!.tookMs = 0;
  const nameOf = (i: number) => NAMES[i];
  expect({ where, hits: after!.hits }).toEqual({ where, hits: before!.hits });
  expect({ where, total: after!.total, maxScore: after!.maxScore, aggs: after!.aggregations }).toEqual({ where, total: before!.total, maxScore: before!.maxScore, aggs: before!.aggregations });
  const body = Buffer.from(renderSearch(after!, req, nameOf, extra).chunks[0] as Buffer).toString('utf8');
  expect({ where, body }).toEqual({ where, body: oldRenderSearch(before!, req, nameOf, extra) });
  parseJson(body); // and it is JSON

  // The same search with the hits rendered by the shards (sources as text or as bytes): the same
  // hits and the same response bytes, sent as byte ranges of the pages when it can.
  const fast = await executeSearch(newServices(stores, maxPayload, r() < 0.5), req, targets, { render: { sortLength: extra.sortLength, docSortValues: extra.docSortValues } });
  fast.tookMs = 0;
  expect({ where, hits: fast.hits }).toEqual({ where, hits: before!.hits });
  const out = renderSearch(fast, req, nameOf, extra);
  expect({ where, body: Buffer.concat(out.chunks as Buffer[]).toString('utf8') }).toEqual({ where, body });
  if (out.chunks.length > 1) {
    rendered.responses++;
    rendered.hits += fast.hits.length;
  }
  for (const h of after!.hits) {
    if (h.routing !== undefined) withMeta.routing++;
    if (h.version !== undefined) withMeta.version++;
    if (h.seqNo !== undefined) withMeta.seqNo++;
  }
  return before!.hits.length;
}

describe('binary page path vs the old JSON-framed path', () => {
  it('gives the same hits, order, scores, sort values, sources and response bytes on random corpora and searches', async () => {
    let hits = 0;
    for (let seed = 1; seed <= 400; seed++) hits += await compare(seed, false);
    expect(hits).toBeGreaterThan(2000); // the corpora are not trivially empty
    // and hits with `_routing`, `_version`, `_seq_no` were among them
    for (const n of Object.values(withMeta)) expect(n).toBeGreaterThan(200);
  });

  it('gives the same response bytes when the shard renders the hits (single-shard searches, `_source` as stored)', async () => {
    const before = rendered.hits;
    for (let seed = 2001; seed <= 2300; seed++) await compare(seed, false, true);
    expect(rendered.hits - before).toBeGreaterThan(500); // the fast path did run
  });

  it('gives the same pages for `_shard_doc` walks (scroll `_doc` pages) across shards', async () => {
    let hits = 0;
    const before = rendered.hits;
    for (let seed = 1001; seed <= 1150; seed++) hits += await compare(seed, true);
    for (let seed = 1151; seed <= 1300; seed++) hits += await compare(seed, true, true);
    expect(hits).toBeGreaterThan(500);
    expect(rendered.hits - before).toBeGreaterThan(500);
  });
});

describe('page codec', () => {
  const searcher = { maxDoc: 3, seqNo: 2 };
  const roundTrip = (sort: SortValue[][], score: Array<number | null> = sort.map(() => null)) => {
    const hits = sort.map((s, i) => ({ doc: i, _id: `id${i}`, score: score[i], sort: s }));
    const page = new ShardPage(encodeQueryPage(searcher, { totalHits: hits.length, totalRelation: 'eq', maxScore: null, hits }, ['{"a":1}']));
    return { page, viaJson: parseJson<{ hits: typeof hits }>(stringify({ hits })).hits };
  };

  it('reads sort values back as a JSON round trip would (bigint beyond 2^53, null for non-finite)', () => {
    const { page, viaJson } = roundTrip([
      [1.5, 'a"b', true, null],
      [2 ** 60, '😀', false, 9223372036854775807n],
      [Infinity, '', true, 18446744073709551615n],
      [-0, 'x', false, -5n],
    ]);
    for (let i = 0; i < 4; i++) expect(page.sort(i)).toEqual(viaJson[i].sort);
  });

  it('writes each sort value as the JSON text stringify gives', () => {
    const rows: SortValue[][] = [[1e21, -1.25e-7, 'é\n', 2n ** 70n], [NaN, 0.1, '\u0000', -(2n ** 63n)], [3, 7, 'z', null]];
    const { page } = roundTrip(rows);
    for (let i = 0; i < rows.length; i++) {
      const w = new ByteWriter(16);
      for (let j = 0; j < 4; j++) {
        if (j) w.ascii(',');
        page.writeSortValue(w, i, j);
      }
      expect(`[${w.take().toString('utf8')}]`).toBe(stringify(parseJson(stringify(rows[i]))));
    }
  });

  it('carries `_doc` and `_shard_doc` columns as the doc ids alone, read back and written as the values', () => {
    for (const shardIndex of [0, 3, 2 ** 22]) {
      const hits = [5, 0, 77].map((doc) => ({ doc, _id: `d${doc}`, score: null, sort: [doc, shardDocValue(shardIndex, doc)] as SortValue[] }));
      const page = new ShardPage(encodeQueryPage(searcher, { totalHits: 3, totalRelation: 'eq', maxScore: null, hits }, [], shardIndex));
      const viaJson = parseJson<{ hits: typeof hits }>(stringify({ hits })).hits;
      for (let i = 0; i < 3; i++) {
        expect(page.sort(i)).toEqual(viaJson[i].sort);
        const w = new ByteWriter(8);
        page.writeSortValue(w, i, 0);
        w.ascii(',');
        page.writeSortValue(w, i, 1);
        expect(`[${w.take().toString()}]`).toBe(stringify(hits[i].sort));
      }
    }
  });

  it('reads scores back as JSON would (NaN and null as null)', () => {
    const { page } = roundTrip([[], [], []], [1.25, null, NaN]);
    expect([0, 1, 2].map((i) => page.score(i))).toEqual([1.25, null, null]);
  });

  it('carries hit metadata only when there is some: a page without it is a version 1 page', () => {
    const hits = [3, 1, 4].map((doc) => ({ doc, _id: `d${doc}`, score: 1.5 }));
    const result = { totalHits: 3, totalRelation: 'eq' as const, maxScore: 1.5, hits };
    const routings = new Map<number, string>([[1, 'r"é'], [4, '7']]);
    const store = (routed: boolean) => ({
      hasRouting: () => routed,
      routing: (d: number) => (routed ? routings.get(d) : undefined),
      versionOf: (d: number) => ({ version: d + 10, seqNo: 2 ** 40 + d }),
      primaryTerm: () => 3,
    });
    const plain = encodeQueryPage(searcher, result, ['{}']);
    expect(plain[1]).toBe(1);
    expect(hitMeta(store(false), hits, {})).toBeUndefined();
    expect(encodeQueryPage(searcher, result, ['{}'], undefined, hitMeta(store(false), hits, {}))).toEqual(plain);

    const page = new ShardPage(encodeQueryPage(searcher, result, ['{"a":1}'], undefined, hitMeta(store(true), hits, { version: true, seqNoPrimaryTerm: true })));
    expect(page.b[1]).toBe(2);
    expect([0, 1, 2].map((i) => [page.id(i), page.routing(i), page.version(i), page.seqNo(i), page.primaryTerm(i)])).toEqual([
      ['d3', undefined, 13, 2 ** 40 + 3, 3],
      ['d1', 'r"é', 11, 2 ** 40 + 1, 3],
      ['d4', '7', 14, 2 ** 40 + 4, 3],
    ]);
    expect(page.b.toString('utf8', page.routingStart(1), page.routingEnd(1))).toBe(JSON.stringify('r"é'));
    expect(page.source(0)).toBe('{"a":1}');

    const onlyRouting = new ShardPage(encodeQueryPage(searcher, result, [], undefined, hitMeta(store(true), hits, {})));
    expect([onlyRouting.hasRouting, onlyRouting.hasVersion, onlyRouting.hasSeqNo, onlyRouting.version(0), onlyRouting.seqNo(0)]).toEqual([true, false, false, undefined, undefined]);
  });

  it('carries ids with escapes and non-ASCII, and source bytes as given', () => {
    const hits = ['plain', 'q"uote\\', '日本😀', '\u0001'].map((id, i) => ({ doc: i, _id: id, score: null }));
    const sources = ['{"a":"é"}', '{}', '{"b":[1,2]}', '{"c":"\\u0000"}'];
    const page = new ShardPage(encodeQueryPage(searcher, { totalHits: 4, totalRelation: 'eq', maxScore: null, hits }, sources));
    expect([0, 1, 2, 3].map((i) => page.id(i))).toEqual(hits.map((h) => h._id));
    expect([0, 1, 2, 3].map((i) => page.source(i))).toEqual(sources);
    expect(page.b.toString('utf8', page.idStart(2), page.idEnd(2))).toBe(JSON.stringify('日本😀'));
  });
});

describe('byte writer', () => {
  it('writes UTF-8 past its room, growing only as needed', () => {
    for (const text of ['ascii only', 'é'.repeat(100), '日本😀'.repeat(50) + 'x', 'a\ud800b', '😀'.repeat(3)]) {
      const w = new ByteWriter(64);
      w.ascii('[');
      const n = w.utf8(text);
      w.ascii(']');
      expect(n).toBe(Buffer.byteLength(text));
      expect(w.take()).toEqual(Buffer.concat([Buffer.from('['), Buffer.from(text), Buffer.from(']')]));
    }
  });

  it('writes integers as their decimal digits', () => {
    const xs = [0, 7, 10, 99, 12345, -1, -987, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    const w = new ByteWriter(64);
    xs.forEach((x, i) => {
      if (i) w.ascii(',');
      w.int(x);
    });
    expect(w.take().toString()).toBe(xs.join(','));
  });
});
