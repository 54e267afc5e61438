/**
 * The console's HTTP surface on a real secured node (issue 15), without a browser: the public page and
 * its headers, authentication and per-privilege visibility of every `/_console/api/` route, the live
 * feed (server-sent events from the NATS subscription), last use of credentials, the "as of" fold,
 * the chart, credential timelines, and ES-shaped 4xx answers to bad input.
 */
import { basic, contextOf, eventually, openFeed, startConsoleNode, type ConsoleNode, type Feed } from './setup';

let n: ConsoleNode;
const feeds: Feed[] = [];
const ops = basic('ops');
const app = basic('app');

beforeAll(async () => {
  n = await startConsoleNode({ 'console.feed.revalidate_interval_ms': 300 });
});
afterAll(async () => {
  for (const f of feeds) f.close();
  await n?.stop();
});

const feed = async (auth: string | undefined, q = '') => {
  const f = await openFeed(n.t.url, auth, q);
  feeds.push(f);
  if (f.status === 200) await f.next((e) => e.event === 'hello');
  return f;
};

describe('the page', () => {
  it('is served without credentials, with a CSP that allows only its own scripts, and holds no data', async () => {
    const r = await n.as(undefined, 'GET', '/_console');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = r.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(r.headers.get('x-content-type-options')).toBe('nosniff');
    expect(r.text).toContain('<script type="module" src="/_console/static/app.js">');
    expect(r.text).not.toContain(n.t.sys.ctx.node.name);
    expect(r.text).not.toMatch(/<script>|on(click|load|error)=/);
  });

  it('serves its modules and styles by name only; anything else is an ES-shaped 4xx', async () => {
    const js = await n.as(undefined, 'GET', '/_console/static/app.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const css = await n.as(undefined, 'GET', '/_console/static/console.css');
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8');
    const missing = await n.as(undefined, 'GET', '/_console/static/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.json.error.type).toBe('resource_not_found_exception');
    const traversal = await n.as(undefined, 'GET', '/_console/static/..%2F..%2Fsystem.ts');
    expect(traversal.status).toBe(404);
    expect(traversal.json.error.type).toBe('resource_not_found_exception');
    const deeper = await n.as(undefined, 'GET', '/_console/static/../index.ts');
    expect(deeper.status).toBeGreaterThanOrEqual(400);
    expect(deeper.status).toBeLessThan(500);
  });
});

describe('authentication and privileges', () => {
  it('answers every API route with ES 401 without credentials', async () => {
    for (const p of ['session', 'contexts', 'credentials', 'log', 'state', 'chart', 'cluster', 'feed', 'credentials/apikey/x']) {
      const r = await n.as(undefined, 'GET', `/_console/api/${p}`);
      expect(r.status).toBe(401);
      expect(r.json.error.type).toBe('security_exception');
      expect(r.headers.get('www-authenticate')).toContain('Basic');
    }
  });

  it('tells each user what their privileges let them see', async () => {
    const o = await n.as(ops, 'GET', '/_console/api/session');
    expect(o.status).toBe(200);
    expect(o.json.user).toEqual({ username: 'ops', realm: 'default_native', authentication_type: 'realm' });
    expect(o.json.access).toEqual({ monitor: true, api_keys: 'all', tokens: false, service_tokens: false, users: false });
    const a = await n.as(app, 'GET', '/_console/api/session');
    expect(a.json.access).toEqual({ monitor: false, api_keys: 'own', tokens: false, service_tokens: false, users: false });
    const e = await n.as(basic('elastic', 'changeme-test-1'), 'GET', '/_console/api/session');
    expect(e.json.access).toEqual({ monitor: true, api_keys: 'all', tokens: true, service_tokens: true, users: true });
    expect(o.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses contexts, chart and cluster without monitor with ES 403 naming the privileges', async () => {
    for (const [p, action] of [['contexts', 'contexts'], ['chart', 'chart'], ['cluster', 'cluster']]) {
      const r = await n.as(app, 'GET', `/_console/api/${p}`);
      expect(r.status).toBe(403);
      expect(r.json.error.type).toBe('security_exception');
      expect(r.json.error.reason).toBe(
        `action [cluster:monitor/xpack/console/${action}] is unauthorized for user [app] with effective roles [books_reader], this action is granted by the cluster privileges [monitor,manage,all]`,
      );
    }
  });
});

describe('open contexts', () => {
  it('lists scrolls and PITs with owner, indices, pages served, keep-alive and per-owner totals against the limit', async () => {
    const c = n.client({ user: 'app' });
    const first = await c.search({ index: 'books', scroll: '1m', size: 2, sort: ['_doc'] });
    await c.scroll({ scroll_id: first._scroll_id!, scroll: '1m' });
    const pit = await c.openPointInTime({ index: 'books', keep_alive: '1m' });
    for (let i = 0; i < 3; i++) await c.search({ pit: { id: pit.id }, size: 1 });
    const id = contextOf(n.t, first._scroll_id!);
    const r = await n.as(ops, 'GET', '/_console/api/contexts');
    expect(r.status).toBe(200);
    const scroll = r.json.contexts.find((x: { id: string }) => x.id === id);
    expect(scroll).toMatchObject({ kind: 'scroll', owner: { username: 'app', realm: 'default_native' }, indices: ['books'], shards: 1, keep_alive_ms: 60_000, pages: 2, in_use: false });
    expect(scroll.node).toEqual({ id: n.t.sys.ctx.node.id, name: n.t.sys.ctx.node.name });
    expect(scroll.expires_at).toBeGreaterThan(r.json.now);
    expect(scroll.expires_at).toBeLessThanOrEqual(r.json.now + 60_000);
    const p = r.json.contexts.find((x: { kind: string }) => x.kind === 'pit');
    expect(p).toMatchObject({ owner: { username: 'app' }, pages: 3 });
    expect(r.json.limit).toEqual({ setting: 'search.max_open_scroll_context', max: 500, open_scroll_shard_contexts: 1 });
    expect(r.json.owners).toEqual([{ owner: { username: 'app', realm: 'default_native' }, scrolls: 1, scroll_shard_contexts: 1, pits: 1, share: 1 / 500 }]);
    // No opaque scroll or PIT id leaves the node through the console.
    expect(r.text).not.toContain(first._scroll_id!);
    expect(r.text).not.toContain(pit.id);
    await c.clearScroll({ scroll_id: first._scroll_id! });
    await c.closePointInTime({ id: pit.id });
  });
});

describe('async searches in the console (issue 22)', () => {
  it('lists a kept async search, streams its facts without the request or its id, and folds it as of a moment', async () => {
    const f = await feed(ops, '?aggregate=asyncsearch');
    const c = n.client({ user: 'app' });
    const r = await c.asyncSearch.submit({ index: 'books', keep_on_completion: true, wait_for_completion_timeout: '10s', q: 'title:book', size: 1 });
    const esId = r.id!;
    const listed = await n.as(ops, 'GET', '/_console/api/contexts');
    const row = listed.json.contexts.find((x: { kind: string }) => x.kind === 'async_search');
    expect(row).toMatchObject({ kind: 'async_search', owner: { username: 'app', realm: 'default_native' }, indices: ['books'], status: 'completed', in_use: false });
    const id = row.id as string;
    expect(listed.text).not.toContain(esId);
    const submitted = await f.next((e) => e.data?.type === 'asyncsearch.submitted' && e.data.aggregate_id === id);
    expect(submitted.data).toMatchObject({ aggregate: 'asyncsearch', owner: { username: 'app', realm: 'default_native' }, indices: ['books'] });
    expect(submitted.data.data.keepAliveMs).toBe(5 * 86_400_000);
    const completed = await f.next((e) => e.data?.type === 'asyncsearch.completed' && e.data.aggregate_id === id);
    expect(completed.data.owner).toEqual({ username: 'app', realm: 'default_native' }); // resolved from the submitted fact
    expect(completed.data.data).toMatchObject({ status: 200, partial: false });
    const shown = JSON.stringify(f.events);
    expect(shown).not.toContain(esId);
    expect(shown).not.toContain('title:book');
    // the fold as of a moment: live while kept, deleted after
    const submittedAt = Date.parse(submitted.data.time);
    const at = async (t: number | string, ended = false) => (await n.as(ops, 'GET', `/_console/api/state?at=${t}${ended ? '&ended=true' : ''}`)).json;
    expect((await at(submittedAt - 1)).rows.find((x: { id: string }) => x.id === id)).toBeUndefined();
    const then = (await at(submittedAt)).rows.find((x: { id: string }) => x.id === id);
    expect(then).toMatchObject({ aggregate: 'asyncsearch', fields: { indices: 'books', owner: 'app@default_native' } });
    expect(['running', 'completed']).toContain(then.status); // it completed within the same millisecond or after
    await c.asyncSearch.delete({ id: esId });
    const after = await eventually(async () => {
      const s = await at('now', true);
      return s.rows.find((x: { id: string; status: string }) => x.id === id && x.status === 'deleted');
    });
    expect(after.fields).toMatchObject({ completion_status: 200, by: 'app' });
    expect((await at('now')).rows.find((x: { id: string }) => x.id === id)).toBeUndefined();
    // a user without monitor sees none of it
    expect((await n.as(app, 'GET', `/_console/api/state?at=${submittedAt}`)).json.rows.filter((x: { aggregate: string }) => x.aggregate === 'asyncsearch')).toEqual([]);
  });
});

describe('the live feed', () => {
  it('streams context facts to a monitor user, resolved to their owner, without pinned searchers or the request', async () => {
    const f = await feed(ops);
    expect(f.status).toBe(200);
    const c = n.client({ user: 'app' });
    const r = await c.search({ index: 'books', scroll: '1m', size: 1, q: 'title:book' });
    const id = contextOf(n.t, r._scroll_id!);
    const opened = await f.next((e) => e.data?.type === 'scroll.opened' && e.data.aggregate_id === id);
    expect(opened.data).toMatchObject({ aggregate: 'scroll', seq: 1, owner: { username: 'app', realm: 'default_native' }, indices: ['books'] });
    expect(opened.data.data).toMatchObject({ indices: ['books'], keepAliveMs: 60_000, shards: 1 });
    expect(opened.data.data.pinned).toBeUndefined();
    expect(opened.data.data.request).toBeUndefined();
    await c.clearScroll({ scroll_id: r._scroll_id! });
    // The cleared fact names no owner; the feed resolves it from the opened one.
    const cleared = await f.next((e) => e.data?.type === 'scroll.cleared' && e.data.aggregate_id === id);
    expect(cleared.data.owner).toEqual({ username: 'app', realm: 'default_native' });
    expect(cleared.data.data).toEqual({ by: 'app' });
  });

  it('shows a user without monitor no context fact, and only their own API keys, never a hash', async () => {
    const f = await feed(app);
    const c = n.client({ user: 'app' });
    const r = await c.search({ index: 'books', scroll: '1m', size: 1 });
    await n.t.es.security.createApiKey({ name: 'not-apps-key' }); // elastic's: app must not see it
    const own = await c.security.createApiKey({ name: 'apps-own-key' });
    const created = await f.next((e) => e.data?.type === 'apikey.created' && e.data.aggregate_id === own.id);
    expect(created.data.data).toMatchObject({ name: 'apps-own-key' });
    expect(JSON.stringify(created.data)).not.toMatch(/hash|SSHA256|limitedBy|roleDescriptors/);
    // Facts reach a feed in log order: by the time app's key shows, the scroll and the other key would have.
    expect(f.events.filter((e) => e.event === 'fact').map((e) => e.data.type)).toEqual(['apikey.created']);
    await c.clearScroll({ scroll_id: r._scroll_id! });
  });

  it('narrows to an aggregate, an owner or an index on request, and refuses an unknown aggregate with ES 400', async () => {
    const f = await feed(ops, '?aggregate=pit&owner=app&index=bo*');
    const c = n.client({ user: 'app' });
    const s = await c.search({ index: 'books', scroll: '1m', size: 1 });
    const pit = await c.openPointInTime({ index: 'books', keep_alive: '1m' });
    const opened = await f.next((e) => e.data?.type === 'pit.opened');
    expect(opened.data.owner.username).toBe('app');
    expect(f.events.filter((e) => e.event === 'fact').map((e) => e.data.aggregate)).toEqual(['pit']);
    await c.clearScroll({ scroll_id: s._scroll_id! });
    await c.closePointInTime({ id: pit.id });
    const bad = await n.as(ops, 'GET', '/_console/api/feed?aggregate=scroll,bogus');
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: 'illegal_argument_exception', reason: 'unknown aggregate [bogus], expected one of [scroll, pit, asyncsearch, apikey, token, servicetoken, user, role, node]' });
  });

  it('ends a feed whose API key is invalidated (credentials are re-checked while it runs)', async () => {
    const key = await n.client({ user: 'ops' }).security.createApiKey({ name: 'feed-key' });
    const f = await feed(`ApiKey ${key.encoded}`);
    expect(f.status).toBe(200);
    await n.t.es.security.invalidateApiKey({ ids: [key.id] });
    const end = await f.next((e) => e.event === 'end', 5_000);
    expect(end.data.reason).toContain('unable to authenticate');
    await f.ended;
  });
});

describe('credentials', () => {
  it('lists API keys with expiry and last use on this node, own keys only under manage_own_api_key', async () => {
    const appClient = n.client({ user: 'app' });
    const key = await appClient.security.createApiKey({ name: 'used-key', expiration: '1d' });
    const before = Date.now();
    await n.client({ apiKey: key.encoded }).search({ index: 'books', size: 1 });
    const all = await n.as(ops, 'GET', '/_console/api/credentials');
    expect(all.json.api_keys.visible).toBe('all');
    const row = all.json.api_keys.keys.find((k: { id: string }) => k.id === key.id);
    expect(row).toMatchObject({ name: 'used-key', owner: { username: 'app', realm: 'default_native' }, status: 'active', expiration: key.expiration });
    expect(row.last_used).toBeGreaterThanOrEqual(before);
    expect(all.json.tokens).toEqual({ visible: false, total: 0, pairs: [] });
    expect(JSON.stringify(all.json)).not.toMatch(/hash|SSHA256/);
    const own = await n.as(app, 'GET', '/_console/api/credentials');
    expect(own.json.api_keys.visible).toBe('own');
    expect(own.json.api_keys.keys.length).toBeGreaterThan(0);
    expect(own.json.api_keys.keys.every((k: { owner: { username: string } }) => k.owner.username === 'app')).toBe(true);
    expect(all.json.api_keys.keys.some((k: { owner: { username: string } }) => k.owner.username !== 'app')).toBe(true);
  });

  it('lists live token pairs with their last use to manage_token', async () => {
    const grant = await n.t.es.security.getToken({ grant_type: 'password', username: 'app', password: 'console-test-pw' });
    const r0 = await n.as(`Bearer ${grant.access_token}`, 'GET', '/_security/_authenticate');
    expect(r0.status).toBe(200);
    const r = await n.as(basic('tokens'), 'GET', '/_console/api/credentials');
    expect(r.json.tokens.visible).toBe(true);
    const pair = r.json.tokens.pairs.find((p: { username: string; last_used: number | null }) => p.username === 'app' && p.last_used !== null);
    expect(pair).toMatchObject({ realm: 'default_native', grant_type: 'password', status: 'active', access_invalidated: false });
    expect(r.text).not.toContain(grant.access_token);
    expect(r.json.api_keys.visible).toBe('none');
  });

  it("tells an API key's life from the log, and hides other users' keys as if they did not exist", async () => {
    const key = await n.client({ user: 'ops' }).security.createApiKey({ name: 'history-key' });
    await n.t.es.security.invalidateApiKey({ ids: [key.id] });
    const r = await n.as(ops, 'GET', `/_console/api/credentials/apikey/${key.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ aggregate: 'apikey', id: key.id, status: 'invalidated', name: 'history-key', owner: { username: 'ops' } });
    expect(r.json.history.map((h: { type: string }) => h.type)).toEqual(['apikey.created', 'apikey.invalidated']);
    expect(r.text).not.toMatch(/hash|SSHA256/);
    const other = await n.as(app, 'GET', `/_console/api/credentials/apikey/${key.id}`);
    expect(other.status).toBe(404);
    expect(other.json.error.type).toBe('resource_not_found_exception');
    const bad = await n.as(ops, 'GET', '/_console/api/credentials/password/x');
    expect(bad.status).toBe(400);
    expect(bad.json.error.type).toBe('illegal_argument_exception');
    const junk = await n.as(ops, 'GET', `/_console/api/credentials/apikey/${encodeURIComponent('a.b>*')}`);
    expect(junk.status).toBe(400);
  });
});

describe('history', () => {
  it('folds the log as of a moment: a scroll is absent before it opened, open while it was, cleared after', async () => {
    const c = n.client({ user: 'app' });
    const r = await c.search({ index: 'books', scroll: '1m', size: 1 });
    const id = contextOf(n.t, r._scroll_id!);
    const opened = await eventually(async () => {
      const h = await n.as(ops, 'GET', `/_contexts/${id}`);
      return h.status === 200 && Date.parse(h.json.opened_at);
    });
    await c.clearScroll({ scroll_id: r._scroll_id! });
    const at = async (t: number | string, ended = false) => (await n.as(ops, 'GET', `/_console/api/state?at=${t}${ended ? '&ended=true' : ''}`)).json;
    const before = await at(opened - 1);
    expect(before.rows.find((x: { id: string }) => x.id === id)).toBeUndefined();
    const during = await at(opened);
    expect(during.rows.find((x: { id: string }) => x.id === id)).toMatchObject({ aggregate: 'scroll', status: 'open', fields: { indices: 'books', owner: 'app@default_native' } });
    const after = await eventually(async () => {
      const s = await at('now', true);
      return s.rows.find((x: { id: string; status: string }) => x.id === id && x.status === 'cleared') && s;
    });
    expect(after.at).toBeGreaterThan(opened);
    const live = await at('now');
    expect(live.rows.find((x: { id: string }) => x.id === id)).toBeUndefined();
    // A user without monitor sees no context in the fold.
    const appView = (await n.as(app, 'GET', `/_console/api/state?at=${opened}`)).json;
    expect(appView.rows.filter((x: { aggregate: string }) => x.aggregate === 'scroll' || x.aggregate === 'pit')).toEqual([]);
  });

  it('refuses a time it cannot read with ES 400', async () => {
    const r = await n.as(ops, 'GET', '/_console/api/state?at=yesterday-ish');
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'illegal_argument_exception' });
    expect(r.json.error.reason).toContain('failed to parse [at] with value [yesterday-ish]');
  });

  it('reports the time range of the log for the slider', async () => {
    const r = await n.as(app, 'GET', '/_console/api/log');
    expect(r.status).toBe(200);
    expect(r.json.messages).toBeGreaterThan(0);
    expect(r.json.first).toBeLessThanOrEqual(r.json.last);
    expect(r.json.last).toBeLessThanOrEqual(Date.now());
  });

  it('charts the peak of open contexts per owner over time', async () => {
    const c = n.client({ user: 'app' });
    const start = Date.now();
    const a = await c.search({ index: 'books', scroll: '1m', size: 1 });
    const b = await c.search({ index: 'books', scroll: '1m', size: 1 });
    await c.clearScroll({ scroll_id: [a._scroll_id!, b._scroll_id!] });
    const r = await eventually(async () => {
      const x = await n.as(ops, 'GET', `/_console/api/chart?from=${start}&to=${Date.now() + 1000}&buckets=4`);
      return x.json.series?.length && x;
    });
    expect(r.json.buckets).toBe(4);
    const app = r.json.series.find((s: { owner: { username: string } | null }) => s.owner?.username === 'app');
    expect(app.label).toBe('app (default_native)');
    expect(app.peak).toBe(2);
    expect(r.json.total).toHaveLength(4);
    expect(Math.max(...r.json.total)).toBeGreaterThanOrEqual(2);
    for (const q of ['buckets=0', 'buckets=x', 'from=2&to=1', 'from=whenever']) {
      const bad = await n.as(ops, 'GET', `/_console/api/chart?${q}`);
      expect(bad.status).toBe(400);
      expect(bad.json.error.type).toBe('illegal_argument_exception');
    }
  });
});

describe('cluster', () => {
  it('lists this node with its shard copies and the copies no node holds', async () => {
    const r = await n.as(ops, 'GET', '/_console/api/cluster');
    expect(r.status).toBe(200);
    expect(r.json.nodes).toHaveLength(1);
    expect(r.json.nodes[0]).toMatchObject({ id: n.t.sys.ctx.node.id, local: true });
    expect(r.json.nodes[0].shards).toContainEqual({ index: 'books', shard: 0, primary: true, state: 'STARTED', node: n.t.sys.ctx.node.id });
    expect(r.json.unassigned).toContainEqual({ index: 'books', shard: 0, primary: false, state: 'UNASSIGNED', node: null });
  });
});

describe('with security disabled', () => {
  it('needs no login: the page is told so, and every view is open', async () => {
    const { startTestNode } = await import('../../support/node');
    const open = await startTestNode({ security: false });
    try {
      const sec = await fetch(`${open.url}/_console/api/security`).then((r) => r.json() as Promise<any>);
      expect(sec).toEqual({ enabled: false });
      const session = await fetch(`${open.url}/_console/api/session`).then((r) => r.json() as Promise<any>);
      expect(session.user).toBeNull();
      expect(session.access).toEqual({ monitor: true, api_keys: 'all', tokens: true, service_tokens: true, users: true });
      const contexts = await fetch(`${open.url}/_console/api/contexts`);
      expect(contexts.status).toBe(200);
      const creds = await fetch(`${open.url}/_console/api/credentials`).then((r) => r.json() as Promise<any>);
      expect(creds.api_keys).toEqual({ visible: 'none', total: 0, keys: [] });
    } finally {
      await open.stop();
    }
  });

  it('tells a secured node apart without credentials', async () => {
    const r = await n.as(undefined, 'GET', '/_console/api/security');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ enabled: true });
  });
});
