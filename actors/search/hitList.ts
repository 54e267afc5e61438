import { compareSortValues, filterSource, type MergedHit, type SearchRequest, type SortSpec, type SortValue } from '../shard/engine';
import type { ShardPage } from '../shard/pageCodec';
import { ByteWriter } from '../wire/byteWriter';
import { MinHeap } from '../wire/heap';

/**
 * One hit as a plain object (with its raw `_source` text when fetched): what callers outside the
 * page path use. `routing` when the doc has one; `version`, `seqNo`/`primaryTerm` when the search
 * asked for them.
 */
export type OutcomeHit = MergedHit & { source?: string; routing?: string; version?: number; seqNo?: number; primaryTerm?: number };

/**
 * The hits of a search as references into shard page replies: hit `i` is row `qRow[i]` of query
 * page `qPage[i]`, its source row `sRow[i]` of page `sPage[i]` (-1: none). Nothing is copied or
 * parsed per hit; {@link renderSearchBody} copies the bytes into the response.
 */
export class HitList {
  readonly pages: ShardPage[] = [];
  private readonly pageShard: number[] = [];
  /** The `_index` a rendered page's hits were written with (undefined: not rendered). */
  private readonly pageIndex: Array<string | undefined> = [];
  private qPage: number[] = [];
  private qRow: number[] = [];
  private sPage: number[] = [];
  private sRow: number[] = [];
  private objects?: OutcomeHit[];
  private extras?: Map<number, string>;

  get length(): number {
    return this.qRow.length;
  }

  /**
   * Registers a page of shard `shardIndex`; returns its number in this list. `index`: the `_index`
   * the shard rendered the page's hits with, when it did (see {@link renderedRuns}).
   */
  addPage(page: ShardPage, shardIndex: number, index?: string): number {
    this.pages.push(page);
    this.pageShard.push(shardIndex);
    this.pageIndex.push(page.rendered ? index : undefined);
    return this.pages.length - 1;
  }

  /**
   * The hits as runs of consecutive rows `[page, from, to)` of rendered pages, when every hit comes
   * rendered with its own source and the coordinator added nothing to any: the response then
   * carries each run as one byte range of its page. Undefined otherwise (or with no hit).
   */
  renderedRuns(indexNameOf: (shardIndex: number) => string): Array<[number, number, number]> | undefined {
    if (!this.length || this.extras?.size) return undefined;
    const runs: Array<[number, number, number]> = [];
    let last: [number, number, number] | undefined;
    for (let i = 0; i < this.length; i++) {
      const p = this.qPage[i];
      const r = this.qRow[i];
      if (this.sPage[i] !== p || this.sRow[i] !== r) return undefined;
      if (last && last[0] === p && last[2] === r) {
        last[2]++;
        continue;
      }
      const index = this.pageIndex[p];
      if (index === undefined || index !== indexNameOf(this.pageShard[p])) return undefined;
      runs.push((last = [p, r, r + 1]));
    }
    return runs;
  }

  /** Appends row `row` of page `p`, with the page's own source when it carries one. */
  push(p: number, row: number): number {
    this.qPage.push(p);
    this.qRow.push(row);
    const inline = row < this.pages[p].fetched;
    this.sPage.push(inline ? p : -1);
    this.sRow.push(inline ? row : -1);
    this.objects = undefined;
    return this.qRow.length - 1;
  }

  /** Appends rows `[from, to)` of page `p` (a `_shard_doc` walk takes a shard's page whole). */
  pushRows(p: number, from: number, to: number): void {
    const fetched = this.pages[p].fetched;
    for (let row = from; row < to; row++) {
      this.qPage.push(p);
      this.qRow.push(row);
      const inline = row < fetched;
      this.sPage.push(inline ? p : -1);
      this.sRow.push(inline ? row : -1);
    }
    this.objects = undefined;
  }

  /** Hit `i`'s source is row `row` of page `p`. */
  setSource(i: number, p: number, row: number): void {
    this.sPage[i] = p;
    this.sRow[i] = row;
    this.objects = undefined;
  }

  /** How many query pages (shards) the hits come from. */
  sourceShards(): number {
    return new Set(this.qPage).size;
  }

  /** The query page hit `i` comes from. */
  pageOf(i: number): number {
    return this.qPage[i];
  }

