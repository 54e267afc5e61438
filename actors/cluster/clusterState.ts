import { v4 as uuidv4 } from 'uuid';
import { jetstreamManager } from '@nats-io/jetstream';
import { DATA_STREAM, READ_MAX_BYTES, readStream, subjects } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { EsError, indexNotFound } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { IndexMapping, ShardStore } from '../shard/engine';
import type { LoggedOp } from '../shard/engine/types';
import type { LoadedStore } from '../shard/engine/shardStore';
import { decodeBatch } from '../shard/opCodec';
import { ShardActor, type ShardRef } from '../shard/shardActor';
import { applySettings, defaultIndexSettings, normalizeSettings, type IndexSettings } from './indexSettings';
import { resolveExpression, validateIndexName, type ResolveOptions } from './indexNames';
import { DocumentLog } from './documentLog';
import { Snapshotter, type ClusterImage, type RestoredCluster } from './snapshots';

/** Metadata facts of the document log (subject es.v1.data.meta). */
export type MetaEvent =
  | { kind: 'index_created'; name: string; uuid: string; creationDate: number; settings: Record<string, string>; mappings: unknown }
  | { kind: 'index_deleted'; uuid: string }
  | { kind: 'settings_updated'; uuid: string; settings: Record<string, string> }
  | { kind: 'mapping_updated'; uuid: string; mappings: unknown }
  | { kind: 'cluster_settings'; settings: Record<string, unknown> };

export interface IndexState {
  name: string;
  uuid: string;
  creationDate: number;
  settings: IndexSettings;
  mapping: IndexMapping;
  shards: ShardActor[];
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

/**
 * The node's view of its indices, built by folding the document log: index metadata, the shared
 * mapping of each index, and one shard actor per shard. Writes to metadata go through the log
 * first (append, ack, then apply), so a restart rebuilds exactly what was acknowledged. Start-up
 * loads the newest snapshot (snapshots.ts) and replays only the log after it.
 */
export class ClusterState {
  private readonly byName = new Map<string, IndexState>();
  private readonly byUuid = new Map<string, IndexState>();
  /** Names whose index_created is being appended (not applied yet). */
  private readonly creating = new Map<string, { uuid: string }>();
  private readonly deletedListeners: Array<(s: IndexState) => void> = [];
  /** Fold of `cluster_settings` facts (what a snapshot records). */
  private readonly clusterSettings: Record<string, unknown> = {};
  private live = false;
  /** What the last `start` did (snapshot used, ops replayed). */
  startResult?: StartResult;
  /** Every append to ES_DATA goes through here (write sections, the sequence S of snapshots). */
  readonly docLog: DocumentLog;
  readonly snapshots: Snapshotter;

  constructor(private readonly ctx: NodeContext) {
    this.docLog = new DocumentLog(ctx.bus);
    this.snapshots = new Snapshotter(ctx, this.docLog, () => this.capture());
  }

  /** Loads the newest snapshot, replays ES_DATA after it, then starts shard actors. */
  async start(onProgress?: (done: number, total: number) => void): Promise<StartResult> {
    const info = await (await jetstreamManager(this.ctx.nc)).streams.info(DATA_STREAM);
    const t0 = Date.now();
    const restored = await this.snapshots.restore(info);
    if (restored) this.install(restored);
    const out: StartResult = { indices: 0, ops: 0, ms: 0, ...(restored && { snapshotSeq: restored.seq, snapshotMs: Date.now() - t0 }) };
    const from = (restored?.seq ?? 0) + 1;
    if (info.state.first_seq > from) throw new DocumentLogGap(info.state.first_seq, from - 1, this.snapshots.dir);
    if (restored) this.docLog.replayed(restored.seq, 0);
    for await (const m of readStream(this.ctx.nc, DATA_STREAM, { onProgress, startSeq: from, maxBytes: READ_MAX_BYTES })) {
      out.ops += this.applyLogged(m.subject, m.data);
      this.docLog.replayed(m.seq, 0);
    }
    this.docLog.replayed(info.state.last_seq, out.ops);
    for (const idx of this.byName.values()) {
      for (const s of idx.shards) {
        s.store.refresh();
        s.start();
      }
    }
    this.live = true;
    this.snapshots.started(restored?.seq, 0);
    out.indices = this.byName.size;
    out.ms = Date.now() - t0;
    this.startResult = out;
    return out;
  }

