/**
 * The HTTP side of the segments scale run (scripts/segmentsScale.ts) and its crash tests: `_bulk`
 * loads that record which items were acknowledged, a scroll that checks every source against the
 * seeded documents byte for byte, and the node's heap from `_nodes/stats/jvm`.
 */
import { rawSources, type ScaleDocs } from './scaleDocs';

export interface Answer {
  status: number;
  text: string;
}

/** One request; the body is JSON (an object) or NDJSON text. */
export async function call(url: string, method: string, path: string, body?: unknown, timeoutMs = 600_000): Promise<Answer> {
  const text = typeof body === 'string';
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': text ? 'application/x-ndjson' : 'application/json' },
    body: body === undefined ? undefined : text ? (body as string) : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, text: await res.text() };
}

/** JSON of a request that must succeed. */
export async function json<T = any>(url: string, method: string, path: string, body?: unknown): Promise<T> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const a = await call(url, method, path, body);
  if (a.status >= 300) throw new Error(`${method} ${path}: HTTP ${a.status} ${a.text.slice(0, 400)}`);
  return JSON.parse(a.text) as T;
}

/** A write of the load: doc `i` at version `v`. */
export interface Write {
  i: number;
  v: number;
}

export interface LoadResult {
  /** Items acknowledged (2xx in a 200 `_bulk` answer). */
  acked: number;
  /** Items sent (acknowledged or not). */
  sent: number;
  /** UTF-8 bytes of the sources acknowledged. */
  bytes: number;
  /** Docs acknowledged whose source has `zebra` (first writes only). */
  zebras: number;
  /** Item or request failures (a load that must be whole stops at the first). */
  failures: string[];
  ms: number;
}

export interface LoadOptions {
  url: string;
  index: string;
  docs: ScaleDocs;
  /** The writes, in order (a generator: a 1.25 GB load is never held whole). */
  writes: Iterable<Write>;
  /** Items per `_bulk` (default 2,000). */
  batch?: number;
  /** Requests in flight (default 2). */
  conc?: number;
  /** Every acknowledged write (the crash run keeps their doc numbers). */
  onAck?: (w: Write) => void;
  /** Every sent write. */
  onSend?: (w: Write) => void;
  /** Called after each answered batch (progress, heap samples). */
  tick?: (r: LoadResult) => void;
  /** Stop at the first failure (default true); false: a load cut by a kill records and goes on until the writes end or `stop()`. */
  strict?: boolean;
  stop?: () => boolean;
}

/** Sends the writes through `_bulk` (`index` ops), `conc` requests in flight. */
export async function bulkLoad(o: LoadOptions): Promise<LoadResult> {
  const r: LoadResult = { acked: 0, sent: 0, bytes: 0, zebras: 0, failures: [], ms: 0 };
  const t0 = Date.now();
  const it = o.writes[Symbol.iterator]();
  const batch = o.batch ?? 2000;
  const strict = o.strict ?? true;
  let done = false;
  const next = (): { body: string; ws: Write[]; lens: number[] } | undefined => {
    if (done || (o.stop?.() ?? false) || (strict && r.failures.length)) return undefined;
    const ws: Write[] = [];
    const lens: number[] = [];
    let body = '';
    for (let k = 0; k < batch; k++) {
      const n = it.next();
      if (n.done) {
        done = true;
        break;
      }
      const src = o.docs.source(n.value.i, n.value.v);
      body += `{"index":{"_id":"${o.docs.id(n.value.i)}"}}\n${src}\n`;
      ws.push(n.value);
      lens.push(Buffer.byteLength(src));
    }
    return ws.length ? { body, ws, lens } : undefined;
  };
  const worker = async () => {
    for (let b = next(); b; b = next()) {
      for (const w of b.ws) o.onSend?.(w);
      r.sent += b.ws.length;
      let a: Answer;
      try {
        a = await call(o.url, 'POST', `/${o.index}/_bulk`, b.body);
      } catch (e) {
        r.failures.push(`_bulk request failed: ${(e as Error).message}`);
        continue;
      }
      if (a.status !== 200) {
        r.failures.push(`_bulk HTTP ${a.status}: ${a.text.slice(0, 300)}`);
        continue;
      }
      const items = (JSON.parse(a.text) as { items: Array<{ index: { status: number; error?: unknown } }> }).items;
      if (items.length !== b.ws.length) r.failures.push(`_bulk answered ${items.length} items for ${b.ws.length}`);
      items.forEach((it2, k) => {
        const w = b.ws[k];
        if (it2.index.status >= 200 && it2.index.status < 300) {
          r.acked++;
          r.bytes += b.lens[k];
          if (w.v === 0 && o.docs.hasZebra(w.i, 0)) r.zebras++;
          o.onAck?.(w);
        } else if (r.failures.length < 20) r.failures.push(`item ${o.docs.id(w.i)}: ${it2.index.status} ${JSON.stringify(it2.index.error)}`);
      });
      o.tick?.(r);
    }
  };
  await Promise.all(Array.from({ length: o.conc ?? 2 }, worker));
  r.ms = Date.now() - t0;
  return r;
}

