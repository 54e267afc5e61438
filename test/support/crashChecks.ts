/**
 * What the kill -9 tests of segments (test/int/segments/) check after a restart: every
 * acknowledged document and no other (count, a scroll over all of them with their sources), and a
 * copy directory holding exactly the files its newest commit names.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export type Model = Map<string, Record<string, unknown>>;

export async function http<T = any>(url: string, method: string, path: string, body?: unknown): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const nd = typeof body === 'string';
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': nd ? 'application/x-ndjson' : 'application/json' },
    body: body === undefined ? undefined : nd ? (body as string) : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 500)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** `_bulk` of index/delete ops that must all be acknowledged; the model follows. */
export async function bulk(url: string, index: string, model: Model, ops: Array<[string, Record<string, unknown> | null]>): Promise<void> {
  const body = ops.map(([id, src]) => (src ? `{"index":{"_id":"${id}"}}\n${JSON.stringify(src)}\n` : `{"delete":{"_id":"${id}"}}\n`)).join('');
  const r = await http<{ errors: boolean; items: Array<Record<string, { status: number }>> }>(url, 'POST', `/${index}/_bulk`, body);
  const bad = r.items.filter((it) => Object.values(it)[0].status >= 300 && Object.values(it)[0].status !== 404);
  if (bad.length) throw new Error(`bulk items failed: ${JSON.stringify(bad.slice(0, 3))}`);
  for (const [id, src] of ops) {
    if (src) model.set(id, src);
    else model.delete(id);
  }
}

/** Every doc of the index by scroll: ids seen twice, and the sources by id. */
export async function scrollAll(url: string, index: string): Promise<{ docs: Model; duplicates: string[] }> {
  const docs: Model = new Map();
  const duplicates: string[] = [];
  let page = await http(url, 'POST', `/${index}/_search?scroll=1m`, { size: 500, sort: ['_doc'] });
  for (;;) {
    const hits = page.hits.hits as Array<{ _id: string; _source: Record<string, unknown> }>;
    if (!hits.length) break;
    for (const h of hits) {
      if (docs.has(h._id)) duplicates.push(h._id);
      docs.set(h._id, h._source);
    }
    page = await http(url, 'POST', '/_search/scroll', { scroll: '1m', scroll_id: page._scroll_id });
  }
  await http(url, 'DELETE', '/_search/scroll', { scroll_id: page._scroll_id });
  return { docs, duplicates };
}

/**
 * Differences between the index and the model (empty when every acknowledged doc is there, and
 * nothing else). `inFlight`: writes sent but never acknowledged (the node died first), which may be
 * there or not, but only whole, with the source sent, once.
 */
export async function differences(url: string, index: string, model: Model, inFlight: Model = new Map()): Promise<string[]> {
  await http(url, 'POST', `/${index}/_refresh`);
  const out: string[] = [];
  const { count } = await http<{ count: number }>(url, 'GET', `/${index}/_count`);
  const { docs, duplicates } = await scrollAll(url, index);
  const landed = [...inFlight.keys()].filter((id) => docs.has(id));
  if (count !== model.size + landed.length) out.push(`_count ${count}, acknowledged ${model.size} (+${landed.length} unacknowledged that landed)`);
  for (const id of landed) {
    if (JSON.stringify(docs.get(id)) !== JSON.stringify(inFlight.get(id))) out.push(`unacknowledged ${id} is ${JSON.stringify(docs.get(id))}, sent ${JSON.stringify(inFlight.get(id))}`);
    docs.delete(id);
  }
  if (duplicates.length) out.push(`returned twice: ${duplicates.slice(0, 5).join(',')}`);
  for (const [id, src] of model) {
    if (!docs.has(id)) out.push(`lost ${id}`);
    else if (JSON.stringify(docs.get(id)) !== JSON.stringify(src)) out.push(`${id} is ${JSON.stringify(docs.get(id))}, acknowledged ${JSON.stringify(src)}`);
  }
  for (const id of docs.keys()) if (!model.has(id)) out.push(`extra ${id}`);
  return out.slice(0, 20);
}

/** The copy directory of shard `n` of an index. */
export async function copyDir(url: string, dataDir: string, index: string, n = 0): Promise<string> {
  const s = await http(url, 'GET', `/${index}/_settings`);
  return join(dataDir, 'indices', (Object.values(s)[0] as { settings: { index: { uuid: string } } }).settings.index.uuid, String(n));
}

/** Files of a copy directory that its newest commit does not name (segments, deletions, temporaries, older commits). */
export function garbage(dir: string): { files: string[]; garbage: string[] } {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  const commits = files.filter((f) => /^commit_\d+\.json$/.test(f)).sort((a, b) => Number(/\d+/.exec(b)![0]) - Number(/\d+/.exec(a)![0]));
  const named = new Set<string>(commits.slice(0, 1));
  if (commits.length) {
    const c = JSON.parse(readFileSync(join(dir, commits[0]), 'utf8')) as { segments: Array<{ meta: { name: string }; del?: string }>; pins: Array<{ segments: Array<{ meta: { name: string }; del?: string }> }> };
    for (const s of [...c.segments, ...c.pins.flatMap((p) => p.segments)]) {
      named.add(`${s.meta.name}.seg`);
      if (s.del) named.add(s.del);
    }
  }
  return { files, garbage: files.filter((f) => !named.has(f)) };
}

/** Files in a directory ending with one of `ends`. */
export const filesEnding = (dir: string, ...ends: string[]) => (existsSync(dir) ? readdirSync(dir).filter((f) => ends.some((e) => f.endsWith(e))) : []);