  /** Row of hit `i` in its query page. */
  row(i: number): number {
    return this.qRow[i];
  }

  hasSource(i: number): boolean {
    return this.sPage[i] >= 0;
  }

  shardIndex(i: number): number {
    return this.pageShard[this.qPage[i]];
  }

  /** Shard index of page `p`. */
  shardOfPage(p: number): number {
    return this.pageShard[p];
  }

  doc(i: number): number {
    return this.pages[this.qPage[i]].doc(this.qRow[i]);
  }

  id(i: number): string {
    return this.pages[this.qPage[i]].id(this.qRow[i]);
  }

  score(i: number): number | bigint | null {
    return this.pages[this.qPage[i]].score(this.qRow[i]);
  }

  sort(i: number): SortValue[] | undefined {
    return this.pages[this.qPage[i]].sort(this.qRow[i]);
  }

  source(i: number): string | undefined {
    const p = this.sPage[i];
    return p < 0 ? undefined : this.pages[p].source(this.sRow[i]);
  }

  /** Sort values of the last hit (the position a scroll or search_after continues from). */
  lastSort(): SortValue[] | undefined {
    return this.length ? this.sort(this.length - 1) : undefined;
  }

  /** The hits as objects (reindex, delete-by-query, tests); built once, on demand. */
  toObjects(): OutcomeHit[] {
    if (this.objects) return this.objects;
    const out: OutcomeHit[] = new Array(this.length);
    for (let i = 0; i < this.length; i++) {
      const q = this.pages[this.qPage[i]];
      const r = this.qRow[i];
      const sort = q.sort(r);
      const h: OutcomeHit = { doc: q.doc(r), _id: q.id(r), score: q.score(r) as number | null, ...(sort ? { sort } : {}), shardIndex: this.shardIndex(i) };
      if (this.sPage[i] >= 0) h.source = this.source(i);
      if (q.hasRouting) {
        const routing = q.routing(r);
        if (routing !== undefined) h.routing = routing;
      }
      if (q.hasVersion) h.version = q.version(r);
      if (q.hasSeqNo) {
        h.seqNo = q.seqNo(r);
        h.primaryTerm = q.primaryTerm(r);
      }
      out[i] = h;
    }
    return (this.objects = out);
  }

  // ---- rendering ----

  /** Appends hit `i` as ES renders it in `hits.hits` (see renderSearchBody). */
  writeHit(w: ByteWriter, i: number, prefix: Buffer, source: SearchRequest['source'], sortLength: number | undefined, docSortValues: boolean | undefined): void {
    const q = this.pages[this.qPage[i]];
    const r = this.qRow[i];
    w.bytes(prefix);
    w.bytes(q.b, q.idStart(r), q.idEnd(r));
    // ES's SearchHit order: _version, _seq_no, _primary_term, _score, then metadata fields (_routing), _source, sort
    if (q.hasVersion) {
      w.ascii(',"_version":');
      w.int(q.version(r)!);
    }
    if (q.hasSeqNo) {
      w.ascii(',"_seq_no":');
      w.int(q.seqNo(r)!);
      w.ascii(',"_primary_term":');
      w.int(q.primaryTerm(r)!);
    }
    const score = q.score(r);
    w.ascii(score === null ? ',"_score":null' : `,"_score":${score}`);
    if (q.hasRouting) {
      const a = q.routingStart(r);
      const e = q.routingEnd(r);
      if (a !== e) {
        w.ascii(',"_routing":');
        w.bytes(q.b, a, e);
      }
    }
    const sp = this.sPage[i];
    if (sp >= 0) {
      const s = this.pages[sp];
      const sr = this.sRow[i];
      if (source === undefined || (source.fetch && !source.includes.length && !source.excludes.length)) {
        w.ascii(',"_source":');
        w.bytes(s.b, s.sourceStart(sr), s.sourceEnd(sr));
      } else {
        const filtered = filterSource(s.source(sr), source);
        if (filtered !== undefined) {
          w.ascii(',"_source":');
          w.utf8(filtered);
        }
      }
    }
    if (q.hasExtra) {
      const [a, e] = q.fieldsRange(r);
      if (a !== e) {
        w.ascii(',"fields":');
        w.bytes(q.b, a, e);
      }
    }
    if (q.hasSort) {
      if (docSortValues) {
        w.ascii(',"sort":[');
        w.int(q.doc(r));
        w.u8(0x5d);
      }
      else {
        const k = sortLength === undefined ? q.sortKeys : Math.min(sortLength, q.sortKeys);
        if (sortLength === undefined || sortLength > 0) {
          w.ascii(',"sort":[');
          for (let j = 0; j < k; j++) {
            if (j) w.u8(0x2c);
            q.writeSortValue(w, r, j);
          }
          w.u8(0x5d);
        }
      }
    }
    if (q.hasExtra) {
      const [a, e] = q.tailRange(r);
      if (a !== e) {
        w.u8(0x2c);
        w.bytes(q.b, a, e);
      }
    }
    const more = this.extras?.get(i);
    if (more) w.utf8(`,${more}`);
    w.u8(0x7d);
  }

