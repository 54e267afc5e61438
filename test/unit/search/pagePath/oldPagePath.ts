/**
 * The page path as it was before the binary shard replies (reference for pagePath.test.ts): the
 * shard answered `<header json>\n<sources…>` with every hit in the JSON header, the coordinator
 * parsed it, merged with reduceHits, and renderSearch spliced the source strings. Kept verbatim
 * in logic (stats and NATS left out) so the new path can be compared against it. Hit metadata
 * (`_routing`, `_version`, `_seq_no`/`_primary_term`) came later: here it is added the plain way,
 * as fields of each hit object in the JSON header, rendered from them.
 */
import { filterSource, reduceAggs, reduceHits, renderAggs, type SearchRequest, type ShardStore } from '../../../../actors/shard/engine';
import type { SearcherRef, ShardHit, ShardQueryRequest, ShardQueryResult } from '../../../../actors/shard/engine/types';
import { parseJson, stringify } from '../../../../actors/wire/json';
import { targetQuery, type RenderExtra, type ShardTarget } from '../../../../actors/search/coordinator';

const enc = new TextEncoder();
const dec = new TextDecoder();

type ShardReply<T> = { ok: true; result: T } | { ok: false; error: unknown };
interface QueryReplyHead {
  searcher: SearcherRef;
  result: ShardQueryResult;
  fetched?: number;
  lens?: number[];
}
interface FetchReplyHead {
  count: number;
  lens: number[];
  ids: string[];
}

function framedReply(head: unknown, sources: string[]): Uint8Array {
  return enc.encode(`${stringify({ ok: true, result: head })}\n${sources.join('')}`);
}

function decodeFramed<T>(data: Uint8Array, lensOf: (head: T) => number[] | undefined): { head: ShardReply<T>; sources: string[] } {
  const text = dec.decode(data);
  const nl = text.indexOf('\n');
  const head = parseJson<ShardReply<T>>(nl < 0 ? text : text.slice(0, nl));
  const sources: string[] = [];
  if (head.ok && nl >= 0) {
    let pos = nl + 1;
    for (const len of lensOf(head.result) ?? []) {
      sources.push(text.slice(pos, pos + len));
      pos += len;
    }
  }
  return { head, sources };
}

/** A hit with the metadata the shard attached. */
type MetaHit = ShardHit & { routing?: string; version?: number; seqNo?: number; primaryTerm?: number };

/** The old shard side: ShardActor.query / fetch. */
export function oldShardQuery(store: ShardStore, m: { req: ShardQueryRequest; searcher?: SearcherRef; fetch?: boolean }, maxPayload: number): Uint8Array {
  const searcher = m.searcher ?? store.acquireSearcher();
  const result = store.query(searcher, m.req);
  for (const h of result.hits as MetaHit[]) {
    const routing = store.routing(h.doc);
    if (routing !== undefined) h.routing = routing;
    if (m.req.version) h.version = store.versionOf(h.doc).version;
    if (m.req.seqNoPrimaryTerm) Object.assign(h, { seqNo: store.versionOf(h.doc).seqNo, primaryTerm: store.primaryTerm(h.doc) });
  }
  if (!m.fetch) return framedReply({ searcher, result }, []);
  const sources: string[] = [];
  const lens: number[] = [];
  let budget = Math.floor(maxPayload * 0.45);
  for (const h of result.hits) {
    const s = store.source(h.doc);
    if (sources.length && s.length > budget) break;
    budget -= s.length;
    sources.push(s);
    lens.push(s.length);
  }
  return framedReply({ searcher, result, fetched: sources.length, lens }, sources);
}

export function oldShardFetch(store: ShardStore, docs: number[], maxPayload: number): Uint8Array {
  const sources: string[] = [];
  const lens: number[] = [];
  const ids: string[] = [];
  let budget = Math.floor(maxPayload * 0.45);
  for (const d of docs) {
    const s = store.source(d);
    if (sources.length && s.length > budget) break;
    budget -= s.length;
    sources.push(s);
    lens.push(s.length);
    ids.push(store.id(d));
  }
  return framedReply({ count: sources.length, lens, ids } satisfies FetchReplyHead, sources);
}

/** The old ShardClient.query / fetch over in-process "replies". */
export class OldClient {
  constructor(private readonly stores: Map<number, ShardStore>, private readonly maxPayload: number) {}

