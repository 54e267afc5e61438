/**
 * `nested` fields (issue 24): their objects are not values of the parent document (docParser
 * keeps them out, unless `include_in_parent`); a segment's nested objects at a path are indexed,
 * on first use, as documents of their own in an indexing buffer (ES's hidden child docs), each
 * knowing its parent and its offset in the array. The `nested` query runs its inner query on those
 * docs and gives their parents the `score_mode` of their matches (avg, max, min, sum, none);
 * `inner_hits` report the matching objects of each hit (`_nested.field/offset`, their `_source`).
 */
import { EsError } from '../../../wire/esErrors';
import { Bitset } from '../base/bits';
import { IndexBuffer } from '../index/indexBuffer';
import { IndexMapping, type FieldDef } from '../index/mapping';
import type { StoreView } from '../index/storeView';
import type { SearcherRef, ShardHit } from '../types';
import { evaluateChild } from './evaluate';
import { valuesAt } from './fetchFields';
import type { NestedInnerHits, QNode, QueryContext } from './qnode';

type Obj = Record<string, unknown>;
const f = Math.fround;

/** The nested docs of one path in one segment, as seen by one searcher. */
export interface ChildIndex {
  buf: IndexBuffer;
  s: SearcherRef;
  parent: Int32Array;
  offset: Int32Array;
  sources: Obj[];
}

const cache = new WeakMap<StoreView, Map<string, ChildIndex>>();

/** The mapping of the child docs: the nested object at `path` as a plain object (deeper nested stay nested). */
function childMapping(mapping: IndexMapping, path: string): IndexMapping {
  const json = JSON.parse(JSON.stringify(mapping.toJSON())) as Obj;
  // the path and the nested objects above it become plain objects of the child docs
  let node = json;
  for (const part of path.split('.')) {
    const props = node.properties as Obj | undefined;
    const next = props?.[part] as Obj | undefined;
    if (!next) break;
    node = next;
    if (node.type === 'nested') delete node.type;
    delete node.include_in_parent;
    delete node.include_in_root;
  }
  return new IndexMapping(json);
}

const wrap = (path: string, o: unknown): Obj => path.split('.').reduceRight<unknown>((acc, k) => ({ [k]: acc }), o) as Obj;

/** The child docs of `path` for the docs `ctx.s` sees (built once per searcher view). */
export function childIndex(ctx: QueryContext, path: string): ChildIndex {
  let byPath = cache.get(ctx.store);
  if (!byPath) cache.set(ctx.store, (byPath = new Map()));
  const key = `${path}@${ctx.s.maxDoc}:${ctx.s.seqNo}`;
  const hit = byPath.get(key);
  if (hit) return hit;
  const mapping = childMapping(ctx.store.mapping, path);
  const buf = new IndexBuffer({ index: ctx.store.index, shardId: ctx.store.shardId, mapping, settings: ctx.store.settings });
  const parent: number[] = [], offset: number[] = [], sources: Obj[] = [];
  let seq = 0;
  for (let d = 0; d < ctx.s.maxDoc; d++) {
    if (!ctx.store.visible(ctx.s, d)) continue;
    let src: unknown;
    try {
      src = JSON.parse(ctx.store.source(d));
    } catch {
      continue;
    }
    valuesAt(src, path).forEach((o, k) => {
      if (o === null || typeof o !== 'object' || Array.isArray(o)) return;
      const text = JSON.stringify(wrap(path, o));
      let parsed;
      try {
        parsed = mapping.parse(JSON.parse(text), `${d}#${k}`);
      } catch {
        return;
      }
      buf.add({ op: 'index', id: `${d}#${k}`, seqNo: seq++, version: 1, source: text }, parsed);
      parent.push(d);
      offset.push(k);
      sources.push(o as Obj);
    });
  }
  const ci: ChildIndex = { buf, s: { maxDoc: buf.maxDoc, seqNo: seq } as SearcherRef, parent: Int32Array.from(parent), offset: Int32Array.from(offset), sources };
  // one entry per path: a newer view replaces the older
  for (const k of byPath.keys()) if (k.startsWith(`${path}@`)) byPath.delete(k);
  byPath.set(key, ci);
  return ci;
}