  /** Members the coordinator adds to hit `i` after everything else (`inner_hits`), as JSON text. */
  addExtra(i: number, members: string): void {
    (this.extras ??= new Map()).set(i, members);
  }

  /** Bytes of sources and ids referenced (a size estimate for the response buffer). */
  byteEstimate(): number {
    let n = 0;
    for (const p of this.pages) n += p.b.length;
    return n + 96 * this.length;
  }
}

interface Cursor {
  p: number;
  page: ShardPage;
  shardIndex: number;
  row: number;
}

/**
 * The merged page `[from, from + size)` of several shards' sorted hit lists, as ES's
 * SearchPhaseController: sort values (or score desc), then shard index, then doc id. The same order
 * as {@link reduceHits} (engine/reduce.ts), reading the columns in place.
 */
export function mergePages(
  list: HitList, shards: Array<{ p: number }>, req: { sort?: SortSpec[]; from: number; size: number },
  groupOf?: (page: ShardPage, row: number) => string,
): void {
  const from = Math.max(0, req.from);
  const sort = req.sort && req.sort.length ? req.sort : undefined;
  const cmp = (a: Cursor, b: Cursor): number => {
    if (sort) {
      for (let j = 0; j < sort.length; j++) {
        let c: number;
        if (a.page.plainNumeric(j) && b.page.plainNumeric(j)) {
          // Doubles of both pages: compared as numbers, as compareSortValues compares them.
          const x = a.page.plainNumber(a.row, j);
          const y = b.page.plainNumber(b.row, j);
          c = x < y ? -1 : x > y ? 1 : 0;
          if (sort[j].order === 'desc') c = -c;
        } else c = compareSortValues(a.page.sortValue(a.row, j), b.page.sortValue(b.row, j), sort[j]);
        if (c !== 0) return c;
      }
    } else {
      const x = a.page.score(a.row) ?? -Infinity;
      const y = b.page.score(b.row) ?? -Infinity;
      if (x > y) return -1;
      if (x < y) return 1;
    }
    return a.shardIndex - b.shardIndex || a.page.doc(a.row) - b.page.doc(b.row);
  };
  const heap = new MinHeap<Cursor>(cmp);
  for (const { p } of shards) {
    const page = list.pages[p];
    if (page.n > 0) heap.push({ p, page, shardIndex: list.shardOfPage(p), row: 0 });
  }
  // collapsing: only the best hit of each group counts (ES's CollapseTopFieldDocs.merge)
  const seen = groupOf ? new Set<string>() : null;
  for (let n = 0; n < from + req.size && heap.size > 0; ) {
    const c = heap.pop()!;
    const g = seen ? groupOf!(c.page, c.row) : '';
    if (!seen || !seen.has(g)) {
      seen?.add(g);
      if (n >= from) list.push(c.p, c.row);
      n++;
    }
    if (++c.row < c.page.n) heap.push(c);
  }
}

/** The collapse value of a page row (what its `fields` carry for the collapse field), as a group key. */
export function collapseGroupOf(field: string): (page: ShardPage, row: number) => string {
  return (page, row) => {
    const [a, e] = page.fieldsRange(row);
    if (a === e) return 'null';
    const fields = JSON.parse(page.b.toString('utf8', a, e)) as Record<string, unknown[]>;
    return JSON.stringify(fields[field]?.[0] ?? null);
  };
}
