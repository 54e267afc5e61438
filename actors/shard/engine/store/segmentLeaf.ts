/**
 * An immutable segment on disk as a shard segment: the file's data (segments/reader.ts) plus the
 * deletions made to it since it was written (deletions.ts), and the search-time caches of its docs.
 */
import type { FieldType, SearcherRef } from '../types';
import type { IndexMapping } from '../index/mapping';
import type { ShardSettings } from '../index/storeView';
import type { ColumnView } from '../index/columnViews';
import type { IdEntry } from '../index/indexBuffer';
import { SearchCaches } from '../index/caches';
import { docValuesOf } from '../index/fieldCodecs';
import type { DiskSegment, SegmentMeta } from '../segments';
import { Deletions } from './deletions';
import type { Leaf } from './leaf';

export interface SegmentLeafOptions {
  index: string;
  shardId: number;
  mapping: IndexMapping;
  settings: () => ShardSettings;
}

export class SegmentLeaf implements Leaf {
  readonly index: string;
  readonly shardId: number;
  readonly mapping: IndexMapping;
  readonly settings: () => ShardSettings;
  readonly caches = new SearchCaches();
  readonly name: string;
  readonly maxDoc: number;
  readonly minSeqNo: number;
  readonly maxSeqNo: number;
  /** Searchers and contexts using it; its file is deleted once it is out of the shard and unused. */
  refs = 0;
  /** A merge is reading it. */
  merging = false;

  constructor(readonly data: DiskSegment, o: SegmentLeafOptions, readonly deletions: Deletions = new Deletions(data.maxDoc)) {
    this.index = o.index;
    this.shardId = o.shardId;
    this.mapping = o.mapping;
    this.settings = o.settings;
    this.name = data.meta.name;
    this.maxDoc = data.maxDoc;
    this.minSeqNo = this.maxDoc ? data.meta.minSeqNo : NaN;
    this.maxSeqNo = this.maxDoc ? data.meta.maxSeqNo : NaN;
  }

  get meta(): SegmentMeta {
    return this.data.meta;
  }

  // ---- Leaf ----

  seqNoOf(doc: number): number {
    return this.data.seqNoOf(doc);
  }

  versionOf(doc: number): number {
    return this.data.versionOf(doc);
  }

  routingOf(doc: number): string | undefined {
    return this.data.routingOf(doc);
  }

  hasRouting(): boolean {
    return this.data.hasRouting();
  }

  source(doc: number): string {
    return this.data.source(doc);
  }

  maxDocAt(seqNo: number): number {
    const s = this.data.seqNos;
    let lo = 0, hi = this.maxDoc;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (s[m] <= seqNo) lo = m + 1;
      else hi = m;
    }
    return lo;
  }

  localDoc(docId: number): number {
    const s = this.data.seqNos;
    let lo = 0, hi = this.maxDoc;
    while (lo < hi) {
      const m = (lo + hi) >>> 1;
      if (s[m] < docId) lo = m + 1;
      else hi = m;
    }
    return lo < this.maxDoc && s[lo] === docId ? lo : -1;
  }

  entry(id: string): IdEntry | undefined {
    if (!this.data.mayContainId(id)) return undefined;
    const docs = this.data.docsOfId(id);
    const tomb = this.data.tombstoneOf(id);
    if (!docs.length && !tomb) return undefined;
    const doc = docs.length ? docs[docs.length - 1] : undefined;
    return { ...(doc !== undefined ? { doc, live: !this.deletions.isDeleted(doc) } : {}), ...(tomb ? { tomb } : {}) };
  }

  markDeleted(doc: number, seqNo: number): void {
    this.deletions.add(doc, seqNo);
  }

  deletionsUpTo(seqNo: number): { docs: Int32Array; seqNos: Float64Array } {
    return this.deletions.upTo(seqNo);
  }

  sourceBytes(): number {
    return this.data.meta.sourceBytes;
  }

  // ---- StoreView ----

  idOf(doc: number): string {
    return this.data.idOf(doc);
  }

  docId(doc: number): number {
    return this.data.seqNoOf(doc);
  }

  column(path: string): ColumnView | undefined {
    return this.data.column(path);
  }

  deletedCount(s: SearcherRef): number {
    return this.deletions.countUpTo(s.seqNo);
  }

  visible(s: SearcherRef, doc: number): boolean {
    const live = this.deletions.liveAt(s.seqNo);
    return live === null || live.has(doc);
  }

  lookup(s: SearcherRef, id: string): number | undefined {
    if (!this.data.mayContainId(id)) return undefined;
    const docs = this.data.docsOfId(id);
    for (let i = docs.length - 1; i >= 0; i--) {
      const d = docs[i];
      if (d < s.maxDoc) return this.visible(s, d) ? d : undefined;
    }
    return undefined;
  }

  fieldType(field: string): FieldType | undefined {
    return this.mapping.fieldType(field);
  }

  values(field: string, doc: number): Array<number | bigint | string | boolean> {
    const col = this.data.column(field);
    if (col?.kind === 'numeric') return col.natural(doc);
    if (col?.kind === 'keyword') return docValuesOf(this.mapping.fieldType(field), col.values(doc));
    return [];
  }
}
