import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import pino, { type Logger } from 'pino';
import { Bus, ensureStreams } from '../streams';
import { loadSettings, type Settings } from './config';
import { ensureNatsServer, startEmbeddedNats, type EmbeddedNats } from './embeddedNats';
import { connectBus, serverList, type BusConnection } from '../streams/busConnection';
import { natsConnectionFromSettings } from './bus/natsSettings';
import { warnIfAnonymous } from './bus/anonymousProbe';
import { httpTls, type HttpTls } from './tls/httpSsl';
import { readCompactedState, keptHistory } from '../streams/compactedState';
import { Compactor } from './compaction/compactor';
import { eventsRetentionMs } from './compaction/retention';
import type { NodeContext, NodeIdentity } from './nodeContext';
import { Router } from './edge/router';
import { startEdge, type Edge } from './edge/httpEdge';
import { CircuitBreakerService } from './wire/circuitBreaker';
import { DEFAULT_MAX_CONTENT_LENGTH, parseByteSize } from './edge/httpBody';
import { checkMaxPayload, ShardClient } from './search/shardClient';
import { IdCodec } from './search/ids';
import { newSearchStats } from './search/services';
import { ClusterState } from './cluster';
import { FloodStage } from './cluster/floodStage';
import { diskThresholds } from './cluster/diskThreshold';
import { Allocator, leasesBucket } from './cluster/allocator';
import { Membership, type NodeRecord } from './cluster/membership';
import { startNodeFacts } from './cluster/nodeFacts';
import { clusterIdentity, readIdKeys, CLUSTER_BUCKET, ID_KEYS_WATCH } from './cluster/identity';
import { Kvm } from '@nats-io/kv';
import { VERSION } from './edge/routes/cluster';
import { localInfo } from './edge/views/nodes';
import { startLoopMonitor } from './edge/views/eventLoop';
import { callNodes, serveNode } from './cluster/nodeRpc';
import { liveContexts } from './edge/routes/contextList';
import { ContextDirectory, ContextRegistry, ContextService, reviveContexts, writeCheckpoint } from './contexts';
import type { ContextState } from '../streams/evolve';
import { startSecurity, type SecurityModule, type SecurityModuleWithServices } from './security';
import { documentRoutes } from './edge/routes/documents';
import { bulkRoutes } from './edge/routes/bulk';
import { indexRoutes } from './edge/routes/indices';
import { segmentRoutes } from './edge/routes/segments';
import { indexStateRoutes } from './edge/routes/indexState';
import { asyncSearchRoutes } from './edge/routes/asyncSearch';
import { AsyncSearchRegistry } from './contexts/asyncSearches';
import { AsyncResults } from './contexts/asyncResults';
import { asyncRunner } from './search/asyncSearchService';
import { searchRoutes } from './edge/routes/search';
import { scrollFromFact, type PagingServices } from './search';
import { scrollRoutes } from './edge/routes/scroll';
import { pitRoutes } from './edge/routes/pit';
import { contextRoutes } from './edge/routes/contexts';
import { clusterRoutes } from './edge/routes/cluster';
import { documentApiRoutes } from './edge/routes/documentApis';
import { viewRoutes, viewsAttach } from './edge/routes/views';

/** How long a metadata change waits for the other nodes to apply it (ES's ack timeout is 30 s; a dead node is dropped from membership within `cluster.node_timeout_ms`). */
const META_ACK_MS = 10_000;

export interface SystemOptions {
  host?: string;
  port?: number;
  /** Connect here; without it an embedded nats-server child is started. */
  natsUrl?: string;
  /**
   * Only the servers of `natsUrl`, never the ones the NATS cluster announces (nats.js
   * `ignoreClusterUpdates`): a test cuts a node off by stopping its one server.
   */
  natsPinned?: boolean;
  dataDir?: string;
  configDir?: string;
  settings?: Settings;
  log?: Logger;
  /** Progress of the start-up replay (document log). */
  onReplayProgress?: (done: number, total: number) => void;
  /**
   * Started on the node's routes before the edge opens, stopped in reverse: the web console
   * (actors/console `startConsole`), which sits above this module and so is handed in by the
   * entry point rather than imported here.
   */
  extensions?: EdgeExtension[];
  /** Clock of credential lifetimes and context keep-alives (tests start a node "as of" another time). */
  clock?: { now(): number };
}

