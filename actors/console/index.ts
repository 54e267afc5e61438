import { EsError, illegalArgument } from '../wire/esErrors';
import type { Router } from '../edge/router';
import type { EsRequest, EsResponse } from '../wire/rest';
import type { SecurityGate } from '../wire/rest';
import type { PagingServices } from '../search';
import { keepAliveLimits } from '../search';
import type { SecurityModuleWithServices } from '../security';
import type { Authentication } from '../wire/security';
import { accessOf, ACTIONS, renderAccess, type Access } from './access';
import { FactHub, type Resolver } from './factHub';
import { openFeed, parseFeedFilters, AGGREGATES } from './feed';
import { credentialHistory, FoldGate, logBounds, openContextsSeries, stateAt, timeParam } from './history';
import { LastUse, recordingGate } from './lastUse';
import { addPublic, SECURITY_HEADERS, staticRoutes } from './static';
import { clusterView, contextsView, credentialsView, localShardCopies, ServiceTokenIndex, type ShardCopySource } from './views';

export { LastUse } from './lastUse';
export type { ShardCopySource, ShardCopy } from './views';

/** Tuning (tests shorten the feed's timers). */
export interface ConsoleOptions {
  /** How often a feed re-checks its caller's credentials and privileges (default: setting `console.feed.revalidate_interval_ms`, 30 s). */
  revalidateMs?: number;
  /** Comment lines that keep idle feeds open through proxies (default 15 s). */
  heartbeatMs?: number;
  /** Feeds open at once on this node (default 100); more get 429. */
  maxFeeds?: number;
  /** Where shard copies live (default: this node holds every primary). */
  shardCopies?: ShardCopySource;
}

const json = (body: unknown): EsResponse => ({ body, headers: { 'cache-control': 'no-store', ...SECURITY_HEADERS } });

function intParam(q: Record<string, string>, name: string, def: number, min: number, max: number): number {
  const v = q[name];
  if (v === undefined || v === '') return def;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw illegalArgument(`[${name}] must be an integer between ${min} and ${max}, got [${v.slice(0, 50)}]`);
  return n;
}

const boolParam = (v: string | undefined) => v === 'true' || v === '';

/**
 * The web console (issue 15): a page at `GET /_console` and the JSON and event-stream routes it
 * reads under `/_console/api/`. The page itself is public (it holds no data); every API route is
 * authenticated like any other, and shows only what the caller's privileges allow (access.ts).
 *
 * Also wraps `security.gate` so each successful authentication records the credential's last use
 * (lastUse.ts): call it before the HTTP edge starts. Returns the console's stop.
 *
 * @example stops.push(startConsole(router, services, security));
 */