/** Doc `from`..`to`-1, first writes. */
export function* firstWrites(from: number, to: number): Generator<Write> {
  for (let i = from; i < to; i++) yield { i, v: 0 };
}

export interface ScrollCheck {
  /** Hits returned. */
  hits: number;
  /** Distinct docs seen. */
  distinct: number;
  duplicates: number;
  /** Hits whose source is not byte-identical to what was sent (first ids). */
  mismatched: string[];
  /** Hits of ids that were never sent (and the first few of them). */
  unknown: number;
  unknownIds: string[];
  ms: number;
}

/**
 * Scrolls `index` in `_doc` order and checks each hit: `expected(i)` gives doc i's source as sent
 * (undefined: doc i was never sent, or may be absent), the source must be that text to the byte,
 * and no doc may come twice. `maxDoc` bounds the doc numbers (a bitmap of seen docs).
 */
export async function scrollCheck(url: string, index: string, docs: ScaleDocs, maxDoc: number, expected: (i: number) => string | undefined, size = 1000): Promise<ScrollCheck & { seen: Uint8Array }> {
  const t0 = Date.now();
  const seen = new Uint8Array(maxDoc);
  const c: ScrollCheck = { hits: 0, distinct: 0, duplicates: 0, mismatched: [], unknown: 0, unknownIds: [], ms: 0 };
  let a = await call(url, 'POST', `/${index}/_search?scroll=5m`, { size, sort: ['_doc'] });
  let scrollId: string | undefined;
  try {
    for (;;) {
      if (a.status !== 200) throw new Error(`scroll page: HTTP ${a.status} ${a.text.slice(0, 300)}`);
      const page = JSON.parse(a.text) as { _scroll_id: string; hits: { hits: Array<{ _id: string }> } };
      scrollId = page._scroll_id;
      const hits = page.hits.hits;
      if (!hits.length) break;
      const sources = rawSources(a.text);
      if (sources.length !== hits.length) throw new Error(`page of ${hits.length} hits has ${sources.length} _source texts`);
      hits.forEach((h, k) => {
        c.hits++;
        const i = docs.num(h._id);
        const want = i >= 0 && i < maxDoc ? expected(i) : undefined;
        if (want === undefined) {
          if (c.unknown++ < 10) c.unknownIds.push(h._id);
          return;
        }
        if (seen[i]) c.duplicates++;
        else {
          seen[i] = 1;
          c.distinct++;
        }
        if (sources[k] !== want && c.mismatched.length < 10) c.mismatched.push(h._id);
      });
      a = await call(url, 'POST', '/_search/scroll', { scroll: '5m', scroll_id: scrollId });
    }
  } finally {
    if (scrollId) await call(url, 'DELETE', '/_search/scroll', { scroll_id: scrollId }).catch(() => undefined);
  }
  c.ms = Date.now() - t0;
  return { ...c, seen };
}

export interface Heap {
  used: number;
  max: number;
}

/** The node's V8 heap (`_nodes/_local/stats/jvm`). */
export async function nodeHeap(url: string): Promise<Heap> {
  const s = await json<{ nodes: Record<string, { jvm: { mem: { heap_used_in_bytes: number; heap_max_in_bytes: number } } }> }>(url, 'GET', '/_nodes/_local/stats/jvm');
  const m = Object.values(s.nodes)[0].jvm.mem;
  return { used: m.heap_used_in_bytes, max: m.heap_max_in_bytes };
}

/**
 * The heap once the node is idle: the smallest of samples taken every `everyMs` for `ms` (V8
 * collects garbage when the allocation rate drops; `_nodes/stats` reports used, garbage included).
 */
export async function idleHeap(url: string, ms = 20_000, everyMs = 500): Promise<Heap & { samples: number }> {
  let best: Heap | undefined;
  let samples = 0;
  const end = Date.now() + ms;
  do {
    const h = await nodeHeap(url);
    samples++;
    if (!best || h.used < best.used) best = h;
    await new Promise((r) => setTimeout(r, everyMs));
  } while (Date.now() < end);
  return { ...best!, samples };
}

export const MB = 1024 * 1024;
export const mb = (n: number) => `${(n / MB).toFixed(1)} MB`;
