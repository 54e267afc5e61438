import { v4 as uuidv4 } from 'uuid';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { AppendUncertain, DATA_STREAM, Fenced, StreamFollower, fencedAppend, subjects, type LoggedMessage } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { EsError, indexNotFound } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { IndexMapping, ShardStore } from '../shard/engine';
import { SegmentMaintenance } from '../shard/maintenance';
import { segmentObjects, type RecoveryOffer } from '../shard/peerRecovery';
import { parseTimeValue } from '../wire/timeValue';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Kvm } from '@nats-io/kv';
import { CLUSTER_BUCKET } from './identity';
import { ShardActor, type ShardRef } from '../shard/shardActor';
import { applySettings, defaultIndexSettings, normalizeSettings, validateCreate, type IndexSettings } from './indexSettings';
import { resolveExpression, validateIndexName, type ResolveOptions } from './indexNames';

import { Snapshotter, type ClusterImage, type RestoredCluster } from './snapshots';
import type { ShardAllocation } from './allocation';
import { ClusterMetadata, type MetadataEvent } from './clusterMetadata';
import { type AliasMeta, type IndexLookup } from './aliases';
import { planAliasActions, parseAliasActions } from './aliasActions';
import type { TemplateKind } from './templates';
import { crashPoint } from '../wire/crashPoint';

/** Metadata facts of the document log (subject es.v1.data.meta). */
export type MetaEvent =
  | { kind: 'index_created'; name: string; uuid: string; creationDate: number; settings: Record<string, string>; mappings: unknown; aliases?: Record<string, AliasMeta> }
  | { kind: 'index_deleted'; uuid: string }
  | { kind: 'settings_updated'; uuid: string; settings: Record<string, string> }
  /** POST /<index>/_close and _open (ES MetadataIndexStateService): every node applies it from the log. */
  | { kind: 'index_state'; uuid: string; state: 'open' | 'close' }
  | { kind: 'mapping_updated'; uuid: string; mappings: unknown }
  | { kind: 'cluster_settings'; settings: Record<string, unknown> }
  /** Where the copies of an index's shards are, decided by the allocator (allocator.ts). */
  | { kind: 'allocation'; uuid: string; shards: ShardAllocation[] }
  /** Aliases and templates (clusterMetadata.ts). */
  | MetadataEvent;

/** A metadata fact as logged: `after` is the fact it was decided after (absent in older logs). */
export type MetaFact = MetaEvent & { after?: number };

/** A shard of an index as routes address it (any copy, or its primary, over NATS). */
export interface ShardHandle {
  ref: ShardRef;
}

export interface IndexState {
  name: string;
  uuid: string;
  creationDate: number;
  settings: IndexSettings;
  mapping: IndexMapping;
  shards: ShardHandle[];
  /** Copies of each shard per the last allocation fact (undefined until the allocator placed it). */
  allocation?: ShardAllocation[];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/** What start-up did, for the start-up log line. */
export interface StartResult {
  indices: number;
  /** Ops replayed from the log (the tail after the snapshot, or everything). */
  ops: number;
  /** S of the snapshot started from, if any. */
  snapshotSeq?: number;
  /** Time to load the snapshot. */
  snapshotMs?: number;
  /** Whole start: snapshot load, log replay, refresh. */
  ms: number;
}

/** The document log lost messages that no usable snapshot covers: refuse to start on a partial state. */
export class DocumentLogGap extends Error {
  constructor(readonly firstSeq: number, readonly coveredTo: number, dir: string) {
    super(
      `${DATA_STREAM} starts at sequence ${firstSeq} but ${coveredTo > 0 ? `the newest usable snapshot covers only up to ${coveredTo}` : 'no usable snapshot was found'}` +
        ` in ${dir}: messages ${coveredTo + 1}..${firstSeq - 1} were purged. Restore the snapshot files (or the stream) to start; starting anyway would lose documents.`,
    );
    this.name = 'DocumentLogGap';
  }
}

const copyKey = (uuid: string, n: number) => `${uuid}/${n}`;

/**
 * This node's view of the cluster's indices, built by following the document log (ES_DATA) in
 * stream order with one consumer ({@link StreamFollower}): index metadata, mappings (dynamic fields
 * included: they reach the log as `mapping_updated` before any document using them), settings,
 * and the allocation of shard copies to nodes. Every node follows the same log, so a change made
 * through any node is seen by every node.
 *
 * Metadata changes are appended to `es.v1.data.meta` stating the subject's last sequence this node
 * has applied, so two nodes deciding on the same state cannot both win (two creates of one index
 * name give one index and one 400), and are applied by the follower like everyone else's.
 *
 * The node holds the shard copies the allocation gives it ({@link ShardActor}); the follower feeds
 * each copy its shard's messages.
 */
export class ClusterState {
  private readonly byName = new Map<string, IndexState>();
  private readonly byUuid = new Map<string, IndexState>();
  private readonly copies = new Map<string, ShardActor>();
  private readonly deletedListeners: Array<(s: IndexState) => void> = [];
  private readonly closedListeners: Array<(s: IndexState) => void> = [];
  private readonly changeListeners: Array<() => void> = [];
  /** Fold of `cluster_settings` facts (what a snapshot records). */
  private readonly clusterSettings: Record<string, unknown> = {};
  /** Aliases and templates (clusterMetadata.ts). */
  readonly metadata = new ClusterMetadata();
  /** Stream sequence of the last `es.v1.data.meta` message seen (the subject's last sequence, for JetStream's check). */
  metaSeq = 0;
  /**
   * Stream sequence of the last metadata fact applied. A fact names the one it was decided after
   * (`after`); one that finds another fact applied since is refused by every node alike (two
   * writers that both got past JetStream's check cannot both win).
   */
  metaAccepted = 0;
  /** Recently refused metadata facts (their writers look here). */
  private readonly refusedMeta = new Set<number>();
  /** Ops (documents and metadata changes) applied since start, replay included. */
  appliedOps = 0;
  private live = false;
  /** Start-up without a snapshot: hold a copy of every shard until the allocation is known. */
  private buildAll = false;
  /** Trim points read at start-up: a shard whose log was trimmed cannot be built from it. */
  private startTrims = new Map<string, number>();
  private readonly js: JetStreamClient;
  readonly follower: StreamFollower;
  /** What the last `start` did (snapshot used, ops replayed). */
  startResult?: StartResult;
  readonly snapshots: Snapshotter;
  private metaQueue: Promise<unknown> = Promise.resolve();