/** A module that adds routes (and may wrap the security gate) before the edge starts; returns its stop. */
export type EdgeExtension = (router: Router, services: PagingServices, security: SecurityModuleWithServices) => () => void;

export interface System {
  url: string;
  ctx: NodeContext;
  /** The edge's route table (the node context holds it as plain `Routes`). */
  router: Router;
  /** Live nodes of the cluster (this one included). */
  membership: Membership;
  allocator: Allocator;
  services: PagingServices;
  security: SecurityModule;
  nats?: EmbeddedNats;
  /** HTTPS material of the edge (undefined: plain HTTP). */
  tls?: HttpTls;
  /** Stops everything in reverse order of start. */
  stop(): Promise<void>;
}

interface NodeFile {
  id: string;
  /** Before clustering: this node's own cluster uuid and id-signing key (ids it issued still verify). */
  clusterUuid: string;
  idKey: string;
}

/** Node identity (and the pre-cluster id-signing key); kept in DATA_DIR (mode 0600). */
function nodeFile(dataDir: string): NodeFile {
  const p = join(dataDir, 'node.json');
  if (existsSync(p)) return JSON.parse(readFileSync(p, 'utf8')) as NodeFile;
  const f: NodeFile = {
    id: randomBytes(16).toString('base64url').slice(0, 22),
    clusterUuid: randomBytes(16).toString('base64url').slice(0, 22),
    idKey: randomBytes(32).toString('base64'),
  };
  writeFileSync(p, JSON.stringify(f), { mode: 0o600 });
  return f;
}

/**
 * Starts one node: NATS (embedded or given), the event log streams, the cluster state rebuilt from
 * the document log, the security module rebuilt from the lifecycle log, the context registry, and
 * the HTTP edge last. `stop()` undoes it in reverse.
 */
