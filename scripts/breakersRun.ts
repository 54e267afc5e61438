/**
 * The load of the breakers run (issue 19's "Must show": a 2,000,000-bucket `terms` aggregation and
 * 16 concurrent 10,000-hit pages each get 200 or an ES-shaped error, and the node stays up).
 * Loads a seeded corpus through `_bulk`, then fires rounds of: a `terms` of size `buckets` over a
 * keyword with one value per doc, a default-size `terms` over the same field (every value is a
 * live bucket while it collects), and `pages` concurrent `pageSize`-hit pages with their sources.
 * Every answer must be a 200, or a 4xx (400, 429, …) with an ES error body. Shared by
 * scripts/breakers.ts and the seeded CI sample (test/e2e/node/breakersLoad.test.ts).
 */
import { rng } from '../test/support/rng';

export interface BreakersOptions {
  url: string;
  seed: number;
  docs: number;
  /** About this many bytes of `_source` per doc. */
  docBytes: number;
  pages: number;
  pageSize: number;
  /** `size` of the large terms aggregation. */
  buckets: number;
  rounds: number;
  headers?: Record<string, string>;
  /** Only these kinds of requests (default all). */
  only?: Array<Answer['what']>;
  /** Called once the corpus is loaded (figures to print). */
  loaded?: () => Promise<void>;
  log?: (line: string) => void;
  /** Called now and then (RSS sampling). */
  tick?: () => void;
}

export interface Answer {
  what: 'terms-size' | 'terms' | 'page';
  status: number;
  /** The error type of a non-200, or `network` when no answer came. */
  type?: string;
  ms: number;
  hits?: number;
}

export interface BreakersReport {
  loaded: number;
  loadSeconds: number;
  answers: Answer[];
  /** Answers that are neither a 200 nor an ES-shaped 4xx (5xx, malformed bodies, no answer). */
  bad: Array<Answer & { body: string }>;
  /** what -> "status type" -> count */
  summary: Record<string, Record<string, number>>;
}

const INDEX = 'breakers';
const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima', 'mike', 'november'];

/** An ES error body: `{error: {root_cause: [...], type, reason}, status}` with the HTTP status. */
export function isEsError(body: unknown, status: number): boolean {
  const b = body as { error?: { root_cause?: unknown; type?: unknown; reason?: unknown }; status?: unknown } | undefined;
  return !!b?.error && Array.isArray(b.error.root_cause) && typeof b.error.type === 'string' && typeof b.error.reason === 'string' && b.status === status;
}

async function send(o: BreakersOptions, method: string, path: string, body: string, contentType = 'application/json'): Promise<{ status: number; text: string }> {
  try {
    const res = await fetch(`${o.url}${path}`, { method, headers: { 'content-type': contentType, ...(o.headers ?? {}) }, body, signal: AbortSignal.timeout(300_000) });
    return { status: res.status, text: await res.text() };
  } catch (e) {
    return { status: 0, text: (e as Error).message };
  }
}

