/**
 * The shared node of `npm run bench`: one nats-server store and one `startSystem` holding the
 * corpus index (`bench`: N documents, 3 shards), built once on first use and loaded through the
 * HTTP edge by a child process. Building it is issue 2's ingest measurement, so its figures are
 * kept here for the foundation section whichever section asked first.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startEmbeddedNats, type EmbeddedNats } from '../../actors/embeddedNats';
import type { BusConnection } from '../../streams/busConnection';
import { startSystem, type System } from '../../actors/system';
import { Settings } from '../../actors/config';
import { loadBulk, portOf } from './load';
import { settledHeap } from './stats';
import { startConsole } from '../../actors/console';

export const INDEX = 'bench';
export const MAPPINGS = {
  properties: { id: { type: 'long' }, n: { type: 'long' }, ts: { type: 'date' }, tag: { type: 'keyword' }, title: { type: 'text' } },
};

export interface CorpusNode {
  url: string;
  port: number;
  index: string;
  docs: number;
  sys: System;
  nats: EmbeddedNats;
  natsUrl: string;
  /** The benchmarks' own login (every subject: their baselines publish outside the node's). */
  natsConn: BusConnection;
  root: string;
  natsDir: string;
  dataDir: string;
  configDir: string;
  /** The bulk load through the HTTP edge (NDJSON batches of 5,000 from a child process). */
  ingest: { docs: number; ms: number; bytes: number; errorBatches: number; batch: number; conc: number };
  /** heapUsed growth of this process (where the node runs) over the load, after gc, per document. */
  heapPerDoc: number;
}

/** Settings of a bench node: security off, logs silent. */
export const benchSettings = (extra: Record<string, unknown> = {}) => new Settings({ 'xpack.security.enabled': false, ...extra });

/** Starts a node on an existing store (port 0, silent) as the server's node user; the caller stops it. */
export function bootNode(nats: EmbeddedNats, dataDir: string, configDir: string): Promise<System> {
  return startSystem({
    host: '127.0.0.1', port: 0, natsUrl: nats.url, dataDir, configDir,
    settings: benchSettings({ 'nats.nkey_seed_file': nats.keys.node.file }), log: pino({ level: 'silent' }),
    extensions: [startConsole], // as a started node has it (its gate wrapper is part of the cost)
  });
}

/** JSON over http to a node (small admin calls; load goes through the child loader). */
export async function call<T = unknown>(url: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(url + path, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export class Corpus {
  private built?: Promise<CorpusNode>;
  private node?: CorpusNode;
  private root?: string;

  constructor(readonly docs: number, private readonly note: (l: string) => void = () => undefined) {}

  /** The node, building it on first call. */
  get(): Promise<CorpusNode> {
    this.built ??= this.build().catch(async (e) => {
      this.built = undefined;
      await this.stop();
      throw e;
    });
    return this.built;
  }

  private async build(): Promise<CorpusNode> {
    const root = (this.root = await mkdtemp(join(tmpdir(), 'bench-corpus-')));
    const natsDir = join(root, 'nats');
    const dataDir = join(root, 'data');
    const configDir = join(root, 'config');
    const nats = await startEmbeddedNats(natsDir, { admin: true });
    const partial = { nats, root, natsDir, dataDir, configDir, natsUrl: nats.url, natsConn: nats.connection('admin'), index: INDEX, docs: this.docs } as CorpusNode;
    this.node = partial;
    partial.sys = await bootNode(nats, dataDir, configDir);
    partial.url = partial.sys.url;
    partial.port = portOf(partial.url);
    await call(partial.url, 'PUT', `/${INDEX}`, { settings: { number_of_shards: 3, number_of_replicas: 0 }, mappings: MAPPINGS });
    const h0 = await settledHeap();
    const batch = 5000;
    const conc = 2;
    this.note(`corpus: bulk loading ${this.docs.toLocaleString('en-US')} documents through ${partial.url} ...`);
    const r = await loadBulk(partial.port, { index: INDEX, docs: this.docs, batch, conc, refresh: true });
    if (r.errorBatches) throw new Error(`${r.errorBatches} bulk batches had item errors`);
    partial.ingest = { ...r, batch, conc };
    partial.heapPerDoc = ((await settledHeap()) - h0) / this.docs;
    const count = await call<{ count: number }>(partial.url, 'GET', `/${INDEX}/_count`);
    if (count.count !== this.docs) throw new Error(`corpus has ${count.count} documents, expected ${this.docs}`);
    this.note(`corpus: ${this.docs.toLocaleString('en-US')} documents in ${(r.ms / 1000).toFixed(1)} s`);
    return partial;
  }

  /**
   * Stops the node and its nats-server and copies the store (nats-server's directory) to each of
   * `dests`, with the server stopped so the copies are consistent. The store itself is removed by
   * `stop()`; a later `get()` would build a new corpus.
   */
  async copyStoreTo(dests: string[]): Promise<void> {
    const n = await this.get();
    await n.sys.stop();
    await n.nats.stop();
    for (const d of dests) await cp(n.natsDir, d, { recursive: true });
    this.built = undefined;
    this.node = undefined;
  }

  /** Stops whatever runs and removes the store (safe to call twice, and after a failed build). */
  async stop(): Promise<void> {
    const n = this.node;
    this.node = undefined;
    this.built = undefined;
    await n?.sys?.stop().catch(() => undefined);
    await n?.nats?.stop().catch(() => undefined);
    if (this.root) await rm(this.root, { recursive: true, force: true });
    this.root = undefined;
  }
}
