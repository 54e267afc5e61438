/**
 * The load generator of `npm run bench`, run as a CHILD process so the node under test (in the
 * parent) keeps its event loop and the client's work is not counted as the server's.
 *
 *   echo '<json config>' | node scripts/bench/loader.mjs   ->   one JSON line on stdout
 *
 * (The config comes on stdin: lists of 10,000 ids do not fit in one argv string.)
 *
 * Plain JavaScript on purpose (a departure from the TS-only layout): it starts in ~40 ms with no
 * transform, and a load tool should cost the machine as little as possible. It never JSON.parses a
 * page (performance-facts.md, "Load tools"): scroll ids, PIT ids and sort values are cut out of the
 * bytes. Modes: bulk, jspub, rate, times, scroll, scrollpages, pitwalk, open, close, pairs, ctxcycle, lifecycle.
 * Typed callers live in scripts/bench/load.ts.
 */
import http from 'node:http';
import https from 'node:https';
import { rng } from '../../test/support/rng.ts';

const stdin = [];
for await (const c of process.stdin) stdin.push(c);
const cfg = JSON.parse(Buffer.concat(stdin).toString() || '{}');
// `ca` (a PEM): HTTPS to a node whose certificate that CA signed (the bus section's HTTPS rate).
const web = cfg.ca ? https : http;
const agent = new web.Agent({ keepAlive: true, maxSockets: Math.max(1, cfg.conc ?? 1) * (cfg.max ?? 1) + 4, ...(cfg.ca ? { ca: cfg.ca } : {}) });
const now = () => performance.now();

/** Connects to the bench's nats-server with the login the parent passed (streams/busConnection.ts). */
async function connectNats(c) {
  const { connect, nkeyAuthenticator } = await import('@nats-io/transport-node');
  return connect({ servers: c.servers, ...(c.nkeySeed ? { authenticator: nkeyAuthenticator(new TextEncoder().encode(c.nkeySeed)) } : {}) });
}