  /** Flushes, merges and the segment cache of this node's copies. */
  readonly maintenance: SegmentMaintenance;

  constructor(private readonly ctx: NodeContext, private readonly onReplayProgress?: (done: number, total: number) => void) {
    this.maintenance = new SegmentMaintenance(ctx.settings, ctx.log);
    this.js = jetstream(ctx.nc);
    this.follower = new StreamFollower(ctx.nc, DATA_STREAM, subjects.allData, (m) => this.dispatch(m), ctx.log, onReplayProgress);
    this.snapshots = new Snapshotter(ctx, this, () => this.capture());
  }

  /** Loads the newest snapshot, follows ES_DATA from there until caught up, then takes up its copies. */
  /** Identity of the document log (its stream's creation time): copies' commits are tied to it. */
  private logId?: string;

  async start(): Promise<StartResult> {
    const info = await (await jetstreamManager(this.ctx.nc)).streams.info(DATA_STREAM);
    this.logId = info.created;
    const t0 = Date.now();
    const restored = await this.snapshots.restore(info);
    if (restored) this.install(restored);
    this.openLocalCopies();
    const out: StartResult = { indices: 0, ops: 0, ms: 0, ...(restored && { snapshotSeq: restored.seq, snapshotMs: Date.now() - t0 }) };
    const metaFrom = restored ? restored.metaSeq : 0;
    const from = Math.min(metaFrom, ...[...this.copies.values()].map((c) => c.applied));
    const trims = await this.trimPoints();
    const metaTrim = trims.get('meta') ?? 0;
    if (metaTrim > metaFrom) throw new DocumentLogGap(metaTrim + 1, metaFrom, this.snapshots.dir);
    for (const c of this.copies.values()) {
      const t = trims.get(copyKey(c.ref.indexUuid, c.ref.n)) ?? 0;
      if (t > c.applied) {
        this.ctx.log.error({ shard: c.label, applied: c.applied, trimmed: t }, 'the document log behind this copy was trimmed past its commit; it is rebuilt from another copy');
        this.dropCopy(copyKey(c.ref.indexUuid, c.ref.n));
      }
    }
    this.buildAll = !restored && this.copies.size === 0;
    this.startTrims = trims;
    const opsBefore = this.appliedOps;
    await this.follower.start(from);
    await this.follower.caughtUp();
    this.buildAll = false;
    out.ops = this.appliedOps - opsBefore;
    for (const c of this.copies.values()) c.store.refresh();
    this.maintenance.start();
    // copies restored from a legacy snapshot get their first commit
    for (const c of this.copies.values()) if (c.store.committedPoint().gen === 0 && c.store.bufferDocs() > 0) void c.flush();
    this.live = true;
    for (const idx of this.byUuid.values()) this.reconcile(idx);
    this.snapshots.started(restored?.seq, opsBefore);
    out.indices = this.byName.size;
    out.ms = Date.now() - t0;
    this.startResult = out;
    return out;
  }

  /** Takes a last snapshot (if anything changed), then stops following and stops the copies. */
  async stop(): Promise<void> {
    await this.snapshots.stop();
    await this.follower.stop();
    // a clean stop commits every copy: the next start replays no log
    await Promise.all([...this.copies.values()].map((c) => (c.state === 'started' ? c.flush().catch(() => undefined) : undefined)));
    await this.maintenance.stop();
    await Promise.all([...this.copies.values()].map((c) => c.stop()));
    for (const c of this.copies.values()) c.store.close();
  }

  // ---- following the log ----

