/**
 * Test support for segments: LeafData over an in-memory ShardStore (the buffer at flush), random
 * stores with every column shape, and a deep comparison of a disk segment against a store.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import type { LoggedOp } from '../../../../../actors/shard/engine/types';
import type { IndexBuffer } from '../../../../../actors/shard/engine/index/indexBuffer';
import { analyze } from '../../../../../actors/shard/engine/index/analysis';
import type { ColumnView, PositionList, PostingRef, TextView } from '../../../../../actors/shard/engine/index/columnViews';
import { compareStrings } from '../../../../../actors/shard/engine/base/bits';
import type { LeafData } from '../../../../../actors/shard/engine/segments';
import { rng } from '../../../../support/rng';

export const MAPPING = {
  properties: {
    tag: { type: 'keyword' }, title: { type: 'text' }, body: { type: 'text' }, n: { type: 'long' }, u: { type: 'unsigned_long' },
    d: { type: 'double' }, b: { type: 'boolean' }, ts: { type: 'date' }, ns: { type: 'date_nanos' }, i: { type: 'integer' },
  },
};

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'éclair', 'über', 'ζήτα', '日本', 'x𝒜y', 'zulu'];
const TAGS = ['red', 'green', 'blue', 'Blue', 'b\u00e9', 'be', '\u{1F600}', '\uFF21', 'a\u0000b', '', 'x'.repeat(40)];

export function newStore(): ShardStore {
  return new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(MAPPING), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
}

/** A random source object (every field optional; some multi-valued). */
export function randomDoc(r: () => number, i: number): Record<string, unknown> {
  const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)];
  const words = (k: number) => Array.from({ length: k }, () => pick(WORDS)).join(' ');
  const doc: Record<string, unknown> = { k: i };
  if (r() < 0.8) doc.tag = r() < 0.2 ? [pick(TAGS), pick(TAGS), pick(TAGS)] : pick(TAGS);
  if (r() < 0.85) doc.title = r() < 0.1 ? [words(3), words(2)] : words(1 + Math.floor(r() * 12));
  if (r() < 0.3) doc.body = r() < 0.1 ? '' : words(20 + Math.floor(r() * 30));
  if (r() < 0.7) doc.n = r() < 0.1 ? `${BigInt(2) ** 60n + BigInt(i)}` : r() < 0.1 ? [Math.floor(r() * 100), -5, Math.floor(r() * 1e6)] : Math.floor((r() - 0.5) * 1e9);
  if (r() < 0.2) doc.u = r() < 0.5 ? '18446744073709551615' : Math.floor(r() * 1000);
  if (r() < 0.5) doc.d = r() < 0.1 ? [r(), -r()] : r() * 1000;
  if (r() < 0.3) doc.b = r() < 0.5;
  if (r() < 0.5) doc.ts = new Date(1.6e12 + Math.floor(r() * 1e10)).toISOString();
  if (r() < 0.3) doc.ns = r() < 0.2 ? ['2024-01-01T00:00:00.123456789Z', '2023-06-01T00:00:00.000000001Z'] : `2024-02-0${1 + Math.floor(r() * 9)}T10:00:00.${String(Math.floor(r() * 1e9)).padStart(9, '0')}Z`;
  if (r() < 0.2) doc.i = Math.floor(r() * 100);
  return doc;
}

/** n random index ops (some updates of earlier ids), some deletes, some routings, sequenced by a store. */
export function randomOps(seed: number, n: number, opts: { updates?: number; deletes?: number; idPrefix?: string } = {}): LoggedOp[] {
  const r = rng(seed);
  const s = newStore();
  const ids: string[] = [];
  const ops: LoggedOp[] = [];
  const log = (o: ReturnType<ShardStore['write']>) => {
    if (!o.ok) throw new Error(o.error.reason);
    ops.push(o.logged!);
  };
  for (let i = 0; i < n; i++) {
    const update = ids.length > 0 && r() < (opts.updates ?? 0.1);
    const id = update ? ids[Math.floor(r() * ids.length)] : `${opts.idPrefix ?? ''}${i}${r() < 0.05 ? '\u00e9' : ''}`;
    if (!update) ids.push(id);
    log(s.write({ op: 'index', id, source: JSON.stringify(randomDoc(r, i)), ...(r() < 0.1 ? { routing: `r${i % 7}` } : {}) }));
    if (r() < (opts.deletes ?? 0.05)) log(s.write({ op: 'delete', id: r() < 0.5 ? ids[Math.floor(r() * ids.length)] : `gone${i}` }));
  }
  return ops;
}