/** One HTTP request; resolves with status and the raw body bytes. */
function request(method, path, body, auth, contentType = 'application/json', port = cfg.port) {
  return new Promise((resolve, reject) => {
    const headers = {};
    if (auth) headers.authorization = auth;
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(body);
    }
    const r = web.request({ host: '127.0.0.1', port, method, path, agent, headers }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

/** Like `request`, but reads and drops the body (counting its bytes). */
function requestDrain(method, path, body, auth) {
  return new Promise((resolve, reject) => {
    const headers = auth ? { authorization: auth } : {};
    if (body !== undefined) {
      headers['content-type'] = 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    const r = web.request({ host: '127.0.0.1', port: cfg.port, method, path, agent, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    r.on('error', reject);
    r.end(body);
  });
}

const fail = (what, res) => {
  throw new Error(`${what}: HTTP ${res.status} ${res.body ? res.body.subarray(0, 300).toString() : ''}`);
};

/** The string value of `"key":"…"` near the start of a body (ids never contain quotes). */
function field(buf, key, within = 2048) {
  const head = buf.subarray(0, within).toString('latin1');
  const at = head.indexOf(`"${key}":"`);
  if (at < 0) return undefined;
  const from = at + key.length + 4;
  return head.slice(from, head.indexOf('"', from));
}

const HIT = Buffer.from('{"_index":');
/** Hits in a page: occurrences of `{"_index":` (a C++ scan, no parse). */
function countHits(buf) {
  let n = 0;
  for (let i = buf.indexOf(HIT); i >= 0; i = buf.indexOf(HIT, i + HIT.length)) n++;
  return n;
}

const SORT = Buffer.from('"sort":');
/** Raw JSON text of the last hit's sort values (spliced into the next search_after as is). */
function lastSort(buf) {
  const at = buf.lastIndexOf(SORT);
  if (at < 0) return undefined;
  const end = buf.indexOf(0x5d /* ] */, at);
  return buf.subarray(at + SORT.length, end + 1).toString('latin1');
}

/** Runs `work(i)` for i in [0, n) with `conc` in flight. */
async function pool(n, conc, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(conc, n) }, async () => {
      for (let i = next++; i < n; i = next++) await work(i);
    }),
  );
}

const WORDS = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu amber cobalt'.split(' ');
const TS0 = Date.parse('2020-01-01T00:00:00Z');

/** NDJSON of documents [from, from + n): {id, n (random long), ts, tag (100 values), title}. */
function ndjson(index, from, n, rand) {
  const lines = [];
  for (let i = from; i < from + n; i++) {
    const long = Math.floor((rand() * 2 - 1) * Number.MAX_SAFE_INTEGER);
    const ts = new Date(TS0 + Math.floor(rand() * 4 * 365 * 86_400_000)).toISOString();
    const tag = `tag-${Math.floor(rand() * 100)}`;
    const words = 2 + Math.floor(rand() * 4);
    let title = WORDS[Math.floor(rand() * WORDS.length)];
    for (let w = 1; w < words; w++) title += ' ' + WORDS[Math.floor(rand() * WORDS.length)];
    lines.push(`{"index":{"_index":"${index}","_id":"${i}"}}`, `{"id":${i},"n":${long},"ts":"${ts}","tag":"${tag}","title":"${title}"}`);
  }
  return lines.join('\n') + '\n';
}

const modes = {
  /** Bulk-loads `docs` documents (ids from `from`) in NDJSON batches of `batch`, `conc` batches in flight. */
  async bulk() {
    const { index, docs, batch = 5000, conc = 2, seed = 42, refresh, from = 0 } = cfg;
    const rand = rng(seed);
    const batches = Math.ceil(docs / batch);
    // Bodies are generated one ahead of sending (in order, one generator): generation is not timed
    // separately, it is part of what a client pays.
    let bytes = 0;
    let errors = 0;
    const t0 = now();
    await pool(batches, conc, async (b) => {
      const body = ndjson(index, from + b * batch, Math.min(batch, docs - b * batch), rand);
      bytes += Buffer.byteLength(body);
      const res = await request('POST', '/_bulk', body, cfg.auth, 'application/x-ndjson');
      if (res.status !== 200) fail('bulk', res);
      if (res.body.subarray(0, 64).toString().includes('"errors":true')) errors++;
    });
    const ms = now() - t0;
    if (refresh) await request('POST', `/${index}/_refresh`);
    return { docs, ms, bytes, errorBatches: errors };
  },

  /** The same NDJSON batches published straight into a JetStream stream (the log's own speed). */
  async jspub() {
    const { jetstream, jetstreamManager } = await import('@nats-io/jetstream');
    const { nats, stream, docs, batch = 5000, window = 4, seed = 42 } = cfg;
    const nc = await connectNats(nats);
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: stream, subjects: [`${stream}.>`], storage: 'file', max_msg_size: -1 });
    const js = jetstream(nc);
    const rand = rng(seed);
    const enc = new TextEncoder();
    let bytes = 0;
    const t0 = now();
    await pool(Math.ceil(docs / batch), window, async (b) => {
      const body = enc.encode(ndjson('raw', b * batch, Math.min(batch, docs - b * batch), rand));
      bytes += body.length;
      await js.publish(`${stream}.b`, body, { timeout: 60_000 });
    });
    const ms = now() - t0;
    await jsm.streams.delete(stream);
    await nc.drain();
    return { docs, ms, bytes };
  },

  /** Requests per second of one request for `seconds`, `conc` in flight (non-200 counted as bad). */
  async rate() {
    const { method = 'GET', path, body, auth, seconds = 3, conc = 16 } = cfg;
    let n = 0;
    let bad = 0;
    const end = now() + seconds * 1000;
    const t0 = now();
    await Promise.all(
      Array.from({ length: conc }, async () => {
        while (now() < end) {
          const r = await requestDrain(method, path, body, auth);
          if (r.status !== 200) bad++;
          n++;
        }
      }),
    );
    const ms = now() - t0;
    return { n, ms, rate: (n / ms) * 1000, bad };
  },

  /**
   * Latency of several requests, one in flight, interleaved: round r sends specs[0..k] in turn.
   * A spec is {method, path, body?, auth?} or {nats: subject, bytes} (a NATS request/reply to a
   * responder the parent runs on the node's nats-server). Returns ms[spec][sample].
   */
  async times() {
    const { specs, rounds, perRound = 1, warmup = 2, nats } = cfg;
    let nc;
    if (nats) nc = await connectNats(nats);
    const one = async (s) => {
      if (s.nats) {
        await nc.request(s.nats, new Uint8Array(s.bytes ?? 100), { timeout: 10_000 });
        return;
      }
      const r = await requestDrain(s.method ?? 'GET', s.path, s.body, s.auth);
      if (r.status !== 200) throw new Error(`${s.method} ${s.path}: HTTP ${r.status}`);
    };
    for (let w = 0; w < warmup; w++) for (const s of specs) await one(s);
    const ms = specs.map(() => []);
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < specs.length; k++) {
        for (let p = 0; p < perRound; p++) {
          const t = now();
          await one(specs[k]);
          ms[k].push(now() - t);
        }
      }
    }
    await nc?.drain();
    return { ms };
  },

  /**
   * Scrolls an index to the end, `max` slices at once (max 1 = not sliced), reading the bytes and
   * cutting out only `_scroll_id`; clears every scroll at the end. `sliceIds` runs only those
   * slices of the `max` (another loader runs the others, e.g. through another node).
   */
  async scroll() {
    const { index, size = 1000, max = 1, keepAlive = '1m', query, sliceIds } = cfg;
    let docs = 0;
    let pages = 0;
    let bytes = 0;
    const t0 = now();
    await Promise.all(
      (sliceIds ?? Array.from({ length: max }, (_, id) => id)).map(async (id) => {
        const body = JSON.stringify({ size, sort: ['_doc'], ...(query ? { query } : {}), ...(max > 1 ? { slice: { id, max } } : {}) });
        let res = await request('POST', `/${index}/_search?scroll=${keepAlive}`, body);
        for (;;) {
          if (res.status !== 200) fail('scroll', res);
          bytes += res.body.length;
          const hits = countHits(res.body);
          const scrollId = field(res.body, '_scroll_id');
          if (!hits) {
            if (scrollId) await request('DELETE', '/_search/scroll', JSON.stringify({ scroll_id: scrollId }));
            return;
          }
          docs += hits;
          pages++;
          res = await request('POST', '/_search/scroll', `{"scroll":"${keepAlive}","scroll_id":"${scrollId}"}`);
        }
      }),
    );
    return { docs, pages, bytes, ms: now() - t0 };
  },

  /**
   * Latency of scroll next pages as a plain keep-alive client sees it: opens a scroll (size, sort
   * `_doc`), times each continuation until `pages` pages were timed (opening again at the end of
   * the index), clears. The empty last page is not counted; nothing is parsed. With `pagePort`,
   * the scroll is opened through `port` and continued through `pagePort` (another node).
   */
  async scrollpages() {
    const { index, size = 1000, pages = 40, keepAlive = '1m', pagePort = cfg.port } = cfg;
    const body = JSON.stringify({ size, sort: ['_doc'] });
    const ms = [];
    while (ms.length < pages) {
      let res = await request('POST', `/${index}/_search?scroll=${keepAlive}`, body);
      if (res.status !== 200) fail('scroll open', res);
      let scrollId = field(res.body, '_scroll_id');
      for (;;) {
        const t = now();
        res = await request('POST', '/_search/scroll', `{"scroll":"${keepAlive}","scroll_id":"${scrollId}"}`, undefined, 'application/json', pagePort);
        const dt = now() - t;
        if (res.status !== 200) fail('scroll page', res);
        if (!countHits(res.body)) break;
        ms.push(dt);
        scrollId = field(res.body, '_scroll_id');
        if (ms.length >= pages) break;
      }
      await request('DELETE', '/_search/scroll', JSON.stringify({ scroll_id: scrollId }));
    }
    return { ms };
  },

  /**
   * Walks a PIT with search_after to the end, sorted by `sortField`; times each page and keeps the
   * raw search_after text at the `marks` depths (documents already returned).
   */
  async pitwalk() {
    const { index, pitId, size = 1000, sortField = 'n', keepAlive = '5m', marks = [] } = cfg;
    const pageMs = [];
    const after = {};
    let docs = 0;
    let bytes = 0;
    let sa;
    let pit = pitId;
    const t0 = now();
    for (;;) {
      for (const m of marks) if (m === docs) after[m] = sa ?? null;
      const body = `{"size":${size},"pit":{"id":"${pit}","keep_alive":"${keepAlive}"},"sort":[{"${sortField}":"asc"}]${sa ? `,"search_after":${sa}` : ''}}`;
      const t = now();
      const res = await request('POST', '/_search', body);
      pageMs.push(now() - t);
      if (res.status !== 200) fail(`pit page at ${docs} (${index})`, res);
      bytes += res.body.length;
      const hits = countHits(res.body);
      if (!hits) break;
      docs += hits;
      sa = lastSort(res.body);
      pit = field(res.body, 'pit_id') ?? pit;
    }
    return { docs, bytes, ms: now() - t0, pageMs, after };
  },

  /** Opens `n` contexts (POST `path` with `body`), `conc` at a time; returns the ids cut out of `extract`. */
  async open() {
    const { method = 'POST', path, body, n, conc = 16, extract } = cfg;
    const ids = new Array(n);
    const t0 = now();
    await pool(n, conc, async (i) => {
      const res = await request(method, path, body);
      if (res.status !== 200) fail(`open ${path}`, res);
      ids[i] = field(res.body, extract);
    });
    return { ids, ms: now() - t0 };
  },

  /** Frees contexts: DELETE `path` with `{"<key>": id}` for each id. */
  async close() {
    const { path, key, ids, conc = 16 } = cfg;
    let bad = 0;
    const t0 = now();
    await pool(ids.length, conc, async (i) => {
      const res = await request('DELETE', path, JSON.stringify({ [key]: ids[i] }));
      if (res.status !== 200) bad++;
    });
    return { ms: now() - t0, bad };
  },

  /** `n` open+free pairs of a PIT or a scroll, `conc` pairs at a time. */
  async pairs() {
    const { kind, index, n, conc = 8, size = 1 } = cfg;
    const t0 = now();
    await pool(n, conc, async () => {
      if (kind === 'pit') {
        const o = await request('POST', `/${index}/_pit?keep_alive=1m`);
        if (o.status !== 200) fail('pit open', o);
        const c = await request('DELETE', '/_pit', JSON.stringify({ id: field(o.body, 'id') }));
        if (c.status !== 200) fail('pit close', c);
      } else {
        const o = await request('POST', `/${index}/_search?scroll=1m`, `{"size":${size},"sort":["_doc"]}`);
        if (o.status !== 200) fail('scroll open', o);
        const c = await request('DELETE', '/_search/scroll', JSON.stringify({ scroll_id: field(o.body, '_scroll_id') }));
        if (c.status !== 200) fail('scroll clear', c);
      }
    });
    return { n, ms: now() - t0 };
  },

  /**
   * `n` scroll cycles, `conc` at a time: open (the first page, `size` hits in `_doc` order), `pages`
   * continuations and a clear; or, with `context: false`, the same searches without a context: the
   * first page, then `pages` searches after the last hit's `_doc` (on a one-shard index, the same
   * pages at the same cost). Every page must be full.
   */
  async ctxcycle() {
    const { index, n, pages = 4, size = 100, context = true, conc = 8, keepAlive = '1m' } = cfg;
    const first = JSON.stringify({ size, sort: ['_doc'] });
    const full = (what, res) => {
      if (res.status !== 200) fail(what, res);
      if (countHits(res.body) !== size) throw new Error(`${what}: ${countHits(res.body)} hits, expected ${size}`);
    };
    // latencies by kind of request (medians returned): where a cycle's time goes
    const lat = { first: [], page: [], clear: [] };
    const timed = async (kind, send) => {
      const t = now();
      const res = await send();
      lat[kind].push(now() - t);
      return res;
    };
    const t0 = now();
    await pool(n, conc, async () => {
      if (context) {
        let res = await timed('first', () => request('POST', `/${index}/_search?scroll=${keepAlive}`, first));
        full('scroll open', res);
        for (let p = 0; p < pages; p++) {
          res = await timed('page', () => request('POST', '/_search/scroll', `{"scroll":"${keepAlive}","scroll_id":"${field(res.body, '_scroll_id')}"}`));
          full('scroll page', res);
        }
        const c = await timed('clear', () => request('DELETE', '/_search/scroll', JSON.stringify({ scroll_id: field(res.body, '_scroll_id') })));
        if (c.status !== 200) fail('scroll clear', c);
      } else {
        let res = await timed('first', () => request('POST', `/${index}/_search`, first));
        full('search', res);
        for (let p = 0; p < pages; p++) {
          const body = `{"size":${size},"sort":["_doc"],"search_after":${lastSort(res.body)}}`;
          res = await timed('page', () => request('POST', `/${index}/_search`, body));
          full('search after', res);
        }
      }
    });
    const ms = now() - t0;
    const med = (xs) => (xs.length ? [...xs].sort((a, b) => a - b)[xs.length >> 1] : 0);
    return { n, ms, rate: (n / ms) * 1000, latency: { first: med(lat.first), page: med(lat.page), clear: med(lat.clear) } };
  },

  /**
   * Context lifecycles as fast as the node takes them: open `scrolls` scroll contexts and `pits`
   * PITs, extend each once (a continuation with `scroll`, a PIT search with `keep_alive`), then
   * clear/close them all; `conc` requests in flight.
   */
  async lifecycle() {
    const { index, scrolls, pits, conc = 16 } = cfg;
    const kinds = [...Array(scrolls).fill('scroll'), ...Array(pits).fill('pit')];
    const ids = new Array(kinds.length);
    const phase = {};
    let t = now();
    const t0 = t;
    await pool(kinds.length, conc, async (i) => {
      const res = kinds[i] === 'scroll' ? await request('POST', `/${index}/_search?scroll=1m`, '{"size":1,"sort":["_doc"]}') : await request('POST', `/${index}/_pit?keep_alive=1m`);
      if (res.status !== 200) fail(`open ${kinds[i]}`, res);
      ids[i] = field(res.body, kinds[i] === 'scroll' ? '_scroll_id' : 'id');
    });
    phase.open = now() - t;
    t = now();
    await pool(kinds.length, conc, async (i) => {
      // a longer keep-alive than the open's: an extension the node logs (repeating the same one is coalesced)
      const res =
        kinds[i] === 'scroll'
          ? await request('POST', '/_search/scroll', `{"scroll":"2m","scroll_id":"${ids[i]}"}`)
          : await request('POST', '/_search', `{"size":1,"pit":{"id":"${ids[i]}","keep_alive":"2m"}}`);
      if (res.status !== 200) fail(`extend ${kinds[i]}`, res);
      if (kinds[i] === 'scroll') ids[i] = field(res.body, '_scroll_id');
    });
    phase.extend = now() - t;
    t = now();
    await pool(kinds.length, conc, async (i) => {
      const res =
        kinds[i] === 'scroll'
          ? await request('DELETE', '/_search/scroll', JSON.stringify({ scroll_id: ids[i] }))
          : await request('DELETE', '/_pit', JSON.stringify({ id: ids[i] }));
      if (res.status !== 200) fail(`free ${kinds[i]}`, res);
    });
    phase.free = now() - t;
    return { ms: now() - t0, phase };
  },
};

const mode = modes[cfg.mode];
if (!mode) {
  process.stderr.write(`unknown mode ${cfg.mode}\n`);
  process.exit(2);
}
mode()
  .then((out) => {
    agent.destroy();
    process.stdout.write(JSON.stringify(out));
  })
  .catch((e) => {
    process.stderr.write(String(e?.stack ?? e));
    process.exit(1);
  });
