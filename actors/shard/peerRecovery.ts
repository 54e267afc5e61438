/**
 * Peer recovery (ES's file-based recovery, through NATS): a copy that starts empty, or whose
 * document log was trimmed past its commit, takes a started copy's segments instead of the whole
 * log. The source flushes and commits, holds its segments (a pin) while it puts every file of
 * that commit into the JetStream object store `ES_SEGMENTS` (node-only, entries age out after a
 * day), and answers with the commit; the target fetches the files into its directory (temporary
 * names, fsync, rename), writes the commit, opens it, and reads only the log after it.
 *
 * Objects are named `<indexUuid>/<n>/<sourceNode>/<file>`: segment files never change, so a file
 * already in the store is not sent again (a second replica of the same shard reuses them).
 */
import { createReadStream, createWriteStream, fsyncSync, mkdirSync, openSync, closeSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { Objm, StorageType, type ObjectStore } from '@nats-io/obj';
import { nanos } from '@nats-io/nats-core';
import type { ShardStore } from './engine';
import { syncDir, writeCommit, type CommitPoint } from './engine/store/commitPoint';
import { crashPoint } from '../wire/crashPoint';

export const SEGMENTS_BUCKET = 'ES_SEGMENTS';
const DAY_MS = 24 * 3_600_000;

const stores = new WeakMap<NatsConnection, Promise<ObjectStore>>();

/** The object store segment files travel through (created on first use). */
export function segmentObjects(nc: NatsConnection, replicas = 1): Promise<ObjectStore> {
  let p = stores.get(nc);
  if (!p) {
    p = new Objm(nc).create(SEGMENTS_BUCKET, { replicas, storage: StorageType.File, ttl: nanos(DAY_MS), description: 'segment files of shard copies in recovery' });
    p.catch(() => stores.delete(nc));
    stores.set(nc, p);
  }
  return p;
}

/** What a source answers: the commit its files make up, and where they are in the store. */
export interface RecoveryOffer {
  commit: CommitPoint;
  /** Object name prefix (`<uuid>/<n>/<node>/`). */
  prefix: string;
  files: Array<{ name: string; size: number }>;
  bytes: number;
}

/**
 * Source side: commit now, put every file of the commit into the object store (skipping the ones
 * already there), and answer with the commit. The segments stay pinned while they are read.
 */
export async function offerSegments(store: ShardStore, dir: string, os: ObjectStore, prefix: string): Promise<RecoveryOffer> {
  await store.flushAsync();
  const hold = `recovery:${prefix}:${Date.now()}`;
  store.pin(hold, store.acquireSearcher().seqNo);
  try {
    const commit = store.commitSnapshot();
    if (!commit) throw new Error('the copy has no commit to offer');
    const names = new Set<string>();
    for (const s of [...commit.segments, ...commit.pins.flatMap((p) => p.segments)]) {
      names.add(`${s.meta.name}.seg`);
      if (s.del) names.add(s.del);
    }
    const files: RecoveryOffer['files'] = [];
    let bytes = 0;
    for (const name of names) {
      const path = join(dir, name);
      const size = statSync(path).size;
      const key = `${prefix}${name}`;
      const have = await os.info(key);
      if (!have || have.deleted || have.size !== size) {
        await os.put({ name: key }, Readable.toWeb(createReadStream(path)) as unknown as ReadableStream<Uint8Array>);
        await crashPoint('recovery.put');
      }
      files.push({ name, size });
      bytes += size;
    }
    return { commit, prefix, files, bytes };
  } finally {
    store.unpin(hold);
  }
}

/**
 * Target side: fetches an offer's files into `dir` (emptied first) and writes its commit there;
 * the copy then opens the directory as after a restart. A crash meanwhile leaves no commit (the
 * next attempt starts over) or a complete one.
 */
export async function fetchSegments(os: ObjectStore, offer: RecoveryOffer, dir: string, logId?: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const f of offer.files) {
    const got = await os.get(`${offer.prefix}${f.name}`);
    if (!got) throw new Error(`segment file ${f.name} is missing from the object store`);
    const tmp = join(dir, `${f.name}.tmp`);
    await pipeline(Readable.fromWeb(got.data as never), createWriteStream(tmp));
    const err = await got.error;
    if (err) throw err;
    const fd = openSync(tmp, 'r+');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (statSync(tmp).size !== f.size) throw new Error(`segment file ${f.name} arrived with ${statSync(tmp).size} bytes, not ${f.size}`);
    renameSync(tmp, join(dir, f.name));
    await crashPoint('recovery.fetch');
  }
  syncDir(dir);
  writeCommit(dir, { ...offer.commit, ...(logId ? { logId } : {}) });
}