/** The nested object mapping at `path`, or ES's error. */
function nestedDef(ctx: QueryContext, path: string, ignoreUnmapped: boolean): FieldDef | undefined {
  const def = ctx.store.mapping.objectAt(path) ?? ctx.store.mapping.field(path);
  const fail = (msg: string) => new EsError('query_shard_exception', 400, msg, { meta: { index: ctx.store.index } });
  if (!def) {
    if (ignoreUnmapped) return undefined;
    throw fail(`[nested] failed to find nested object under path [${path}]`);
  }
  if (def.type !== 'object' || !def.nested) throw fail(`[nested] nested object under path [${path}] is not of nested type`);
  return def;
}

/** The `nested` query; `compile` compiles the inner query against the child docs. */
export function nestedNode(body: Obj, ctx: QueryContext, compile: (q: unknown, c: QueryContext) => QNode): QNode {
  const path = String(body.path);
  const def = nestedDef(ctx, path, body.ignore_unmapped === true);
  if (!def) return { k: 'none' };
  const mode = String(body.score_mode ?? 'avg').toLowerCase();
  const boost = body.boost === undefined ? 1 : f(Number(body.boost));
  const ih = body.inner_hits as Obj | undefined;
  const inner: NestedInnerHits | undefined = ih ? { name: String(ih.name ?? path), path, spec: ih, matches: new Map() } : undefined;
  if (inner) (ctx.innerHits ??= []).push(inner);
  return {
    k: 'scored',
    run: (scoring, mult) => {
      const ci = childIndex(ctx, path);
      const cctx: QueryContext = { store: ci.buf, s: ci.s, now: ctx.now };
      cctx.compile = (q) => compile(q, cctx);
      const node = compile(body.query ?? { match_all: {} }, cctx);
      const scoreKids = scoring || inner !== undefined;
      const r = evaluateChild(node, cctx, scoreKids, f(mult * boost));
      const bits = new Bitset(ctx.s.maxDoc);
      const agg = new Map<number, { sum: number; n: number; min: number; max: number }>();
      if (inner) {
        inner.ci = ci;
        inner.matches.clear();
      }
      const take = (c: number) => {
        const p = ci.parent[c];
        bits.set(p);
        const sc = r.score ? r.score(c) : 1;
        const a = agg.get(p);
        if (a) {
          a.sum += sc;
          a.n++;
          a.min = Math.min(a.min, sc);
          a.max = Math.max(a.max, sc);
        } else agg.set(p, { sum: sc, n: 1, min: sc, max: sc });
        if (inner) {
          const l = inner.matches.get(p);
          if (l) l.push({ child: c, score: sc });
          else inner.matches.set(p, [{ child: c, score: sc }]);
        }
      };
      if (r.bits) r.bits.forEach(take);
      else for (let c = 0; c < ci.buf.maxDoc; c++) take(c);
      if (!scoring) return { bits };
      const scoreOf = (d: number) => {
        const a = agg.get(d);
        if (!a) return 0;
        switch (mode) {
          case 'none': return 0;
          case 'max': return a.max;
          case 'min': return a.min;
          case 'sum': return f(a.sum);
          default: return f(a.sum / a.n);
        }
      };
      return { bits, score: scoreOf };
    },
  };
}

/** Adds each hit's `inner_hits` (the matching nested objects, best first) as ES renders them. */
export function addNestedInnerHits(ctx: QueryContext, hits: ShardHit[]): void {
  if (!ctx.innerHits?.length) return;
  for (const h of hits) {
    const out: Record<string, unknown> = {};
    for (const ih of ctx.innerHits) {
      const from = Number(ih.spec.from ?? 0), size = Number(ih.spec.size ?? 3);
      const wantSource = ih.spec._source !== false;
      const all = [...(ih.matches.get(h.doc) ?? [])].sort((a, b) => b.score - a.score || a.child - b.child);
      const page = all.slice(from, from + size);
      out[ih.name] = {
        hits: {
          total: { value: all.length, relation: 'eq' },
          max_score: all.length ? Math.max(...all.map((m) => m.score)) : null,
          hits: page.map((m) => ({
            _index: ctx.store.index,
            _id: h._id,
            _nested: { field: ih.path, offset: ih.ci!.offset[m.child] },
            _score: m.score,
            ...(wantSource ? { _source: ih.ci!.sources[m.child] } : {}),
          })),
        },
      };
    }
    const member = `"inner_hits":${JSON.stringify(out)}`;
    h.tail = h.tail ? `${h.tail},${member}` : member;
  }
}