  /** Applies one ES_DATA message during start-up; returns the number of ops in it. */
  private applyLogged(subject: string, data: Uint8Array): number {
    if (subject === subjects.dataMeta) {
      this.applyMeta(parseJson<MetaEvent>(dec.decode(data)));
      return 1;
    }
    // es.v1.data.shard.<uuid>.<n>
    const parts = subject.split('.');
    const idx = this.byUuid.get(parts[4]);
    if (!idx) return 0; // index deleted later in the log
    const shard = idx.shards[Number(parts[5])];
    let ops = 0;
    for (const op of decodeBatch<LoggedOp>(dec.decode(data))) {
      shard.store.applyLogged(op);
      ops++;
    }
    return ops;
  }

  /** Takes a last snapshot (if anything changed), then stops the shard actors. */
  async stop(): Promise<void> {
    await this.snapshots.stop();
    for (const idx of this.byName.values()) await Promise.all(idx.shards.map((s) => s.stop()));
  }

  /** Installs a verified snapshot into this (empty) state. */
  private install(r: RestoredCluster): void {
    for (const img of r.indices) {
      const idx = this.addIndex(img.name, img.uuid, img.creationDate, img.settings as IndexSettings, IndexMapping.fromSnapshot(img.mapping));
      const images = r.shards.get(img.uuid)!;
      idx.shards.forEach((s, n) => s.store.load(images[n] as LoadedStore));
    }
    for (const [k, v] of Object.entries(r.clusterSettings)) {
      this.clusterSettings[k] = v;
      this.ctx.settings.setDynamic(k, v);
    }
  }

  /** Metadata and frozen shards at a quiet instant (see DocumentLog.quiet). */
  private capture(): ClusterImage {
    const image: ClusterImage = { indices: [], clusterSettings: { ...this.clusterSettings }, shards: [] };
    for (const idx of this.byName.values()) {
      image.indices.push({ name: idx.name, uuid: idx.uuid, creationDate: idx.creationDate, settings: idx.settings, mapping: idx.mapping.toSnapshot(), shards: idx.shards.length });
      idx.shards.forEach((s, n) => image.shards.push({ uuid: idx.uuid, n, store: s.store, frozen: s.store.freeze() }));
    }
    return image;
  }

  onIndexDeleted(fn: (s: IndexState) => void): void {
    this.deletedListeners.push(fn);
  }

