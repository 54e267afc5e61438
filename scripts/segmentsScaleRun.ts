/**
 * The three phases of `scripts/segmentsScale.ts` (issue 19's "Must show" at scale), each against a
 * running node at `url`; every check goes through `check(name, ok, figures)`.
 */
import { execFileSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { bulkLoad, call, firstWrites, idleHeap, json, MB, mb, scrollCheck, type LoadResult, type Write } from './cli/scaleClient';
import type { ScaleDocs } from './cli/scaleDocs';

export type Check = (name: string, ok: boolean, figures: string) => void;

export interface PhaseContext {
  url: string;
  dataDir: string;
  docs: ScaleDocs;
  check: Check;
  log: (line: string) => void;
  batch: number;
  conc: number;
  shards: number;
  /** How long an idle heap is sampled. */
  settleMs: number;
}

export const MAPPINGS = {
  properties: { i: { type: 'long' }, v: { type: 'long' }, tag: { type: 'keyword' }, f: { type: 'double' }, title: { type: 'text' }, note: { type: 'text' }, body: { type: 'text' } },
};

export const load = () => loadavg().map((x) => x.toFixed(2)).join(', ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function createIndex(c: PhaseContext, index: string): Promise<void> {
  await json(c.url, 'PUT', `/${index}`, { settings: { number_of_shards: c.shards, number_of_replicas: 0 }, mappings: MAPPINGS });
}

/** Bytes under a directory (du). */
export function du(dir: string): number {
  try {
    return Number(execFileSync('du', ['-sb', dir], { encoding: 'utf8' }).split('\t')[0]);
  } catch {
    return NaN;
  }
}

/** The index's copies on disk (DATA_DIR/indices/<uuid>). */
async function indexDir(c: PhaseContext, index: string): Promise<string> {
  const s = await json<Record<string, { settings: { index: { uuid: string } } }>>(c.url, 'GET', `/${index}/_settings`);
  return join(c.dataDir, 'indices', Object.values(s)[0].settings.index.uuid);
}

interface IndexFigures {
  docs: number;
  deleted: number;
  store: number;
  segments: number;
}

async function indexFigures(c: PhaseContext, index: string): Promise<IndexFigures> {
  const s = await json(c.url, 'GET', `/${index}/_stats/docs,store,segments`);
  const p = s._all.primaries;
  return { docs: p.docs.count, deleted: p.docs.deleted, store: p.store.size_in_bytes, segments: p.segments.count };
}

/** A progress line every tenth of the load. */
const progress = (c: PhaseContext, what: string, total: number) => {
  const start = Date.now();
  let next = 0;
  return (r: LoadResult) => {
    if (r.acked < next) return;
    next += Math.max(1, Math.round(total / 10));
    const s = Math.max(0.001, (Date.now() - start) / 1000);
    c.log(`  ${what}: ${r.acked.toLocaleString('en-US')} / ${total.toLocaleString('en-US')} acknowledged (${(r.acked / s).toFixed(0)} docs/s, ${(r.bytes / MB / s).toFixed(1)} MB/s of source), load ${load()}`);
  };
};

/** (a) load N docs, heap under half the limit, scroll every doc back byte-identical, count a match exactly. */
export async function loadPhase(c: PhaseContext, n: number): Promise<void> {
  await createIndex(c, 'big');
  const h0 = await idleHeap(c.url, c.settleMs);
  c.log(`load: ${n.toLocaleString('en-US')} docs of ~${c.docs.docBytes} B into [big] (${c.batch} per _bulk, ${c.conc} in flight)`);
  const r = await bulkLoad({ url: c.url, index: 'big', docs: c.docs, writes: firstWrites(0, n), batch: c.batch, conc: c.conc, tick: progress(c, 'load', n) });
  c.check('load: every item acknowledged', r.acked === n && !r.failures.length,
    `${r.acked.toLocaleString('en-US')} of ${n.toLocaleString('en-US')} acknowledged, ${mb(r.bytes)} of source in ${(r.ms / 1000).toFixed(0)} s (${(r.bytes / MB / (r.ms / 1000)).toFixed(1)} MB/s)${r.failures.length ? `; ${r.failures.slice(0, 3).join('; ')}` : ''}`);
  if (r.failures.length) return;
  await json(c.url, 'POST', '/big/_refresh');
  const h = await idleHeap(c.url, c.settleMs);
  c.check('load: heap used under half the limit', h.used < h.max / 2,
    `${mb(h.used)} of ${mb(h.max)} (smallest of ${h.samples} samples over ${c.settleMs / 1000} s idle; ${mb(h0.used)} before the load: ${((h.used - h0.used) / n).toFixed(1)} B/doc; source was ${(r.bytes / h.max).toFixed(2)}× the limit)`);
  const f = await indexFigures(c, 'big');
  const disk = du(await indexDir(c, 'big'));
  c.log(`  [big]: ${f.segments} segments, store ${mb(f.store)}, copy dirs ${mb(disk)} (${(disk / r.bytes).toFixed(2)}× source), nats store ${mb(du(join(c.dataDir, 'nats')))}`);
  const s = await scrollCheck(c.url, 'big', c.docs, n, (i) => c.docs.source(i));
  c.check('load: scroll returns every doc once, source byte-identical', s.hits === n && s.distinct === n && !s.duplicates && !s.mismatched.length && !s.unknown,
    `${s.hits.toLocaleString('en-US')} hits, ${s.distinct.toLocaleString('en-US')} distinct, ${s.duplicates} duplicates, ${s.mismatched.length} mismatched ${s.mismatched.join(',')}, ${s.unknown} unknown; ${(s.hits / (s.ms / 1000)).toFixed(0)} docs/s`);
  const cnt = await json<{ count: number }>(c.url, 'POST', '/big/_count', { query: { match: { body: 'zebra' } } });
  c.check('load: match count exact', cnt.count === r.zebras, `match body:zebra counts ${cnt.count}, the loader sent ${r.zebras}`);
}

/** Version of doc i after `updates` round-robin updates of `d` docs. */
const finalVersion = (i: number, d: number, updates: number) => (i < updates ? Math.floor((updates - 1 - i) / d) + 1 : 0);

/** Update k is of doc k % d; `part` of `parts`: only docs i ≡ part (mod parts). */
function* roundRobin(d: number, updates: number, part: number, parts: number): Generator<Write> {
  for (let k = 0; k < updates; k++) if (k % d % parts === part) yield { i: k % d, v: Math.floor(k / d) + 1 };
}

/**
 * The updates, `conc` loads at once over disjoint docs: two `_bulk` requests in flight that update
 * the same doc may apply in either order, so each doc's writes stay in one request stream.
 */
async function updateAll(c: PhaseContext, d: number, updates: number): Promise<LoadResult> {
  const parts = Math.min(c.conc, d);
  const tick = progress(c, 'updates', updates);
  const total: LoadResult = { acked: 0, sent: 0, bytes: 0, zebras: 0, failures: [], ms: 0 };
  const t = Date.now();
  const rs = await Promise.all(Array.from({ length: parts }, (_, p) => {
    let seen = 0;
    return bulkLoad({
      url: c.url, index: 'upd', docs: c.docs, writes: roundRobin(d, updates, p, parts), batch: c.batch, conc: 1,
      tick: (r) => {
        total.acked += r.acked - seen;
        seen = r.acked;
        tick(total);
      },
    });
  }));
  for (const r of rs) {
    total.sent += r.sent;
    total.bytes += r.bytes;
    total.failures.push(...r.failures);
  }
  total.ms = Date.now() - t;
  return total;
}

/** (b) d docs updated `updates` times in all: heap growth, then a force merge reclaims every deleted doc. */
export async function updatePhase(c: PhaseContext, d: number, updates: number, retentionMs: number): Promise<void> {
  await createIndex(c, 'upd');
  const first = await bulkLoad({ url: c.url, index: 'upd', docs: c.docs, writes: firstWrites(0, d), batch: c.batch, conc: c.conc });
  if (first.failures.length) throw new Error(`[upd] load: ${first.failures[0]}`);
  await json(c.url, 'POST', '/upd/_refresh');
  const h0 = await idleHeap(c.url, c.settleMs);
  c.log(`updates: ${updates.toLocaleString('en-US')} updates of ${d} docs (${(updates / d).toFixed(0)} each) into [upd]`);
  const r = await updateAll(c, d, updates);
  const lastAck = Date.now();
  c.check('updates: every item acknowledged', r.acked === updates && !r.failures.length,
    `${r.acked.toLocaleString('en-US')} in ${(r.ms / 1000).toFixed(0)} s (${(r.acked / (r.ms / 1000)).toFixed(0)} docs/s)${r.failures.length ? `; ${r.failures.slice(0, 3).join('; ')}` : ''}`);
  await json(c.url, 'POST', '/upd/_refresh');
  const h1 = await idleHeap(c.url, c.settleMs);
  c.check('updates: heap grew by < 64 MB', h1.used - h0.used < 64 * MB, `${mb(h0.used)} before, ${mb(h1.used)} after (+${mb(h1.used - h0.used)}; idle samples)`);
  const before = await indexFigures(c, 'upd');
  c.log(`  [upd] before the force merge: ${before.docs} docs, ${before.deleted.toLocaleString('en-US')} deleted, ${before.segments} segments, store ${mb(before.store)}`);
  // the same docs (their final versions) loaded once, as the baseline
  await createIndex(c, 'upd-base');
  const base = await bulkLoad({ url: c.url, index: 'upd-base', docs: c.docs, writes: Array.from({ length: d }, (_, i) => ({ i, v: finalVersion(i, d, updates) })), batch: c.batch, conc: c.conc });
  if (base.failures.length) throw new Error(`[upd-base] load: ${base.failures[0]}`);
  await json(c.url, 'POST', '/upd-base/_flush');
  // deletions younger than indices.merge.deletes_retention stay in merged segments (contexts on other copies)
  const wait = Math.max(0, retentionMs + 1500 - (Date.now() - lastAck));
  if (wait) c.log(`  waiting ${(wait / 1000).toFixed(0)} s: indices.merge.deletes_retention keeps deletions younger than ${retentionMs / 1000} s`);
  await sleep(wait);
  const tf = Date.now();
  const fm = await call(c.url, 'POST', '/upd/_forcemerge?max_num_segments=1');
  const fmMs = Date.now() - tf;
  const after = await indexFigures(c, 'upd');
  const baseF = await indexFigures(c, 'upd-base');
  c.check('forcemerge: docs.deleted 0', fm.status === 200 && after.deleted === 0 && after.docs === d && after.segments === c.shards,
    `HTTP ${fm.status} in ${(fmMs / 1000).toFixed(1)} s; ${after.docs} docs, ${after.deleted} deleted, ${after.segments} segments`);
  const [diskUpd, diskBase] = [du(await indexDir(c, 'upd')), du(await indexDir(c, 'upd-base'))];
  c.check('forcemerge: store ≤ 3× the same docs loaded once', after.store <= 3 * baseF.store,
    `store ${mb(after.store)} vs ${mb(baseF.store)} = ${(after.store / baseF.store).toFixed(2)}× (copy dirs ${mb(diskUpd)} vs ${mb(diskBase)})`);
  const s = await scrollCheck(c.url, 'upd', c.docs, d, (i) => c.docs.source(i, finalVersion(i, d, updates)));
  c.check('updates: every doc at its last version', s.distinct === d && s.hits === d && !s.mismatched.length && !s.unknown,
    `${s.distinct} distinct of ${d}, ${s.mismatched.length} not at their last version ${s.mismatched.join(',')}`);
}

export interface Killable {
  kill(): Promise<void>;
  restart(): Promise<{ url: string }>;
}

/**
 * (c) a load into [crash], the node `kill -9`ed `afterMs` into it, restarted: within 30 s it
 * answers with every acknowledged doc (and the other indices whole), nothing that was not sent.
 */
export async function killPhase(c: PhaseContext, node: Killable, afterMs: number, maxDocs: number, others: Record<string, number>): Promise<string> {
  await createIndex(c, 'crash');
  const acked = new Uint8Array(maxDocs);
  const sent = new Uint8Array(maxDocs);
  let killed = false;
  c.log(`kill: loading [crash], kill -9 ${(afterMs / 1000).toFixed(1)} s after the first acknowledged batch`);
  let firstAck: () => void = () => undefined;
  const acking = new Promise<void>((r) => (firstAck = r));
  const loading = bulkLoad({
    url: c.url, index: 'crash', docs: c.docs, writes: firstWrites(0, maxDocs), batch: Math.min(c.batch, 1000), conc: c.conc, strict: false,
    onAck: (w) => (acked[w.i] = 1), onSend: (w) => (sent[w.i] = 1), stop: () => killed, tick: () => firstAck(),
  });
  await Promise.race([acking.then(() => sleep(afterMs)), loading]);
  const ackedAtKill = acked.reduce((n, x) => n + x, 0);
  killed = true;
  await node.kill();
  const r = await loading;
  const ackedN = acked.reduce((n, x) => n + x, 0);
  c.log(`  killed with ${ackedN.toLocaleString('en-US')} acknowledged (${ackedAtKill.toLocaleString('en-US')} when the kill was sent), ${r.sent.toLocaleString('en-US')} sent${r.sent >= maxDocs ? ' (the load had ended: raise --kill-docs)' : ''}`);
  const t = Date.now();
  const { url } = await node.restart();
  c.url = url;
  const listening = Date.now() - t;
  let answered = NaN;
  let counts: Record<string, number> = {};
  const want = { ...others, crash: ackedN };
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(200)) {
    counts = {};
    for (const idx of Object.keys(want)) {
      const a = await call(c.url, 'GET', `/${idx}/_count`).catch(() => undefined);
      counts[idx] = a?.status === 200 ? (JSON.parse(a.text) as { count: number }).count : -1;
    }
    if (Object.entries(want).every(([k, v]) => counts[k] >= v)) {
      answered = Date.now() - t;
      break;
    }
  }
  c.check('kill -9: restarted node answers within 30 s with every acknowledged doc', answered <= 30_000,
    `listening after ${(listening / 1000).toFixed(1)} s, every count reached after ${(answered / 1000).toFixed(1)} s: ${Object.entries(counts).map(([k, v]) => `${k} ${v}/${want[k as keyof typeof want]}`).join(', ')}`);
  const s = await scrollCheck(c.url, 'crash', c.docs, maxDocs, (i) => (sent[i] ? c.docs.source(i) : undefined));
  let lost = 0;
  for (let i = 0; i < maxDocs; i++) if (acked[i] && !s.seen[i]) lost++;
  c.check('kill -9: no acknowledged doc lost, none invented', lost === 0 && !s.unknown && !s.duplicates && !s.mismatched.length,
    `${s.distinct.toLocaleString('en-US')} docs back (${(s.distinct - ackedN).toLocaleString('en-US')} of the unacknowledged in-flight ones), ${lost} acknowledged missing, ${s.unknown} never sent, ${s.duplicates} duplicates, ${s.mismatched.length} mismatched`);
  for (const [idx, n] of Object.entries(others)) c.check(`kill -9: [${idx}] whole after the restart`, counts[idx] === n, `${counts[idx]} of ${n}`);
  return url;
}