  query(t: ShardTarget, msg: { req: ShardQueryRequest; searcher?: SearcherRef; fetch?: boolean }): { head: QueryReplyHead; sources: string[] } {
    const data = oldShardQuery(this.stores.get(t.shardIndex)!, msg, this.maxPayload);
    const { head, sources } = decodeFramed<QueryReplyHead>(data, (h) => h.lens);
    if (!head.ok) throw new Error('error reply');
    return { head: head.result, sources };
  }

  fetch(t: ShardTarget, docs: number[]): string[] {
    const out: string[] = [];
    let rest = docs;
    while (rest.length) {
      const data = oldShardFetch(this.stores.get(t.shardIndex)!, rest, this.maxPayload);
      const { head, sources } = decodeFramed<FetchReplyHead>(data, (h) => h.lens);
      if (!head.ok) throw new Error('error reply');
      out.push(...sources);
      rest = rest.slice(head.result.count);
    }
    return out;
  }
}

export interface OldOutcome {
  hits: Array<MetaHit & { shardIndex: number; source?: string }>;
  total: { value: number; relation: 'eq' | 'gte' } | undefined;
  maxScore: number | null;
  aggregations?: Record<string, unknown>;
  shards: { total: number; successful: number; skipped: number; failed: number };
  tookMs: number;
}

/** The old executeSearch (no failures: the stores always answer). */
export function oldExecuteSearch(c: OldClient, req: SearchRequest, targets: ShardTarget[]): OldOutcome {
  if (targets.length > 1 && isShardDocWalk(req)) return oldWalk(c, req, targets);
  const single = targets.length === 1;
  const shardReq = (t: ShardTarget): ShardQueryRequest => ({
    query: targetQuery(req.query, t),
    postFilter: req.postFilter,
    sort: req.sort,
    from: single ? req.from : 0,
    size: single ? req.size : req.from + req.size,
    searchAfter: req.searchAfter,
    trackTotalHits: req.trackTotalHits,
    trackScores: req.trackScores,
    minScore: req.minScore,
    aggs: req.aggs,
    slice: t.slice,
    shardIndex: t.shardIndex,
    checkWindow: req.checkWindow,
    version: req.version,
    seqNoPrimaryTerm: req.seqNoPrimaryTerm,
  });
  const ok = targets.map((t) => {
    const r = c.query(t, { req: shardReq(t), searcher: t.searcher, fetch: single });
    return { t, searcher: r.head.searcher, result: r.head.result, sources: r.sources, fetched: r.head.fetched ?? 0 };
  });
  const merged = reduceHits(
    ok.map((o) => ({ shardIndex: o.t.shardIndex, result: o.result })),
    { sort: req.sort, from: single ? 0 : req.from, size: req.size, trackTotalHits: req.trackTotalHits },
  );
  const byShard = new Map<number, { t: ShardTarget; docs: number[]; pos: number[]; inline?: { sources: string[]; fetched: number } }>();
  merged.hits.forEach((h, i) => {
    const o = ok.find((x) => x.t.shardIndex === h.shardIndex)!;
    let g = byShard.get(h.shardIndex);
    if (!g) byShard.set(h.shardIndex, (g = { t: o.t, docs: [], pos: [], inline: single ? o : undefined }));
    g.docs.push(h.doc);
    g.pos.push(i);
  });
  const sources: string[] = new Array(merged.hits.length);
  for (const g of byShard.values()) {
    let got: string[] = [];
    if (g.inline) got = g.inline.sources.slice(0, Math.min(g.inline.fetched, g.docs.length));
    if (got.length < g.docs.length) got = got.concat(c.fetch(g.t, g.docs.slice(got.length)));
    g.pos.forEach((p, j) => (sources[p] = got[j]));
  }
  const aggregations = req.aggs ? renderAggs(reduceAggs(ok.map((o) => o.result.aggs), req.aggs), req.aggs, req.typedKeys ?? false) : undefined;
  return {
    hits: merged.hits.map((h, i) => Object.assign(h, { source: sources[i] })),
    total: merged.total,
    maxScore: merged.maxScore,
    aggregations,
    shards: { total: targets.length, successful: ok.length, skipped: 0, failed: 0 },
    tookMs: 0,
  };
}

function isShardDocWalk(req: SearchRequest): boolean {
  const first = req.sort?.[0];
  return first?.field === '_shard_doc' && first.order === 'asc' && req.trackTotalHits === false && !req.aggs && req.from === 0 && req.size > 0;
}

