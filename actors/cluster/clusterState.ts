import { v4 as uuidv4 } from 'uuid';
import { DATA_STREAM, readStream, subjects } from '../../streams';
import type { NodeContext } from '../nodeContext';
import { EsError, indexNotFound } from '../edge/esErrors';
import { IndexMapping, ShardStore } from '../shard/engine';
import type { LoggedOp } from '../shard/engine/types';
import { decodeBatch } from '../shard/opCodec';
import { ShardActor, type ShardRef } from '../shard/shardActor';
import { applySettings, defaultIndexSettings, normalizeSettings, type IndexSettings } from './indexSettings';
import { resolveExpression, validateIndexName, type ResolveOptions } from './indexNames';

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

/**
 * The node's view of its indices, built by folding the document log: index metadata, the shared
 * mapping of each index, and one shard actor per shard. Writes to metadata go through the log
 * first (append, ack, then apply), so a restart rebuilds exactly what was acknowledged.
 */
export class ClusterState {
  private readonly byName = new Map<string, IndexState>();
  private readonly byUuid = new Map<string, IndexState>();
  private readonly deletedListeners: Array<(s: IndexState) => void> = [];
  private live = false;

  constructor(private readonly ctx: NodeContext) {}

  /** Replays ES_DATA, then starts shard actors. Returns counts for the start-up log. */
  async start(onProgress?: (done: number, total: number) => void): Promise<{ indices: number; ops: number }> {
    let ops = 0;
    for await (const m of readStream(this.ctx.nc, DATA_STREAM, { onProgress })) {
      if (m.subject === subjects.dataMeta) {
        this.applyMeta(JSON.parse(dec.decode(m.data)) as MetaEvent);
        continue;
      }
      // es.v1.data.shard.<uuid>.<n>
      const parts = m.subject.split('.');
      const idx = this.byUuid.get(parts[4]);
      if (!idx) continue; // index deleted later in the log
      const shard = idx.shards[Number(parts[5])];
      for (const op of decodeBatch<LoggedOp>(dec.decode(m.data))) {
        shard.store.applyLogged(op);
        ops++;
      }
    }
    for (const idx of this.byName.values()) {
      for (const s of idx.shards) {
        s.store.refresh();
        s.start();
      }
    }
    this.live = true;
    return { indices: this.byName.size, ops };
  }

  async stop(): Promise<void> {
    for (const idx of this.byName.values()) await Promise.all(idx.shards.map((s) => s.stop()));
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

  private async appendMeta(e: MetaEvent): Promise<void> {
    await this.ctx.bus.publish(subjects.dataMeta, enc.encode(JSON.stringify(e)));
  }

  /** PUT /<index> (and auto-create). */
  async createIndex(name: string, body: { settings?: unknown; mappings?: unknown; aliases?: unknown } = {}): Promise<IndexState> {
    validateIndexName(name);
    const existing = this.byName.get(name);
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
    await this.appendMeta(ev);
    // A concurrent create of the same name may have won while we awaited the ack.
    const raced = this.byName.get(name);
    if (raced) return raced;
    return this.applyMeta(ev)!;
  }

  async deleteIndex(idx: IndexState): Promise<void> {
    await this.appendMeta({ kind: 'index_deleted', uuid: idx.uuid });
    this.applyMeta({ kind: 'index_deleted', uuid: idx.uuid });
  }

  async updateSettings(idx: IndexState, changes: unknown): Promise<void> {
    const settings = normalizeSettings(changes);
    applySettings(idx.settings, settings, false);
    await this.appendMeta({ kind: 'settings_updated', uuid: idx.uuid, settings });
    this.applyMeta({ kind: 'settings_updated', uuid: idx.uuid, settings });
  }

  async putMapping(idx: IndexState, mappings: unknown): Promise<void> {
    idx.mapping.merge(mappings as never); // validates; throws ES's mapper errors
    await this.appendMeta({ kind: 'mapping_updated', uuid: idx.uuid, mappings });
  }

  async putClusterSettings(settings: Record<string, unknown>): Promise<void> {
    await this.appendMeta({ kind: 'cluster_settings', settings });
    this.applyMeta({ kind: 'cluster_settings', settings });
  }

  private applyMeta(e: MetaEvent): IndexState | undefined {
    switch (e.kind) {
      case 'index_created': {
        const settings = applySettings(defaultIndexSettings(), e.settings, true);
        const mapping = new IndexMapping(e.mappings as never);
        const idx: IndexState = { name: e.name, uuid: e.uuid, creationDate: e.creationDate, settings, mapping, shards: [] };
        for (let n = 0; n < settings.numberOfShards; n++) {
          const store = new ShardStore({
            index: e.name,
            shardId: n,
            mapping,
            settings: () => ({ maxResultWindow: idx.settings.maxResultWindow, maxSlicesPerScroll: idx.settings.maxSlicesPerScroll }),
          });
          const actor = new ShardActor({ index: e.name, indexUuid: e.uuid, n }, store, {
            nc: this.ctx.nc,
            bus: this.ctx.bus,
            log: this.ctx.log,
            refreshIntervalMs: () => idx.settings.refreshIntervalMs,
          });
          idx.shards.push(actor);
          if (this.live) actor.start();
        }
        this.byName.set(e.name, idx);
        this.byUuid.set(e.uuid, idx);
        return idx;
      }
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
        for (const [k, v] of Object.entries(e.settings)) this.ctx.settings.setDynamic(k, v);
        return undefined;
      }
    }
  }
}