  /** One ES_DATA message, in stream order (the follower). */
  private dispatch(m: LoggedMessage): void {
    if (m.subject === subjects.dataMeta) {
      if (m.seq <= this.metaSeq) return;
      this.metaSeq = m.seq;
      const e = parseJson<MetaFact>(dec.decode(m.data));
      if (e.after !== undefined && e.after !== this.metaAccepted) {
        this.refusedMeta.add(m.seq);
        if (this.refusedMeta.size > 1000) this.refusedMeta.delete(this.refusedMeta.values().next().value!);
        return;
      }
      this.applyMeta(e);
      this.metaAccepted = m.seq;
      this.appliedOps++;
      this.changed();
      return;
    }
    // es.v1.data.shard.<uuid>.<n>
    const parts = m.subject.split('.');
    if (parts[3] !== 'shard') return;
    const copy = this.copies.get(copyKey(parts[4], Number(parts[5])));
    if (!copy) return; // not held here (or the index was deleted later in the log)
    this.appliedOps += copy.deliver(m);
  }

  /** Installs a verified snapshot into this (empty) state. */
  private install(r: RestoredCluster): void {
    for (const img of r.indices) {
      const idx = this.addIndex(img.name, img.uuid, img.creationDate, img.settings as IndexSettings, IndexMapping.fromSnapshot(img.mapping));
      if (img.allocation) idx.allocation = img.allocation;
    }
    for (const c of r.copies) {
      const idx = this.byUuid.get(c.uuid);
      if (!idx) continue;
      const copy = this.newCopy(idx, c.n);
      // a snapshot of an older version holds the copy's documents: they become its first segment
      if (copy.store.committedPoint().gen > 0) continue;
      copy.store.loadLegacy(c.image);
      copy.applied = c.applied;
      copy.store.markApplied(c.applied);
    }
    for (const [k, v] of Object.entries(r.clusterSettings)) {
      this.clusterSettings[k] = v;
      this.ctx.settings.setDynamic(k, v);
    }
    this.metadata.load(r.metadata);
    this.metaSeq = r.metaSeq;
    this.metaAccepted = r.metaAccepted;
  }

  /**
   * Metadata and frozen copies at this instant (synchronous: nothing is half-applied between two
   * turns). The follower has dispatched everything up to its position, so the metadata and every
   * copy reflect the log at least that far (a primary's own writes may take a copy further).
   */
  private capture(): ClusterImage {
    const at = Math.max(this.follower.position, this.metaSeq);
    const image: ClusterImage = {
      metaSeq: at, lastMetaMessage: this.metaSeq, metaAccepted: this.metaAccepted, indices: [], clusterSettings: structuredClone(this.clusterSettings), copies: [], metadata: this.metadata.image(),
    };
    for (const idx of this.byName.values()) {
      image.indices.push({
        name: idx.name, uuid: idx.uuid, creationDate: idx.creationDate, settings: structuredClone(idx.settings), mapping: idx.mapping.toSnapshot(),
        shards: idx.shards.length, ...(idx.allocation ? { allocation: structuredClone(idx.allocation) } : {}),
      });
    }
    // copies keep their own commits (DATA_DIR/indices/<uuid>/<n>): a snapshot holds the metadata
    return image;
  }

  // ---- views ----

  onIndexDeleted(fn: (s: IndexState) => void): void {
    this.deletedListeners.push(fn);
  }
  /** Called after every metadata change and every change of a local copy's state. */
  onChange(fn: () => void): void {
    this.changeListeners.push(fn);
  }
  private changed(): void {
    this.generation_++;
    for (const fn of this.changeListeners) fn();
  }
  private generation_ = 0;
  /** Counts changes (metadata, copies): anything derived from the state is current while it stays the same. */
  get generation(): number {
    return this.generation_;
  }