export function startConsole(router: Router, s: PagingServices, security: SecurityModuleWithServices, opts: ConsoleOptions = {}): () => void {
  const lastUse = new LastUse();
  const gate: SecurityGate | undefined = security.enabled ? security.gate : undefined;
  if (gate) security.gate = recordingGate(gate, lastUse);
  const sec = security.enabled ? security.services : undefined;
  const nc = s.ctx.nc;
  const resolver: Resolver = {
    context: (id) => {
      const st = s.directory.get(id); // any node's context (the lifecycle log)
      return st && { owner: st.owner, indices: st.indices };
    },
    apiKeyOwner: (id) => sec?.apiKeys.records.get(id)?.owner,
    tokenSubject: (id) => {
      const t = sec?.tokens.get(id);
      return t && { username: t.subject.username, realm: t.subject.realm.name };
    },
    serviceTokenAccount: () => undefined,
    openContexts: () => s.directory.open().map((st) => ({ id: st.id, owner: st.owner, indices: st.indices })),
  };
  const hub = new FactHub(nc, resolver, s.ctx.log);
  const serviceTokens = new ServiceTokenIndex(nc);
  const copies = opts.shardCopies ?? localShardCopies(s);
  const maxFeeds = opts.maxFeeds ?? 100;
  const folds = new FoldGate();
  const access = (req: EsRequest): Access => accessOf(req.auth);
  const none = { kind: 'none' as const };
  const api = (path: string) => `/_console/api/${path}`;

  staticRoutes(router);
  // Public like the page: whether to ask for credentials at all (ES tells as much with a 401 on any route).
  addPublic(router, api('security'), () => json({ enabled: !!gate }));

  router.add('GET', api('session'), (req) => {
    const a = req.auth;
    return json({
      security: !!gate,
      user: a ? { username: a.user.username, realm: a.authenticationRealm.name, authentication_type: a.authenticationType, ...(a.apiKey ? { api_key: a.apiKey } : {}) } : null,
      node: { id: s.ctx.node.id, name: s.ctx.node.name },
      cluster_name: s.ctx.node.clusterName,
      access: renderAccess(access(req)),
      max_open_scroll_context: keepAliveLimits(s).maxOpenScroll,
      aggregates: AGGREGATES,
    });
  }, none);

  router.add('GET', api('contexts'), async () => json(await contextsView(s)), { kind: 'cluster', action: ACTIONS.contexts });

  router.add('GET', api('credentials'), async (req) => {
    if (!sec) return json({ now: Date.now(), security: false, api_keys: { visible: 'none', total: 0, keys: [] }, tokens: { visible: false, total: 0, pairs: [] }, service_tokens: { visible: false, tokens: [] } });
    return json(await credentialsView(sec, access(req), lastUse, serviceTokens));
  }, none);

  router.add('GET', api('credentials/{aggregate}/{id}'), async (req) => json(await credentialHistory(nc, req.params.aggregate, req.params.id, access(req))), none);

  router.add('GET', api('log'), async () => json(await logBounds(nc)), none);

  router.add('GET', api('state'), async (req) => {
    const now = Date.now();
    const at = timeParam('at', req.query.at, now, now);
    const aggregate = req.query.aggregate || undefined;
    if (aggregate && !(AGGREGATES as readonly string[]).includes(aggregate)) throw illegalArgument(`unknown aggregate [${aggregate.slice(0, 50)}]`);
    return json(await folds.run(() => stateAt(nc, at, access(req), { ended: boolParam(req.query.ended), aggregate })));
  }, none);

  router.add('GET', api('chart'), async (req) => {
    const now = Date.now();
    const to = timeParam('to', req.query.to, now, now);
    const from = timeParam('from', req.query.from, to - 3_600_000, now);
    if (!(from < to)) throw illegalArgument(`[from] must be before [to]`);
    const buckets = intParam(req.query, 'buckets', 60, 1, 500);
    return json(await folds.run(() => openContextsSeries(nc, { from, to, buckets })));
  }, { kind: 'cluster', action: ACTIONS.chart });

  router.add('GET', api('cluster'), () => json(clusterView(s, copies)), { kind: 'cluster', action: ACTIONS.cluster });

  router.add('GET', api('feed'), (req) => {
    const filters = parseFeedFilters(req.query);
    if (hub.listening >= maxFeeds) {
      throw new EsError('es_rejected_execution_exception', 429, `rejected console feed: ${maxFeeds} feeds are open on this node`);
    }
    const body = openFeed({
      hub,
      access: access(req),
      filters,
      revalidate: async () => accessOf(gate ? await gate.authenticate(req) : undefined),
      revalidateMs: opts.revalidateMs ?? s.ctx.settings.num('console.feed.revalidate_interval_ms', 30_000),
      heartbeatMs: opts.heartbeatMs ?? 15_000,
      maxBuffered: 1 << 20,
      hello: { node: s.ctx.node.name, time: Date.now(), access: renderAccess(access(req)) },
    });
    return { status: 200, body, headers: { ...SECURITY_HEADERS, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' } };
  }, none);

  return () => hub.stop();
}
