/**
 * The probes of issue 21 (failures at the edges) as fuzz cases, each with the statuses Elasticsearch
 * gives it: anything else is a finding, as a 5xx or a hang is. They were found by hand once; here they
 * run on every seed, in varied forms.
 *
 * - `q=` without `df` (long, odd characters): a search of every field, 200, or ES's 400;
 * - a bulk with an empty `_id` under a `pipeline` (JSON content type): answered at once, the item 400;
 * - an unknown `pipeline` on a write: ES's 400 (no pipeline exists here);
 * - a raw request with many repeated headers: answered, in ES's error shape when refused;
 * - a wrong password with a gzip bomb: 401, never 413 (credentials before the body);
 * - a document over a default nats-server's `max_payload` (1 MB): taken (201/200);
 * - an `Expect` the server does not know: ES-shaped 417.
 */
import { gzipSync } from 'node:zlib';
import { anyIndex, http, type Fixtures, type FuzzCase, type Gen } from './fuzzHttp';
import { Rng, toJson } from './fuzzValues';

const Q_CHARS = 'qwertyuiop asdfghjkl zxcvbnm 0123456789 ()"*?~^:\\/[]{}!+-=&|<>';

function longQ(r: Rng): string {
  const n = r.pick([1, 20, 250, 1000, 4000]);
  const plain = r.chance(0.5);
  let s = '';
  for (let i = 0; i < n; i++) s += plain ? 'q' : Q_CHARS[r.int(Q_CHARS.length)];
  return encodeURIComponent(s);
}

const gzBombs = new Map<number, Buffer>();
function gzBomb(mb: number): Buffer {
  let b = gzBombs.get(mb);
  if (!b) gzBombs.set(mb, (b = gzipSync(Buffer.alloc(mb * 1024 * 1024, 0x20), { level: 9 })));
  return b;
}

/**
 * Indices these cases write to: named by no other generator (only `*` and `_all` reach them, where a
 * copy still starting fails one shard, not the search), so no search races their creation (ES answers
 * such a race 503 too: not bad input).
 */
const scratch = (r: Rng) => `edgefz-${r.int(3)}`;

const withExpect = (c: FuzzCase, statuses: number[]): FuzzCase => ({ ...c, expect: statuses });

export const edges: Gen = (r: Rng, f: Fixtures): FuzzCase =>
  r.pick<() => FuzzCase>([
    () => withExpect(http('edges', f, r.pick(['GET', 'POST']), `/${r.pick(['', `${anyIndex(r, f)}/`])}_search?q=${longQ(r)}${r.chance(0.3) ? '&default_operator=AND' : ''}`), [200, 400, 404]),
    () => {
      const ids = r.pick(['""', '"ok"', '" "', 'null']);
      const body = `{"index":{"_index":"${scratch(r)}","_id":${ids}}}\n{"n":1}\n{"create":{"_index":"${scratch(r)}","_id":""}}\n{"n":2}\n`;
      const path = `/_bulk${r.pick(['?pipeline=x', '?pipeline=', '?pipeline=_none', ''])}`;
      return withExpect(http('edges', f, r.pick(['PUT', 'POST']), path, body, { 'content-type': r.pick(['application/json', 'application/x-ndjson']) }), [200, 400]);
    },
    () => withExpect(http('edges', f, 'PUT', `/${scratch(r)}/_doc/p${r.int(5)}?pipeline=${r.pick(['nope', 'x', '%20'])}`, '{"n":1}'), [400]),
    () => {
      const name = r.pick(['X-Junk', 'Content-Type', 'Accept', 'Authorization', 'Host', 'X-Opaque-Id', 'Content-Length']);
      const value = name === 'Authorization' ? f.auth : name === 'Content-Length' ? '0' : name === 'Content-Type' ? 'application/json' : 'v';
      const n = r.pick([2, 50, 500, 1500]);
      const head = `GET /${r.pick(f.indices)}/_count HTTP/1.1\r\nHost: x\r\nAuthorization: ${f.auth}\r\n${`${name}: ${value}\r\n`.repeat(n)}\r\n`;
      return { kind: 'raw', label: 'edges', bytes: Buffer.from(head, 'latin1'), keepOpen: true, expect: [200, 400] };
    },
    () => {
      const c = http('edges', f, 'POST', r.pick([`/${r.pick(f.indices)}/_search`, '/_bulk', `/${scratch(r)}/_doc`]), gzBomb(r.pick([16, 120])), { 'content-encoding': 'gzip' });
      if (c.kind === 'http') c.headers.authorization = `Basic ${Buffer.from(`elastic:${r.pick(['wrong', '', 'x'.repeat(40)])}`).toString('base64')}`;
      return withExpect(c, [401]);
    },
    () => {
      const size = r.pick([1, 2, 3]) * 1024 * 1024 + r.int(1000);
      const doc = toJson({ n: 1, t: 'x'.repeat(size) });
      return r.chance(0.5)
        ? withExpect(http('edges', f, 'PUT', `/${scratch(r)}/_doc/big${r.int(3)}`, doc), [200, 201])
        : withExpect(http('edges', f, 'POST', '/_bulk', `{"index":{"_index":"${scratch(r)}","_id":"big"}}\n${doc}\n`, { 'content-type': 'application/x-ndjson' }), [200]);
    },
    () => withExpect(http('edges', f, 'POST', `/${r.pick(f.indices)}/_search`, '{}', { expect: r.pick(['200-ok', 'junk', '100-continue, x']) }), [417]),
  ])();