  names(): string[] {
    return [...this.byName.keys()];
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
  resolve(expr: string | undefined, opts?: ResolveOptions): IndexState[] {
    return resolveExpression(expr, this.names(), opts).map((n) => this.byName.get(n)!);
  }
  shardRefs(idx: IndexState): ShardRef[] {
    return idx.shards.map((s) => s.ref);
  }

  /** Call inside `docLog.write` (every metadata change is one write section). */
  private async appendMeta(e: MetaEvent): Promise<void> {
    // stringify: mappings may carry 64-bit integers (`_meta`, parameters), which JSON.stringify refuses
    await this.docLog.append(subjects.dataMeta, enc.encode(stringify(e)), 1);
  }

  /** PUT /<index> (and auto-create). */
  async createIndex(name: string, body: { settings?: unknown; mappings?: unknown; aliases?: unknown } = {}): Promise<IndexState> {
    validateIndexName(name);
    const existing = this.byName.get(name) ?? this.creating.get(name);
    if (existing) {
      throw new EsError('resource_already_exists_exception', 400, `index [${name}/${existing.uuid}] already exists`, {
        meta: { index_uuid: existing.uuid, index: name },
      });
    }
    const settings = normalizeSettings(body.settings);
    applySettings(defaultIndexSettings(), settings, true); // validate before logging
    const mappings = body.mappings ?? {};
    new IndexMapping(mappings as never); // validate before logging
    const ev: MetaEvent = { kind: 'index_created', name, uuid: uuidv4().replace(/-/g, '').slice(0, 22), creationDate: Date.now(), settings, mappings };
    // The name is taken from now on: a concurrent create of it gets ES's 400 instead of logging a
    // second index_created that a replay would apply over the first.
    this.creating.set(name, { uuid: ev.uuid });
    try {
      return await this.docLog.write(async () => {
        await this.appendMeta(ev);
        return this.applyMeta(ev)!;
      });
    } finally {
      this.creating.delete(name);
    }
  }

  async deleteIndex(idx: IndexState): Promise<void> {
    await this.docLog.write(async () => {
      await this.appendMeta({ kind: 'index_deleted', uuid: idx.uuid });
      this.applyMeta({ kind: 'index_deleted', uuid: idx.uuid });
    });
  }

  async updateSettings(idx: IndexState, changes: unknown): Promise<void> {
    const settings = normalizeSettings(changes);
    applySettings(idx.settings, settings, false);
    await this.docLog.write(async () => {
      await this.appendMeta({ kind: 'settings_updated', uuid: idx.uuid, settings });
      this.applyMeta({ kind: 'settings_updated', uuid: idx.uuid, settings });
    });
  }

  async putMapping(idx: IndexState, mappings: unknown): Promise<void> {
    await this.docLog.write(async () => {
      idx.mapping.merge(mappings as never); // validates; throws ES's mapper errors
      await this.appendMeta({ kind: 'mapping_updated', uuid: idx.uuid, mappings });
    });
  }

  async putClusterSettings(settings: Record<string, unknown>): Promise<void> {
    await this.docLog.write(async () => {
      await this.appendMeta({ kind: 'cluster_settings', settings });
      this.applyMeta({ kind: 'cluster_settings', settings });
    });
  }

  /** Registers an index and its (empty) shards; their actors start now if the node is live. */
  private addIndex(name: string, uuid: string, creationDate: number, settings: IndexSettings, mapping: IndexMapping): IndexState {
    const idx: IndexState = { name, uuid, creationDate, settings, mapping, shards: [] };
    for (let n = 0; n < settings.numberOfShards; n++) {
      const store = new ShardStore({
        index: name,
        shardId: n,
        mapping,
        settings: () => ({ maxResultWindow: idx.settings.maxResultWindow, maxSlicesPerScroll: idx.settings.maxSlicesPerScroll }),
      });
      const actor = new ShardActor({ index: name, indexUuid: uuid, n }, store, {
        nc: this.ctx.nc,
        docLog: this.docLog,
        log: this.ctx.log,
        refreshIntervalMs: () => idx.settings.refreshIntervalMs,
      });
      idx.shards.push(actor);
      if (this.live) actor.start();
    }
    this.byName.set(name, idx);
    this.byUuid.set(uuid, idx);
    return idx;
  }

  private applyMeta(e: MetaEvent): IndexState | undefined {
    switch (e.kind) {
      case 'index_created':
        // Logs written before create was exclusive may hold a second create of a live name: the first wins.
        if (this.byName.has(e.name)) return this.byName.get(e.name);
        return this.addIndex(e.name, e.uuid, e.creationDate, applySettings(defaultIndexSettings(), e.settings, true), new IndexMapping(e.mappings as never));
      case 'index_deleted': {
        const idx = this.byUuid.get(e.uuid);
        if (!idx) return undefined;
        this.byUuid.delete(e.uuid);
        this.byName.delete(idx.name);
        for (const s of idx.shards) void s.stop();
        for (const fn of this.deletedListeners) fn(idx);
        return idx;
      }
      case 'settings_updated': {
        const idx = this.byUuid.get(e.uuid);
        if (idx) idx.settings = applySettings(idx.settings, e.settings, false);
        return idx;
      }
      case 'mapping_updated': {
        const idx = this.byUuid.get(e.uuid);
        if (idx && !this.live) idx.mapping.merge(e.mappings as never);
        return idx;
      }
      case 'cluster_settings': {
        for (const [k, v] of Object.entries(e.settings)) {
          if (v === null || v === undefined) delete this.clusterSettings[k];
          else this.clusterSettings[k] = v;
          this.ctx.settings.setDynamic(k, v);
        }
        return undefined;
      }
    }
  }
}