/** Creates the index and loads `docs` seeded docs (retrying batches a breaker refused); returns how many were acknowledged. */
export async function loadCorpus(o: BreakersOptions): Promise<number> {
  const created = await send(o, 'PUT', `/${INDEX}`, JSON.stringify({
    settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1' },
    mappings: { properties: { k: { type: 'keyword' }, n: { type: 'long' }, tag: { type: 'keyword' }, body: { type: 'text' } } },
  }));
  if (created.status !== 200) throw new Error(`index creation answered ${created.status}: ${created.text.slice(0, 300)}`);
  const rand = rng(o.seed);
  const batch = Math.max(1, Math.floor((4 * 1024 * 1024) / Math.max(64, o.docBytes)));
  let acked = 0;
  for (let from = 0; from < o.docs; from += batch) {
    const lines: string[] = [];
    for (let i = from; i < Math.min(o.docs, from + batch); i++) {
      let body = '';
      while (body.length < o.docBytes - 60) body += `${WORDS[Math.floor(rand() * WORDS.length)]} `;
      lines.push(`{"index":{"_id":"${i}"}}`, JSON.stringify({ k: `k${i}`, n: i, tag: `t${i % 100}`, body }));
    }
    const payload = `${lines.join('\n')}\n`;
    for (let attempt = 0; ; attempt++) {
      const r = await send(o, 'POST', `/${INDEX}/_bulk`, payload, 'application/x-ndjson');
      if (r.status === 200) {
        const items = (JSON.parse(r.text) as { items: Array<{ index: { status: number } }> }).items;
        acked += items.filter((x) => x.index.status < 300).length;
        break;
      }
      if (r.status !== 429 || attempt >= 20) throw new Error(`_bulk answered ${r.status}: ${r.text.slice(0, 300)}`);
      await new Promise((res) => setTimeout(res, 500)); // a breaker refused it: the heap is busy, try again
    }
    o.tick?.();
    if ((from / batch) % 25 === 0) o.log?.(`  loaded ${Math.min(o.docs, from + batch)} of ${o.docs}`);
  }
  const refreshed = await send(o, 'POST', `/${INDEX}/_refresh`, '');
  if (refreshed.status !== 200) throw new Error(`_refresh answered ${refreshed.status}: ${refreshed.text.slice(0, 300)}`);
  return acked;
}

async function ask(o: BreakersOptions, what: Answer['what'], body: unknown, report: BreakersReport): Promise<void> {
  const t0 = Date.now();
  const r = await send(o, 'POST', `/${INDEX}/_search`, JSON.stringify(body));
  const a: Answer = { what, status: r.status, ms: Date.now() - t0 };
  let parsed: unknown;
  try {
    parsed = JSON.parse(r.text);
  } catch {
    parsed = undefined;
  }
  let good: boolean;
  if (r.status === 200) {
    a.hits = (parsed as { hits?: { hits?: unknown[] } } | undefined)?.hits?.hits?.length;
    good = a.hits !== undefined;
  } else {
    a.type = r.status === 0 ? 'network' : (parsed as { error?: { type?: string } } | undefined)?.error?.type ?? 'unparsed';
    good = r.status >= 400 && r.status < 500 && isEsError(parsed, r.status);
  }
  report.answers.push(a);
  if (!good) report.bad.push({ ...a, body: r.text.slice(0, 2000) });
  const key = `${a.status}${a.type ? ` ${a.type}` : ''}`;
  const by = (report.summary[what] ??= {});
  by[key] = (by[key] ?? 0) + 1;
}

/** Loads the corpus and runs the rounds. */
export async function runBreakers(o: BreakersOptions): Promise<BreakersReport> {
  const report: BreakersReport = { loaded: 0, loadSeconds: 0, answers: [], bad: [], summary: {} };
  const t0 = Date.now();
  report.loaded = await loadCorpus(o);
  report.loadSeconds = (Date.now() - t0) / 1000;
  o.log?.(`loaded ${report.loaded} docs in ${report.loadSeconds.toFixed(1)} s`);
  await o.loaded?.();
  const want = (w: Answer['what']) => !o.only || o.only.includes(w);
  const rand = rng(o.seed + 1);
  for (let round = 0; round < o.rounds; round++) {
    const work: Array<Promise<void>> = [];
    if (want('terms-size')) work.push(ask(o, 'terms-size', { size: 0, aggs: { k: { terms: { field: 'k', size: o.buckets } } } }, report));
    if (want('terms')) work.push(ask(o, 'terms', { size: 0, aggs: { k: { terms: { field: 'k' } } } }, report));
    for (let p = 0; p < (want('page') ? o.pages : 0); p++) {
      const from = Math.floor(rand() * Math.max(1, report.loaded - o.pageSize));
      work.push(ask(o, 'page', { size: o.pageSize, sort: [{ n: 'asc' }], query: { range: { n: { gte: from } } } }, report));
    }
    const ticker = setInterval(() => o.tick?.(), 200);
    await Promise.all(work);
    clearInterval(ticker);
    o.log?.(`round ${round + 1}: ${JSON.stringify(report.summary)}`);
  }
  return report;
}