/** A fresh store that applied `ops` (their seqNos and versions kept), refreshed. */
export function storeOf(ops: LoggedOp[]): ShardStore {
  const s = newStore();
  for (const op of ops) s.applyLogged(op);
  s.refresh();
  return s;
}

/** A store with n random ops (see randomOps). */
export function randomStore(seed: number, n: number, opts: { updates?: number; deletes?: number; idPrefix?: string } = {}): ShardStore {
  return storeOf(randomOps(seed, n, opts));
}

/** Text fields given positions computed from the sources (as the buffer will keep them). */
export function positionsOf(buf: IndexBuffer, path: string, maxDoc: number): Map<string, PositionList> {
  const acc = new Map<string, { starts: number[]; pos: number[] }>();
  for (let d = 0; d < maxDoc; d++) {
    const v = (JSON.parse(buf.source(d)) as Record<string, unknown>)[path];
    if (v === undefined) continue;
    const per = new Map<string, number[]>();
    let at = 0;
    for (const s of Array.isArray(v) ? v : [v]) {
      const toks = analyze(s as string);
      toks.forEach((t, k) => (per.get(t) ?? per.set(t, []).get(t)!).push(at + k));
      at += toks.length + 100;
    }
    for (const [t, ps] of per) {
      const a = acc.get(t) ?? acc.set(t, { starts: [], pos: [] }).get(t)!;
      a.starts.push(a.pos.length);
      a.pos.push(...ps);
    }
  }
  const out = new Map<string, PositionList>();
  for (const [t, a] of acc) out.set(t, { starts: Uint32Array.from([...a.starts, a.pos.length]), pos: Uint32Array.from(a.pos) });
  return out;
}

/** The buffer of a one-segment store as a LeafData (its first maxDoc docs), optionally with positions on text fields. */
export function storeLeaf(store: ShardStore, opts: { maxDoc?: number; positions?: string[] } = {}): LeafData {
  const b = store.activeBuffer();
  const maxDoc = opts.maxDoc ?? b.maxDoc;
  const withPos = new Map<string, TextView>();
  for (const path of opts.positions ?? []) {
    const col = b.column(path) as TextView | undefined;
    if (!col) continue;
    const pos = positionsOf(b, path, b.maxDoc);
    withPos.set(path, Object.assign(Object.create(col) as TextView, { positions: (t: string) => pos.get(t) }));
  }
  return {
    maxDoc,
    idOf: (d) => b.idOf(d),
    seqNoOf: (d) => b.seqNoOf(d),
    versionOf: (d) => b.versionOf(d),
    routingOf: (d) => b.routingOf(d),
    sourceOf: (d) => b.sourceOf(d),
    fieldPaths: () => b.fieldPaths(),
    column: (p) => withPos.get(p) ?? b.column(p),
    tombstones: () => b.tombstones(),
  };
}

/** A temp dir for a test file, removed by the returned cleanup. */
export function tempDir(): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'seg-test-'));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Postings as plain arrays, docs < maxDoc. */
export function plain(ref: PostingRef | undefined, maxDoc = Infinity): { docs: number[]; freqs: number[] } {
  if (ref === undefined) return { docs: [], freqs: [] };
  if (typeof ref === 'number') return ref < maxDoc ? { docs: [ref], freqs: [1] } : { docs: [], freqs: [] };
  const docs: number[] = [], freqs: number[] = [];
  for (let i = 0; i < ref.len && ref.docs[i] < maxDoc; i++) {
    docs.push(ref.docs[i]);
    freqs.push(ref.freqs ? ref.freqs[i] : 1);
  }
  return { docs, freqs };
}

/** Terms of a column, sorted in code point order. */
export function termsOf(col: ColumnView): string[] {
  const out: string[] = [];
  if (col.kind === 'keyword') col.forEachTerm((t) => void out.push(t));
  else if (col.kind === 'text') col.forEachTerm((t) => void out.push(t));
  return out.sort(compareStrings);
}