  /** Resolves once `pred` holds (checked after every change), or false after `timeoutMs`. */
  waitUntil(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return new Promise((resolve) => {
      let done = false;
      const finish = (v: boolean) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        const i = this.changeListeners.indexOf(check);
        if (i >= 0) this.changeListeners.splice(i, 1);
        resolve(v);
      };
      const check = () => pred() && finish(true);
      const timer = setTimeout(() => finish(pred()), timeoutMs);
      this.changeListeners.push(check);
    });
  }
  /** Tells waiters that something outside the log changed (membership, a remote copy started). */
  notify(): void {
    this.changed();
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
  indices(): IndexState[] {
    return [...this.byName.values()];
  }
  get(name: string): IndexState | undefined {
    return this.byName.get(name);
  }
  getByUuid(uuid: string): IndexState | undefined {
    return this.byUuid.get(uuid);
  }
  /** The index or ES's 404. */
  require(name: string): IndexState {
    const s = this.byName.get(name);
    if (!s) throw indexNotFound(name);
    return s;
  }
  /** Indices an expression names: index names, aliases (their indices), wildcards over both. */
  resolve(expr: string | undefined, opts?: ResolveOptions): IndexState[] {
    const hidden = { hiddenIndex: (n: string) => this.isHidden(n), hiddenAlias: (a: string) => this.metadata.aliases.isHidden(a), closedIndex: (n: string) => this.isClosed(n) };
    return resolveExpression(expr, this.names(), { ...hidden, ...opts }, this.aliasIndexNames()).map((n) => this.byName.get(n)!);
  }

  /** Whether an index is hidden from wildcards (`index.hidden: true`). */
  isHidden(name: string): boolean {
    return this.byName.get(name)?.settings.raw['index.hidden'] === 'true';
  }

  /** Alias name -> names of its indices (hidden aliases included: resolve() hides them from wildcards). */
  private aliasIndexNames(): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [a, uuids] of this.metadata.aliases.map(true)) out.set(a, uuids.map((u) => this.byUuid.get(u)?.name).filter((n): n is string => !!n));
    return out;
  }

  /** Name and uuid lookups the alias rules use. */
  get lookup(): IndexLookup {
    return { nameOf: (u) => this.byUuid.get(u)?.name, uuidOf: (n) => this.byName.get(n)?.uuid };
  }

  /**
   * Where a write to `name` goes: the index of that name, or the write index of the alias of
   * that name (ES's 400 when the alias has none); undefined when neither exists.
   */
  writeIndex(name: string): IndexState | undefined {
    const direct = this.byName.get(name);
    if (direct) return direct;
    const uuid = this.metadata.aliases.writeIndex(name);
    return uuid === undefined ? undefined : this.byUuid.get(uuid);
  }

  /**
   * The one index `name` stands for (a real-time get through an alias): ES's 400 when the alias
   * has several, 404 when nothing has that name.
   */
  single(name: string): IndexState {
    const direct = this.byName.get(name);
    if (direct) return direct;
    const uuids = this.metadata.aliases.indicesOf(name);
    if (uuids.length === 1) return this.byUuid.get(uuids[0])!;
    if (uuids.length > 1) {
      const names = uuids.map((u) => this.byUuid.get(u)?.name).sort();
      throw new EsError('illegal_argument_exception', 400, `alias [${name}] has more than one index associated with it [${names.join(', ')}], can't execute a single index op`);
    }
    throw indexNotFound(name);
  }
  shardRefs(idx: IndexState): ShardRef[] {
    return idx.shards.map((s) => s.ref);
  }
  /** The copies of a shard on this node (tests, stats). */
  localCopy(uuid: string, n: number): ShardActor | undefined {
    return this.copies.get(copyKey(uuid, n));
  }
  localCopies(): ShardActor[] {
    return [...this.copies.values()];
  }
  /** Nodes holding a copy of shard `n` of `idx` (primary first), per the allocation. */
  copyNodes(idx: IndexState, n: number): Array<{ node: string; primary: boolean }> {
    const a = idx.allocation?.[n];
    if (!a) return [];
    return [...(a.primary ? [{ node: a.primary, primary: true }] : []), ...a.replicas.map((node) => ({ node, primary: false }))];
  }
  clusterSettingsSnapshot(): Record<string, unknown> {
    return { ...this.clusterSettings };
  }

  // ---- metadata writes ----

  /**
   * Appends a metadata fact stating the meta subject's last sequence this node applied, and
   * resolves once the follower applied it here. `make` validates against the current state (and
   * throws ES's 4xx); when another node's fact got there first, it runs again on the new state.
   */
  async writeMeta(make: () => MetaEvent | undefined): Promise<number | undefined> {
    const run = async () => {
      let purgedTo: number | undefined;
      for (let attempt = 0; attempt < 20; attempt++) {
        const ev = make();
        if (!ev) return undefined;
        try {
          const fact: MetaFact = { ...ev, after: this.metaAccepted };
          // stringify: mappings may carry 64-bit integers (`_meta`, parameters), which JSON.stringify refuses
          const ack = await fencedAppend(this.js, subjects.dataMeta, enc.encode(stringify(fact)), {
            msgID: uuidv4(),
            expectedLastSubjectSeq: purgedTo ?? this.metaSeq,
            // long enough for a JetStream leader election, short of ES's 30 s master timeout
            deadlineMs: 15_000,
          });
          await this.follower.waitFor(ack.seq);
          if (this.refusedMeta.has(ack.seq)) continue; // another node's fact came first: decide again
          return ack.seq;
        } catch (e) {
          if (e instanceof Fenced) {
            // Behind what we expected: the log was purged below it (snapshot.purge_log), nobody wrote.
            if (e.actual !== undefined && e.actual < e.expected) purgedTo = e.actual;
            else {
              purgedTo = undefined;
              await this.follower.waitFor(e.actual ?? this.metaSeq + 1, 10_000).catch(() => undefined);
            }
            continue;
          }
          if (e instanceof AppendUncertain) {
            throw new EsError('cluster_block_exception', 503, `blocked by: [SERVICE_UNAVAILABLE/2/no master]; the metadata log did not acknowledge the change: ${e.message}`);
          }
          throw e;
        }
      }
      throw new EsError('process_cluster_event_timeout_exception', 503, 'failed to process cluster event: metadata kept changing under this node');
    };
    // One metadata write at a time per node: they would only fence each other.
    const p = this.metaQueue.then(run, run);
    this.metaQueue = p.catch(() => undefined);
    return p;
  }

  /**
   * Asks the other live nodes to have applied metadata up to a sequence (set by the system: node
   * op `meta_applied`). As ES acknowledges a metadata change once every node applied it, a change
   * made through one node is then seen through every other.
   */
  peersApplied?: (seq: number) => Promise<void>;

  /** Resolves once this node applied the metadata log up to `seq` (false after `timeoutMs`). */
  applied(seq: number, timeoutMs: number): Promise<boolean> {
    return this.follower.waitFor(seq, timeoutMs).then(
      () => true,
      () => false,
    );
  }

  /** A metadata change asked through the API: written, then applied by every live node (bounded). */
  private async writeMetaAcked(make: () => MetaEvent | undefined): Promise<number | undefined> {
    const seq = await this.writeMeta(make);
    if (seq !== undefined) await this.peersApplied?.(seq).catch(() => undefined);
    return seq;
  }

  /** PUT /<index> (and auto-create). Resolves once the index's primaries are started, or after `timeoutMs`. */
  async createIndex(name: string, body: { settings?: unknown; mappings?: unknown; aliases?: unknown } = {}, timeoutMs = 30_000): Promise<IndexState> {
    validateIndexName(name);
    const uuid = uuidv4().replace(/-/g, '').slice(0, 22);
    await this.writeMetaAcked(() => {
      const existing = this.byName.get(name);
      if (existing) {
        throw new EsError('resource_already_exists_exception', 400, `index [${name}/${existing.uuid}] already exists`, {
          meta: { index_uuid: existing.uuid, index: name },
        });
      }
      // Templates first, then the request (clusterMetadata.ts), decided on the state the fact follows.
      const prepared = this.metadata.prepareIndex(name, body, this.lookup, uuid);
      const { settings, mappings } = prepared;
      validateCreate(settings, applySettings(defaultIndexSettings(), settings, true, { name }), mappings, name); // validate before logging
      new IndexMapping(mappings as never); // validate before logging
      return {
        kind: 'index_created', name, uuid, creationDate: Date.now(), settings, mappings,
        ...(Object.keys(prepared.aliases).length ? { aliases: prepared.aliases } : {}),
      };
    });
    const idx = this.byUuid.get(uuid);
    if (!idx) throw indexNotFound(name); // deleted again before we looked
    await this.waitForPrimaries(idx, timeoutMs);
    return idx;
  }

  /** Whether every primary of `idx` is started somewhere (this node's copies, or what membership reports). */
  primariesStarted(idx: IndexState): boolean {
    if (!idx.allocation) return false;
    return idx.allocation.every((a, n) => !!a.primary && this.copyStarted(a.primary, idx.uuid, n));
  }

  /** Set by the system: whether a remote node reports its copy started. */
  remoteCopyStarted: (node: string, uuid: string, n: number) => boolean = () => false;

  copyStarted(node: string, uuid: string, n: number): boolean {
    if (node === this.ctx.node.id) {
      const c = this.copies.get(copyKey(uuid, n));
      return !!c && c.state === 'started';
    }
    return this.remoteCopyStarted(node, uuid, n);
  }

  waitForPrimaries(idx: IndexState, timeoutMs: number): Promise<boolean> {
    return this.waitUntil(() => !this.byUuid.has(idx.uuid) || this.primariesStarted(idx), timeoutMs);
  }

  /** Closes or opens an index: acknowledged once every live node applied it (as other metadata changes). */
  async setIndexState(idx: IndexState, state: 'open' | 'close'): Promise<void> {
    await this.writeMetaAcked(() => {
      if (!this.byUuid.has(idx.uuid)) throw indexNotFound(idx.name);
      return { kind: 'index_state', uuid: idx.uuid, state };
    });
  }

  /** Whether an index is closed (`POST /<index>/_close`). */
  isClosed(name: string): boolean {
    return !!this.byName.get(name)?.settings.closed;
  }

  onIndexClosed(fn: (s: IndexState) => void): void {
    this.closedListeners.push(fn);
  }

  async deleteIndex(idx: IndexState): Promise<void> {
    await this.writeMetaAcked(() => (this.byUuid.has(idx.uuid) ? { kind: 'index_deleted', uuid: idx.uuid } : undefined));
  }

  async updateSettings(idx: IndexState, changes: unknown): Promise<void> {
    const settings = normalizeSettings(changes);
    await this.writeMetaAcked(() => {
      const cur = this.byUuid.get(idx.uuid);
      if (!cur) throw indexNotFound(idx.name);
      applySettings(structuredClone(cur.settings), settings, false, cur); // validates
      return { kind: 'settings_updated', uuid: idx.uuid, settings };
    });
  }

  /** PUT _mapping: validated on a copy of the current mapping, applied by the follower. */
  async putMapping(idx: IndexState, mappings: unknown): Promise<void> {
    await this.writeMetaAcked(() => {
      const cur = this.byUuid.get(idx.uuid);
      if (!cur) throw indexNotFound(idx.name);
      IndexMapping.fromSnapshot(cur.mapping.toSnapshot()).merge(mappings as never); // validates; throws ES's mapper errors
      return { kind: 'mapping_updated', uuid: idx.uuid, mappings };
    });
  }

  /**
   * Dynamic fields a shard's batch would add (mappingProposal.ts). A proposal that no longer fits
   * the mapping (another batch mapped the field differently first) is dropped: the batch is
   * prepared again and its documents fail or pass against what the log says. Acknowledged by every
   * node before the batch goes on (ES's master waits for the nodes to apply a dynamic mapping too).
   */
  async proposeMapping(uuid: string, mappings: Record<string, unknown>): Promise<void> {
    await this.writeMetaAcked(() => {
      const cur = this.byUuid.get(uuid);
      if (!cur) return undefined;
      try {
        IndexMapping.fromSnapshot(cur.mapping.toSnapshot()).merge(mappings as never);
      } catch {
        return undefined;
      }
      return { kind: 'mapping_updated', uuid, mappings };
    });
  }

  async putClusterSettings(settings: Record<string, unknown>): Promise<void> {
    await this.writeMetaAcked(() => ({ kind: 'cluster_settings', settings }));
  }

  /** `POST /_aliases`: every action of the request is one fact (all or nothing, as ES). */
  async updateAliases(body: unknown): Promise<void> {
    const actions = parseAliasActions(body);
    await this.writeMetaAcked(() => ({ kind: 'aliases_updated', changes: planAliasActions(actions, this.metadata.aliases, this.names(), this.lookup) }));
  }

  /** Puts a template of one kind; `parse` (TemplateTable.parse*) validates it against the templates of that moment. */
  async putTemplate(template: TemplateKind, name: string, parse: () => unknown): Promise<void> {
    await this.writeMetaAcked(() => ({ kind: 'template_put', template, name, body: parse() }));
  }

  /** Deletes templates; `select` picks the names (and checks them) at that moment. */
  async deleteTemplates(template: TemplateKind, select: () => string[]): Promise<void> {
    await this.writeMetaAcked(() => ({ kind: 'template_deleted', template, names: select() }));
  }

  // ---- applying metadata ----

  /** Registers an index and its shard handles (copies come from the allocation). */
  private addIndex(name: string, uuid: string, creationDate: number, settings: IndexSettings, mapping: IndexMapping): IndexState {
    const idx: IndexState = { name, uuid, creationDate, settings, mapping, shards: [] };
    for (let n = 0; n < settings.numberOfShards; n++) idx.shards.push({ ref: { index: name, indexUuid: uuid, n } });
    this.byName.set(name, idx);
    this.byUuid.set(uuid, idx);
    return idx;
  }

  /** Where a copy of this node keeps its segments and commits. */
  copyDir(uuid: string, n: number): string {
    return join(this.ctx.dataDir, 'indices', uuid, String(n));
  }

  /** Opens every copy this node has a commit of, for the indices the metadata has. */
  private openLocalCopies(): void {
    const root = join(this.ctx.dataDir, 'indices');
    if (!existsSync(root)) return;
    for (const uuid of readdirSync(root)) {
      const idx = this.byUuid.get(uuid);
      if (!idx) continue;
      for (let n = 0; n < idx.shards.length; n++) {
        if (this.copies.has(copyKey(uuid, n)) || !existsSync(join(root, uuid, String(n)))) continue;
        const copy = this.newCopy(idx, n);
        if (copy.store.committedPoint().gen === 0) this.dropCopy(copyKey(uuid, n), false);
      }
    }
  }

  private newCopy(idx: IndexState, n: number): ShardActor {
    const dir = this.copyDir(idx.uuid, n);
    const store = (fresh = false) => {
      if (fresh) rmSync(dir, { recursive: true, force: true });
      return new ShardStore({
        index: idx.name,
        shardId: n,
        mapping: idx.mapping,
        settings: () => ({ maxResultWindow: idx.settings.maxResultWindow, maxSlicesPerScroll: idx.settings.maxSlicesPerScroll }),
        dir,
        cache: this.maintenance.cache,
        retentionMs: parseTimeValue(this.ctx.settings.str('indices.merge.deletes_retention', '60s'), 'indices.merge.deletes_retention'),
        ...(this.logId ? { logId: this.logId } : {}),
      });
    };
    const copy = new ShardActor(idx.shards[n].ref, store(), {
      nc: this.ctx.nc,
      js: this.js,
      log: this.ctx.log,
      nodeId: this.ctx.node.id,
      refreshIntervalMs: () => idx.settings.refreshIntervalMs,
      proposeMapping: (u, m) => this.proposeMapping(u, m),
      followed: (seq) => this.follower.waitFor(seq),
      onStateChange: () => this.changed(),
      newStore: (fresh) => store(fresh),
      recovery: {
        dir,
        objects: () => segmentObjects(this.ctx.nc, Number(this.ctx.settings.get('cluster.stream_replicas', 1))),
        prefix: `${idx.uuid}/${n}/${this.ctx.node.id}/`,
        offer: () => this.askForSegments(idx, n),
        trimPoint: async () => (await this.trimPoints()).get(copyKey(idx.uuid, n)) ?? 0,
        ...(this.logId ? { logId: this.logId } : {}),
      },
      maintenance: this.maintenance,
      indexSettings: () => idx.settings.raw,
      onCommit: (c) => void this.trim(c),
      ...(this.ctx.breakers ? { searchScope: () => this.ctx.breakers!.searchScope() } : {}),
    });
    if (copy.store.setAside) {
      this.ctx.log.error({ shard: copy.label, movedTo: copy.store.setAside, log: this.logId },
        'this copy\'s segments were committed while following another document log (ES_DATA was re-created): kept aside, the copy starts empty');
    }
    copy.applied = copy.store.committedPoint().applied;
    this.copies.set(copyKey(idx.uuid, n), copy);
    return copy;
  }

  /** Whether a shard's log was trimmed, as last read ({@link refreshTrims}) or done here. */
  shardTrimmed(uuid: string, n: number): boolean {
    const key = copyKey(uuid, n);
    return (this.knownTrims.get(key) ?? 0) > 0 || (this.startTrims.get(key) ?? 0) > 0 || this.trimmed.has(key);
  }

  /** Reads the trim points again (the allocator, before it decides: other primaries trim too). */
  async refreshTrims(): Promise<void> {
    const trims = await this.trimPoints();
    this.knownTrims = trims;
  }
  private knownTrims = new Map<string, number>();

  /** Trim points recorded in the cluster's KV: `meta`, and `<uuid>/<n>` per shard. */
  private async trimPoints(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    try {
      const kv = await new Kvm(this.ctx.nc).open(CLUSTER_BUCKET);
      for await (const k of await kv.keys('trim.>')) {
        const e = await kv.get(k);
        if (!e || e.operation !== 'PUT') continue;
        const v = Number(new TextDecoder().decode(e.value));
        const parts = k.split('.');
        out.set(parts.length === 2 ? 'meta' : `${parts[1]}/${parts[2]}`, v);
      }
    } catch {
      /* no bucket yet: nothing trimmed */
    }
    return out;
  }

  /**
   * Asks a started copy of shard `n` on another node for its segments (peer recovery): the primary
   * first. Undefined when no other node holds a started copy.
   */
  private async askForSegments(idx: IndexState, n: number): Promise<RecoveryOffer | undefined> {
    const me = this.ctx.node.id;
    const nodes = this.copyNodes(idx, n).map((c) => c.node).filter((node) => node !== me && this.copyStarted(node, idx.uuid, n));
    for (const node of nodes) {
      // a source that dies while it puts its files never answers (a restarted one does not get the request
      // again): stop waiting once its copy is no longer started or the node started again
      const since = this.nodeStartedAt(node);
      let watch: NodeJS.Timeout | undefined;
      const gone = new Promise<never>((_, reject) => {
        watch = setInterval(() => {
          if (!this.copyStarted(node, idx.uuid, n) || this.nodeStartedAt(node) !== since) reject(new Error(`node [${node}] left, restarted or its copy stopped`));
        }, 500);
      });
      try {
        const m = await Promise.race([this.ctx.nc.request(subjects.shardCopy(idx.uuid, n, node, 'recovery'), enc.encode('{}'), { timeout: 30 * 60_000 }), gone]);
        const reply = parseJson<{ ok: boolean; result?: RecoveryOffer; error?: { reason?: string } }>(dec.decode(m.data));
        if (reply.ok && reply.result) return reply.result;
        this.ctx.log.warn({ shard: `[${idx.name}][${n}]`, from: node, err: reply.error?.reason }, 'a copy refused to give its segments');
      } catch (e) {
        this.ctx.log.warn({ shard: `[${idx.name}][${n}]`, from: node, err: (e as Error).message }, 'a copy did not give its segments');
      } finally {
        clearInterval(watch);
      }
    }
    return undefined;
  }

  /** Set by the system: when a node's process started (from its membership record; undefined once it left). */
  nodeStartedAt: (node: string) => number | undefined = () => undefined;

  /** Set by the system: the log sequence a node's copy has committed (from its membership record). */
  durableOf: (node: string, uuid: string, n: number) => number | undefined = () => undefined;

  /** Trim points already purged, per copy key. */
  private readonly trimmed = new Map<string, number>();

  /**
   * Purges a shard's document log behind the newest commit of every copy the allocation names (ES
   * trims its translog once a flush made it unneeded), recording the point in the cluster's KV so a
   * copy that would need what is gone copies segments instead. Only the primary trims.
   */
  private async trim(copy: ShardActor): Promise<void> {
    const { indexUuid: uuid, n } = copy.ref;
    const idx = this.byUuid.get(uuid);
    const a = idx?.allocation?.[n];
    if (!idx || !a || a.primary !== this.ctx.node.id) return;
    const me = copy.store.committedPoint().applied;
    let point = me;
    for (const node of a.replicas) point = Math.min(point, this.durableOf(node, uuid, n) ?? 0);
    const key = copyKey(uuid, n);
    if (point <= (this.trimmed.get(key) ?? 0)) return;
    this.trimmed.set(key, point);
    try {
      await crashPoint('trim.before'); // kill -9 tests (wire/crashPoint.ts), here and below
      const kv = await new Kvm(this.ctx.nc).open(CLUSTER_BUCKET);
      await kv.put(`trim.${uuid}.${n}`, String(point));
      await crashPoint('trim.recorded');
      const jsm = await jetstreamManager(this.ctx.nc);
      await jsm.streams.purge(DATA_STREAM, { filter: subjects.dataShard(uuid, n), seq: point + 1 });
      await crashPoint('trim.purged');
    } catch (e) {
      this.trimmed.delete(key);
      this.ctx.log.warn({ err: (e as Error).message, shard: copy.label }, 'document log trim failed; it is retried after the next commit');
    }
  }

  /** Stops a copy this node no longer holds and deletes its files (`keepFiles`: only close them). */
  private dropCopy(key: string, deleteFiles = true): void {
    const c = this.copies.get(key);
    if (!c) return;
    this.copies.delete(key);
    this.maintenance.remove(c);
    const dir = this.copyDir(c.ref.indexUuid, c.ref.n);
    void c.stop().finally(() => {
      c.store.close();
      if (deleteFiles) rmSync(dir, { recursive: true, force: true });
    });
  }

  /**
   * Makes this node's copies of `idx` what the allocation says: new copies recover from the log,
   * copies no longer allocated here are dropped, roles and terms follow the facts.
   */
  private reconcile(idx: IndexState): void {
    if (!this.live || !idx.allocation) return;
    const me = this.ctx.node.id;
    idx.allocation.forEach((a, n) => {
      const key = copyKey(idx.uuid, n);
      const role = a.primary === me ? 'primary' : a.replicas.includes(me) ? 'replica' : undefined;
      let copy = this.copies.get(key);
      if (!role) {
        if (copy) this.dropCopy(key);
        return;
      }
      const fresh = !copy;
      copy ??= this.newCopy(idx, n);
      copy.setRole(role, a.term);
      copy.start();
      if (fresh) void copy.recover();
    });
    this.changed();
  }

  private applyMeta(e: MetaEvent): void {
    switch (e.kind) {
      case 'index_created': {
        if (this.byName.has(e.name)) return; // logs written before creates were fenced may hold a second create: the first wins
        this.metadata.aliases.apply(ClusterMetadata.createdAliases(e.uuid, e.aliases));
        const idx = this.addIndex(e.name, e.uuid, e.creationDate, applySettings(defaultIndexSettings(), e.settings, true, e), new IndexMapping(e.mappings as never));
        // (a shard whose log was trimmed is not: the log lacks its start; allocated here, it copies segments from a peer)
        if (this.buildAll) for (let n = 0; n < idx.shards.length; n++) if (!this.startTrims.get(copyKey(idx.uuid, n))) this.newCopy(idx, n);
        return;
      }
      case 'index_deleted': {
        const idx = this.byUuid.get(e.uuid);
        if (!idx) return;
        this.byUuid.delete(e.uuid);
        this.byName.delete(idx.name);
        this.metadata.aliases.dropIndex(e.uuid);
        for (let n = 0; n < idx.shards.length; n++) this.dropCopy(copyKey(idx.uuid, n));
        for (const fn of this.deletedListeners) fn(idx);
        return;
      }
      case 'index_state': {
        const idx = this.byUuid.get(e.uuid);
        if (!idx) return;
        const closed = e.state === 'close';
        const raw = { ...idx.settings.raw };
        // ES marks a closed index `index.verified_before_close: true` and drops it when it opens again
        if (closed) raw['index.verified_before_close'] = 'true';
        else delete raw['index.verified_before_close'];
        idx.settings = { ...idx.settings, raw, ...(closed ? { closed: true } : { closed: undefined }) };
        if (closed) for (const fn of this.closedListeners) fn(idx);
        return;
      }
      case 'settings_updated': {
        const idx = this.byUuid.get(e.uuid);
        if (idx) idx.settings = applySettings(idx.settings, e.settings, false);
        return;
      }
      case 'mapping_updated': {
        const idx = this.byUuid.get(e.uuid);
        if (!idx) return;
        try {
          idx.mapping.merge(e.mappings as never);
        } catch (err) {
          // validated against this same state before it was appended: cannot happen unless the log was written by another version
          this.ctx.log.warn({ index: idx.name, err: (err as Error).message }, 'logged mapping update does not apply; ignored');
        }
        return;
      }
      case 'cluster_settings': {
        for (const [k, v] of Object.entries(e.settings)) {
          if (v === null || v === undefined) delete this.clusterSettings[k];
          else this.clusterSettings[k] = v;
          this.ctx.settings.setDynamic(k, v);
        }
        return;
      }
      case 'allocation': {
        const idx = this.byUuid.get(e.uuid);
        if (!idx) return;
        idx.allocation = e.shards;
        this.reconcile(idx);
        return;
      }
      case 'aliases_updated':
        this.metadata.apply(e);
        for (const c of e.changes) if (c.op === 'remove_index') this.applyMeta({ kind: 'index_deleted', uuid: c.uuid });
        return;
      case 'template_put':
      case 'template_deleted':
        this.metadata.apply(e);
        return;
    }
  }
}