export async function startSystem(opts: SystemOptions = {}): Promise<System> {
  const settings = opts.settings ?? loadSettings();
  startLoopMonitor(); // _nodes/stats event_loop
  const log = opts.log ?? pino({ level: process.env.LOG_LEVEL ?? 'info' });
  const dataDir = resolve(opts.dataDir ?? process.env.DATA_DIR ?? './data');
  const configDir = resolve(opts.configDir ?? process.env.CONFIG_DIR ?? './config');
  mkdirSync(dataDir, { recursive: true });
  mkdirSync(configDir, { recursive: true });
  const stops: Array<() => Promise<void> | void> = [];
  const stop = async () => {
    for (const s of stops.reverse()) {
      try {
        await s();
      } catch (e) {
        log.warn({ err: e }, 'error while stopping');
      }
    }
  };
  try {
    // HTTPS first: a refused configuration (plain HTTP on a non-loopback HOST) starts nothing.
    const host = opts.host ?? process.env.HOST ?? '127.0.0.1';
    const tls = await httpTls(settings, host, configDir);
    const retentionMs = eventsRetentionMs(settings); // disagreeing retention settings start nothing
    let nats: EmbeddedNats | undefined;
    const natsUrl = opts.natsUrl ?? process.env.NATS_URL;
    let natsLogin: BusConnection;
    if (!natsUrl) {
      ensureNatsServer((m) => log.info(m));
      nats = await startEmbeddedNats(join(dataDir, 'nats'));
      stops.push(() => nats!.stop());
      natsLogin = nats.connection('node');
      log.info({ url: nats.url }, 'embedded nats-server started');
    } else {
      // NATS_URL may list several servers of a NATS cluster (comma-separated), in order of preference;
      // the login and TLS come from the nats.* settings.
      natsLogin = natsConnectionFromSettings(serverList(natsUrl), settings);
    }
    // Servers in the order given (each node prefers its own), reconnecting fast to another when one dies.
    const nc: NatsConnection = await connectBus(natsLogin, { name: 'es-node', maxReconnectAttempts: -1, noRandomize: true, reconnectTimeWait: 250, ...(opts.natsPinned ? { ignoreClusterUpdates: true } : {}) });
    if (!nats) await warnIfAnonymous(natsLogin, log);
    stops.push(() => nc.drain().catch(() => nc.close()));
    checkMaxPayload(nc, log); // warns below the README's 8 MB
    const replicas = settings.get<number | undefined>('cluster.stream_replicas', undefined);
    // The room the document log has (ES's disk watermarks over the JetStream store): a new document
    // log is capped below the store's size, so lifecycle facts always have room.
    let isMaster = () => false;
    diskThresholds((k) => settings.get<unknown>(k, undefined)); // refuses a bad combination at start, as ES
    const flood = new FloodStage({
      nc, settings, log, manager: () => isMaster(),
      ...(nats ? { storeDir: join(dataDir, 'nats', 'jetstream'), serverLog: join(dataDir, 'nats', 'nats-server.log') } : {}),
    });
    // No max_age on ES_EVT: the compactor removes facts older than events.retention once compacted.
    await ensureStreams(nc, { eventMaxAgeMs: 0, replicas: replicas === undefined ? undefined : Number(replicas), dataMaxBytes: await flood.dataCap() });
    await flood.start();
    stops.push(() => flood.stop());
    const bus = new Bus(nc);
    const nf = nodeFile(dataDir);
    const signingKey = settings.str('cluster.id_signing_key', '');
    const identity = await clusterIdentity(nc, { replicas: Number(replicas ?? 1), ...(signingKey ? { signingKey } : {}) });
    const node: NodeIdentity = {
      id: nf.id,
      name: settings.str('node.name', hostname()),
      clusterName: settings.str('cluster.name', 'elasticsearch'),
      clusterUuid: identity.uuid,
      host,
    };
    const router = new Router();
    const breakers = new CircuitBreakerService((k) => settings.get(k, undefined));
    const ctx: NodeContext = { nc, bus, log, settings, router, node, dataDir, configDir, breakers };

    const cluster = new ClusterState(ctx, opts.onReplayProgress);
    let httpUrl = '';
    const startedAt = Date.now();
    let nodeStats = (): Record<string, number> => ({});
    const info = localInfo();
    const record = (): NodeRecord => {
      const copies: NodeRecord['copies'] = {};
      const durable: NonNullable<NodeRecord['durable']> = {};
      for (const c of cluster.localCopies()) {
        if (!c.role) continue;
        copies[`${c.ref.indexUuid}/${c.ref.n}`] = c.state;
        durable[`${c.ref.indexUuid}/${c.ref.n}`] = c.store.committedPoint().applied;
      }
      return {
        id: node.id, name: node.name, host: node.host, http: httpUrl, version: VERSION.number, roles: ['data', 'ingest', 'master'],
        startedAt, copies, durable, stats: nodeStats(), master: isMaster(), info,
      };
    };
    const membership = new Membership(nc, record, log, {
      heartbeatMs: settings.num('cluster.heartbeat_interval_ms', 1_000),
      nodeTimeoutMs: settings.num('cluster.node_timeout_ms', 5_000),
    });
    cluster.remoteCopyStarted = (id, uuid, n) => membership.record(id)?.copies[`${uuid}/${n}`] === 'started';
    cluster.durableOf = (id, uuid, n) => membership.record(id)?.durable?.[`${uuid}/${n}`];
    cluster.nodeStartedAt = (id) => membership.record(id)?.startedAt;
    membership.onChange(() => cluster.notify());
    let published = '';
    cluster.onChange(() => {
      const now = JSON.stringify(record().copies);
      if (now !== published) {
        published = now;
        membership.publishNow();
      }
    });
    await membership.start();
    stops.push(() => membership.stop());
    const t0 = Date.now();
    const replayed = await cluster.start();
    stops.push(() => cluster.stop());
    log.info({ ...replayed, ms: Date.now() - t0 }, 'document log replayed');
    cluster.snapshots.mayPurge = () => membership.liveIds().length <= 1;
    const allocator = new Allocator(await leasesBucket(nc, Number(replicas ?? 1)), cluster, membership, log);
    isMaster = () => allocator.leader;
    allocator.start();
    stops.push(() => allocator.stop());
    // Rotated id keys reach every node while it runs.
    const ids = new IdCodec(identity.keys, Buffer.from(nf.idKey, 'base64'));
    if (!signingKey) {
      const kv = await new Kvm(nc).open(CLUSTER_BUCKET);
      const watch = await kv.watch({ key: ID_KEYS_WATCH });
      void (async () => {
        for await (const e of watch) if (e.operation === 'PUT') ids.setKeys(await readIdKeys(kv));
      })().catch(() => undefined);
      stops.push(() => watch.stop());
    }

    // Start-up reads the compacted state (ES_STATE) plus the ES_EVT tail after it (actors/compaction).
    const compacted = await readCompactedState(nc);
    const history = await keptHistory(nc);
    const security = await startSecurity(ctx, { ...(opts.clock ? { now: () => opts.clock!.now() } : {}), compacted: { seq: compacted.seq, facts: compacted.facts, firstSeq: history.firstSeq }, readCompacted: () => readCompactedState(nc) });
    stops.push(() => security.stop());

    // Scroll contexts and PITs: this node's own as actors (registry), every node's as the log tells
    // them (directory), and the commands and adoptions between nodes (service).
    const directory = new ContextDirectory(nc, log);
    const contexts = new ContextRegistry(bus, opts.clock ?? Date, node.id, (e) => directory.apply(e));
    stops.push(() => contexts.stopAll());
    stops.push(() => directory.stop());
    cluster.onIndexDeleted((idx) => contexts.releaseIndex(idx.uuid));
    cluster.onIndexClosed((idx) => contexts.releaseIndex(idx.uuid, 'index_closed'));
    const t1 = Date.now();
    const checkpointPath = join(dataDir, 'contexts-checkpoint.json');
    const revived = await reviveContexts(nc, contexts, {
      indexExists: (uuid) => cluster.getByUuid(uuid) !== undefined,
      rebuildScroll: scrollFromFact,
      log,
      checkpointPath,
      nodeId: node.id,
      legacy: false, // contexts of older logs are adopted under a lease (one node takes them)
      directory,
      compacted: { seq: compacted.seq, states: compacted.contexts, firstSeq: history.firstSeq },
    });
    log.info({ ...revived, ms: Date.now() - t1 }, 'search contexts revived from the lifecycle log');
    // One node at a time keeps ES_STATE current and ages facts out of ES_EVT (actors/compaction).
    const compactor = new Compactor({ nc, leases: await leasesBucket(nc, Number(replicas ?? 1)), nodeId: node.id, log, retentionMs, ...(opts.clock ? { now: () => opts.clock!.now() } : {}) });
    compactor.start();
    stops.push(() => compactor.stop());
    const contextService = new ContextService({
      nc, nodeId: node.id, registry: contexts, directory,
      liveNodes: () => membership.liveIds(),
      warm: () => membership.warm,
      leases: await leasesBucket(nc, Number(replicas ?? 1)),
      rebuildScroll: scrollFromFact,
      log,
    });
    contextService.start();
    membership.onLeft((id) => contextService.nodeLeft(id));
    // A context of ours another node adopted (we were taken for dead): it is theirs from now on.
    directory.onChange((st) => {
      if (st.node && st.node !== node.id && contexts.get(st.id)) contexts.disown(st.id);
    });
    // Every open context of the cluster pins its searcher on this node's copies (their segments stay
    // until it ends), so any copy can serve its pages and adopt it.
    const pinCopies = (st: ContextState) => {
      for (const p of st.pinned) {
        const copy = cluster.localCopy(p.indexUuid, p.n);
        if (!copy) continue;
        if (st.status !== 'open') copy.store.unpin(st.id);
        else if (!copy.store.pin(st.id, p.searcher.seqNo)) log.warn({ context: st.id, shard: copy.label }, 'this copy merged away docs the context reads: its pages are served by other copies');
      }
    };
    directory.onChange(pinCopies);
    for (const st of directory.open()) pinCopies(st);
    // pins restored from commits of contexts that ended while the node was down
    for (const copy of cluster.localCopies()) {
      for (const p of copy.store.pinned()) for (const id of p.contexts) if (directory.get(id)?.status !== 'open') copy.store.unpin(id);
    }
    stops.push(() => contextService.stop());
    void contextService.adoptOrphans();
    // Async searches: actors here, every node's folded from the same consumer, results in a node-only KV bucket.
    const asyncSearches = new AsyncSearchRegistry({
      nc, bus, nodeId: node.id, log,
      leases: await leasesBucket(nc, Number(replicas ?? 1)),
      results: await AsyncResults.open(nc, replicas === undefined ? undefined : Number(replicas)),
      liveNodes: () => membership.liveIds(),
      warm: () => membership.warm,
      catchUp: () => directory.catchUp(),
    });
    directory.onFacts('asyncsearch', (e) => asyncSearches.apply(e));
    // Checkpoints of the context projection bound the next start-up's fold (actors/contexts/checkpoint.ts).
    const checkpoint = () =>
      writeCheckpoint(nc, contexts, directory, checkpointPath).catch((e: Error) => log.warn({ err: e.message }, 'context checkpoint failed'));
    await checkpoint();
    const every = setInterval(() => void checkpoint(), settings.num('snapshot.interval_ms', 300_000));
    every.unref();
    stops.push(async () => {
      clearInterval(every);
      await Promise.all(contexts.list().map((r) => r.appended.catch(() => undefined)));
      await checkpoint();
    });

    const services: PagingServices = {
      ctx,
      cluster,
      shards: new ShardClient(nc, { onStoreFull: () => flood.noteFull(), onWritten: (b) => flood.noteWritten(b), indexExists: (uuid) => cluster.getByUuid(uuid) !== undefined }),
      flood,
      security: security.enabled ? { ...security, authorize: (a, act, idx) => security.gate.authorize(a, act, idx) } : undefined,
      stats: newSearchStats(),
      membership,
      nodeOps: { ping: () => true },
      contexts,
      directory,
      contextService,
      ids,
      asyncSearches,
    };
    services.nodeOps.contexts = () => liveContexts(services);
    asyncSearches.setRunner(asyncRunner(services));
    const asyncRevived = await asyncSearches.start({ seq: compacted.seq, states: compacted.asyncSearches, kept: compacted.asyncSearchesKept });
    if (asyncRevived.revived) log.info(asyncRevived, 'async searches revived from the lifecycle log');
    stops.push(() => asyncSearches.stop());
    // Metadata changes asked through the API are acknowledged once every live node applied them (ES).
    services.nodeOps.meta_applied = (body) => cluster.applied((body as { seq: number }).seq, META_ACK_MS);
    cluster.peersApplied = async (seq) => {
      const others = membership.liveIds().filter((id) => id !== node.id);
      if (others.length) await callNodes(nc, others, 'meta_applied', { seq }, META_ACK_MS + 1_000);
    };
    clusterRoutes(router, services);
    indexRoutes(router, services);
    segmentRoutes(router, services);
    indexStateRoutes(router, services);
    documentRoutes(router, services);
    bulkRoutes(router, services);
    searchRoutes(router, services);
    scrollRoutes(router, services);
    pitRoutes(router, services);
    contextRoutes(router, services);
    asyncSearchRoutes(router, services, asyncSearches);
    viewRoutes(router, services);
    const docApis = documentApiRoutes(router, services);
    stops.push(() => docApis.stop());
    for (const start of opts.extensions ?? []) stops.push(start(router, services, security)); // the console wraps security.gate before the edge starts

    const edge: Edge = await startEdge({
      host: node.host,
      port: opts.port ?? Number(process.env.PORT ?? 9200),
      router,
      security: security.enabled ? security.gate : undefined,
      log,
      maxContentLength: parseByteSize(settings.get('http.max_content_length', DEFAULT_MAX_CONTENT_LENGTH), 'http.max_content_length'),
      breakers,
      ...(tls ? { tls } : {}),
    });
    stops.push(() => edge.close());
    viewsAttach(edge.server);
    const rpc = serveNode(nc, node.id, services.nodeOps);
    stops.push(() => rpc.unsubscribe());
    httpUrl = edge.url;
    nodeStats = () => ({ open_scroll_contexts: contexts.shardContexts('scroll'), open_pits: contexts.list('pit').length });
    membership.publishNow();
    stops.push(await startNodeFacts({ nc, log, membership, allocator })); // node.joined now; node.left first thing on stop
    log.info({ url: edge.url, security: security.enabled, node: node.id, cluster: node.clusterUuid }, 'node started');
    return { url: edge.url, ctx, router, services, security, nats, tls, membership, allocator, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}