function oldWalk(c: OldClient, req: SearchRequest, targets: ShardTarget[]): OldOutcome {
  const after = req.searchAfter?.[0];
  const fromShard = after === undefined || after === null ? -1 : Number(BigInt(after as number | bigint | string) >> 32n);
  const ordered = [...targets].sort((a, b) => a.shardIndex - b.shardIndex);
  const hits: OldOutcome['hits'] = [];
  for (const t of ordered) {
    if (t.shardIndex < fromShard) continue;
    const want = req.size - hits.length;
    if (want <= 0) break;
    const shardReq: ShardQueryRequest = {
      query: targetQuery(req.query, t),
      postFilter: req.postFilter,
      sort: req.sort,
      from: 0,
      size: want,
      searchAfter: t.shardIndex === fromShard ? req.searchAfter : undefined,
      trackTotalHits: false,
      trackScores: req.trackScores,
      minScore: req.minScore,
      slice: t.slice,
      shardIndex: t.shardIndex,
      checkWindow: req.checkWindow,
      version: req.version,
      seqNoPrimaryTerm: req.seqNoPrimaryTerm,
    };
    const r = c.query(t, { req: shardReq, searcher: t.searcher, fetch: true });
    const got = r.head.result.hits;
    let sources = r.sources.slice(0, Math.min(r.head.fetched ?? 0, got.length));
    if (sources.length < got.length) sources = sources.concat(c.fetch(t, got.slice(sources.length).map((h) => h.doc)));
    got.forEach((h, i) => hits.push(Object.assign(h, { shardIndex: t.shardIndex, source: sources[i] })));
  }
  return { hits, total: undefined, maxScore: null, shards: { total: targets.length, successful: targets.length, skipped: 0, failed: 0 }, tookMs: 0 };
}

/** The old renderSearch (string chunks). */
export function oldRenderSearch(out: OldOutcome, req: SearchRequest, indexNameOf: (shardIndex: number) => string, extra: RenderExtra = {}): string {
  const chunks: string[] = ['{'];
  if (extra.scrollId !== undefined) chunks.push(`"_scroll_id":${JSON.stringify(extra.scrollId)},`);
  if (extra.pitId !== undefined) chunks.push(`"pit_id":${JSON.stringify(extra.pitId)},`);
  chunks.push(`"took":${out.tookMs},"timed_out":false,"_shards":${JSON.stringify(out.shards)},"hits":{`);
  const total = extra.total ?? out.total;
  if (!extra.noTotal && total) {
    chunks.push(extra.restTotalHitsAsInt ? `"total":${total.value},` : `"total":${JSON.stringify(total)},`);
  } else if (extra.restTotalHitsAsInt) chunks.push('"total":-1,');
  chunks.push(`"max_score":${out.maxScore === null || out.maxScore === undefined || Number.isNaN(out.maxScore) ? 'null' : out.maxScore},"hits":[`);
  const sortLen = extra.sortLength;
  out.hits.forEach((h, i) => {
    if (i) chunks.push(',');
    chunks.push(`{"_index":${JSON.stringify(indexNameOf(h.shardIndex))},"_id":${JSON.stringify(h._id)}`);
    if (h.version !== undefined) chunks.push(`,"_version":${h.version}`);
    if (h.seqNo !== undefined) chunks.push(`,"_seq_no":${h.seqNo},"_primary_term":${h.primaryTerm}`);
    chunks.push(`,"_score":${h.score === null || h.score === undefined ? 'null' : h.score}`);
    if (h.routing !== undefined) chunks.push(`,"_routing":${JSON.stringify(h.routing)}`);
    const raw = h.source;
    if (raw !== undefined) {
      if (req.source === undefined) chunks.push(',"_source":', raw);
      else {
        const filtered = filterSource(raw, req.source);
        if (filtered !== undefined) chunks.push(',"_source":', filtered);
      }
    }
    if (h.sort && extra.docSortValues) chunks.push(`,"sort":[${h.doc}]`);
    else if (h.sort && (sortLen === undefined || sortLen > 0)) {
      chunks.push(`,"sort":${stringify(sortLen === undefined ? h.sort : h.sort.slice(0, sortLen))}`);
    }
    chunks.push('}');
  });
  chunks.push(']}');
  if (out.aggregations) chunks.push(`,"aggregations":${stringify(out.aggregations)}`);
  chunks.push('}');
  return chunks.join('');
}
