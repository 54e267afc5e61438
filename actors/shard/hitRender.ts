/**
 * Hits written by the shard as the search response will carry them (ES's SearchHit JSON), so the
 * coordinator sends a page's bytes as they are: no object, no copy and no work per hit on the way
 * out (actors/search/hitList.ts finds the runs, the edge writes them with one `writev`).
 *
 * The text must be, byte for byte, what the coordinator's own rendering (HitList.writeHit) makes of
 * the same page: `test/unit/search/pagePath/pagePath.test.ts` compares both on random corpora.
 */
import type { ByteWriter } from '../wire/byteWriter';
import type { ShardHit, SortValue } from './engine/types';

/**
 * What the coordinator asks the shard to render hits with, besides the hits: the index name of
 * `_index`, how many sort values to show (a scroll hides its internal tiebreaker) and whether the
 * sort is shown as the doc id (a `_doc` scroll). Asked only when `_source` goes out as stored.
 */
export interface RenderSpec {
  index: string;
  sortLength?: number;
  docSortValues?: boolean;
}

/** A `_source` as the shard holds it: text (the indexing buffer) or UTF-8 bytes (a segment on disk). */
export type SourceBytes = string | Uint8Array;

/** Per-hit metadata columns of a page (pageCodec.ts HitMeta), as the renderer reads them. */
export interface RenderMeta {
  routing?: Array<string | undefined>;
  version?: ArrayLike<number>;
  seqNo?: ArrayLike<number>;
  primaryTerm?: ArrayLike<number>;
}

/** The JSON text of a sort value, as the page's columns write it back (non-finite numbers are null). */
export function sortValueText(v: SortValue | undefined): string {
  if (typeof v === 'number') return Number.isFinite(v) ? String(v) : 'null';
  if (typeof v === 'bigint') return String(v);
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return 'null';
}

/** Appends a source (text or bytes) and returns its length in bytes. */
export function writeSource(w: ByteWriter, s: SourceBytes): number {
  if (typeof s === 'string') return w.utf8(s);
  const n = s.length;
  w.ensure(n);
  w.buf.set(s, w.pos);
  w.pos += n;
  return n;
}

/**
 * Writes hits `[0, sources.length)` each followed by a comma, recording where each starts
 * (`hitAt[i]`, relative to `base`) and where its `_source` lies (`srcAt[2i]`, `srcAt[2i+1]`).
 *
 * @param ids each hit's `_id` as a JSON string
 * @param scored whether the page carries scores (else every `_score` is null)
 */
export function writeRenderedHits(
  w: ByteWriter, base: number, hits: readonly ShardHit[], ids: readonly string[], sources: readonly SourceBytes[],
  meta: RenderMeta | undefined, scored: boolean, spec: RenderSpec, hitAt: Uint32Array, srcAt: Uint32Array,
): void {
  const prefix = Buffer.from(`{"_index":${JSON.stringify(spec.index)},"_id":`);
  const keys = hits.length && hits[0].sort ? hits[0].sort.length : 0;
  const hasSort = hits.length > 0 && hits[0].sort !== undefined;
  const shown = spec.sortLength === undefined ? keys : Math.min(spec.sortLength, keys);
  const showSort = hasSort && (spec.docSortValues || spec.sortLength === undefined || spec.sortLength > 0);
  const routing = meta?.routing;
  for (let i = 0; i < sources.length; i++) {
    const h = hits[i];
    hitAt[i] = w.pos - base;
    w.bytes(prefix);
    w.utf8(ids[i]);
    if (meta?.version) {
      w.ascii(',"_version":');
      w.int(meta.version[i]);
    }
    if (meta?.seqNo) {
      w.ascii(',"_seq_no":');
      w.int(meta.seqNo[i]);
      w.ascii(',"_primary_term":');
      w.int(meta.primaryTerm?.[i] ?? 1);
    }
    const s = scored ? h.score : null;
    w.ascii(s === null || !Number.isFinite(s) ? ',"_score":null' : `,"_score":${s}`);
    const r = routing?.[i];
    if (r !== undefined) {
      w.ascii(',"_routing":');
      w.utf8(JSON.stringify(r));
    }
    w.ascii(',"_source":');
    srcAt[2 * i] = w.pos - base;
    writeSource(w, sources[i]);
    srcAt[2 * i + 1] = w.pos - base;
    if (h.fields) {
      w.ascii(',"fields":');
      w.utf8(h.fields);
    }
    if (showSort) {
      w.ascii(',"sort":[');
      if (spec.docSortValues) w.int(h.doc);
      else {
        for (let j = 0; j < shown; j++) {
          if (j) w.u8(0x2c);
          const v = h.sort![j];
          if (typeof v === 'number' && Number.isSafeInteger(v)) w.int(v);
          else if (typeof v === 'string') w.utf8(JSON.stringify(v));
          else w.ascii(sortValueText(v));
        }
      }
      w.u8(0x5d);
    }
    if (h.tail) {
      w.u8(0x2c);
      w.utf8(h.tail);
    }
    w.u8(0x7d);
    w.u8(0x2c);
  }
  hitAt[sources.length] = w.pos - base;
}
