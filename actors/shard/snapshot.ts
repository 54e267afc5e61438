/**
 * Snapshot files of the document projection (issue 6 item 6): one file per snapshot in
 * `DATA_DIR/snapshots/`, named after the ES_DATA stream sequence S it reflects, so start-up loads
 * the newest one and replays only the log after S.
 *
 * Layout (little-endian):
 *
 *   "ESSNAP\0\n"  u32 format version                                   (12 bytes)
 *   section*      u32 kind | u32 crc32(body) | u64 body length | body  (16-byte head)
 *
 * Sections: one `header` (JSON: S, the log's identity, index metadata and mappings, cluster
 * settings), one `shard` per shard (index uuid, shard number, storeCodec image), then `end` (the
 * section count). Each body is checked before it is decoded; a file without its end section is
 * truncated. Files are written to a temp name, fsynced, renamed and the directory fsynced.
 */
import { mkdir, open, readdir, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { ByteReader, ChunkWriter, SnapshotFormatError } from './engine/base/binary';
import { decodeStore, encodeStoreSteps } from './engine/store/storeCodec';
import type { FrozenStore, LoadedStore, ShardStore } from './engine/store/shardStore';
import { syncDir } from './engine/store/commitPoint';
import type { MappingImage } from './engine/index/mapping';

export { SnapshotFormatError } from './engine/base/binary';

/** Bumped on any incompatible change; older or newer files are ignored (full replay). */
export const SNAPSHOT_FORMAT = 1;
const MAGIC = Buffer.from('ESSNAP\0\n', 'latin1');
const Section = { Header: 1, Shard: 2, End: 0xff } as const;
const FILE_RE = /^snapshot-(\d{20})\.snap$/;

/** One index as a snapshot records it. */
export interface IndexImage {
  name: string;
  uuid: string;
  creationDate: number;
  /** IndexSettings as plain data. */
  settings: unknown;
  mapping: MappingImage;
  shards: number;
  /** Where the index's shard copies were (allocation facts); absent in snapshots of older versions. */
  allocation?: unknown;
}

/** The header section. */
export interface SnapshotHeader {
  /**
   * ES_DATA stream sequence naming the snapshot: the highest point below. (Files of older versions,
   * without `metaAccepted`/`copies`, are not used: the log is replayed instead.)
   */
  seq: number;
  /** The metadata holds exactly the effects of `es.v1.data.meta` messages up to here. */
  metaSeq?: number;
  /** The last metadata fact applied (refused facts do not count). */
  metaAccepted?: number;
  /** The shard copies in this file, each exactly the effects of its subject's messages up to `applied`. */
  copies?: Array<{ uuid: string; n: number; applied: number }>;
  /**
   * Identity of the log it belongs to: the stream name and the subject and publish timestamp of
   * message S (a re-created stream has other timestamps; the stream's own `created` is reset when
   * nats-server recovers it from disk, so it cannot serve).
   */
  stream: { name: string; at?: { subject: string; timestamp: string } };
  node: string;
  takenAt: string;
  indices: IndexImage[];
  clusterSettings: Record<string, unknown>;
  /** Aliases and templates (actors/cluster/clusterMetadata.ts MetadataImage), plain JSON. */
  metadata?: unknown;
}

/** A snapshot file on disk. */
export interface SnapshotFile {
  path: string;
  seq: number;
}

const fileName = (seq: number) => `snapshot-${String(seq).padStart(20, '0')}.snap`;

/** Snapshot files in `dir`, newest (highest S) first. */
export async function listSnapshots(dir: string): Promise<SnapshotFile[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return [];
  }
  return names
    .map((n) => FILE_RE.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ path: join(dir, m[0]), seq: Number(m[1]) }))
    .sort((a, b) => b.seq - a.seq);
}

/**
 * Writes one snapshot, section by section, so only one shard's image is in memory at a time.
 * @example
 *   const w = await SnapshotWriter.create(dir, header);
 *   for (const s of shards) await w.shard(uuid, n, store, frozen);
 *   const path = await w.commit();
 */
export class SnapshotWriter {
  private sections = 0;
  private bytes = 0;
  private constructor(
    private readonly dir: string,
    private readonly tmp: string,
    private readonly seq: number,
    private readonly fh: FileHandle,
  ) {}

  static async create(dir: string, header: SnapshotHeader): Promise<SnapshotWriter> {
    await mkdir(dir, { recursive: true });
    const tmp = join(dir, `.${fileName(header.seq)}.${process.pid}.tmp`);
    const fh = await open(tmp, 'w', 0o600);
    const w = new SnapshotWriter(dir, tmp, header.seq, fh);
    try {
      const head = Buffer.alloc(12);
      MAGIC.copy(head);
      head.writeUInt32LE(SNAPSHOT_FORMAT, 8);
      await w.write([head]);
      const body = new ChunkWriter();
      body.json(header);
      await w.section(Section.Header, body.parts());
    } catch (e) {
      await w.abort();
      throw e;
    }
    return w;
  }

  /** Encodes and appends one shard. */
  async shard(indexUuid: string, n: number, store: ShardStore, frozen: FrozenStore): Promise<void> {
    await this.append(this.encodeShard(indexUuid, n, store, frozen));
  }

  /** The synchronous part of `shard`. */
  encodeShard(indexUuid: string, n: number, store: ShardStore, frozen: FrozenStore): Buffer[] {
    const steps = this.encodeShardSteps(indexUuid, n, store, frozen);
    for (let r = steps.next(); ; r = steps.next()) if (r.done) return r.value;
  }

  /** `encodeShard` in short synchronous steps (callers yield to the event loop between them). */
  *encodeShardSteps(indexUuid: string, n: number, store: ShardStore, frozen: FrozenStore): Generator<void, Buffer[]> {
    const body = new ChunkWriter();
    body.str(indexUuid);
    body.u32(n);
    yield* encodeStoreSteps(body, store.snapshotBuffer(), frozen);
    return body.parts();
  }

  /** Appends an encoded shard section. */
  async append(parts: Buffer[]): Promise<void> {
    await this.section(Section.Shard, parts);
  }

  /** Ends, fsyncs and renames the file into place; returns its path and size. */
  async commit(): Promise<{ path: string; bytes: number }> {
    try {
      const end = new ChunkWriter();
      end.u32(this.sections);
      await this.section(Section.End, end.parts());
      await this.fh.sync();
      await this.fh.close();
      const path = join(this.dir, fileName(this.seq));
      await rename(this.tmp, path);
      syncDir(this.dir);
      return { path, bytes: this.bytes };
    } catch (e) {
      await this.abort();
      throw e;
    }
  }

  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
    await rm(this.tmp, { force: true });
  }

  private async section(kind: number, parts: Buffer[]): Promise<void> {
    let crc = 0;
    let len = 0;
    for (const p of parts) {
      crc = crc32(p, crc);
      len += p.length;
    }
    const head = Buffer.alloc(16);
    head.writeUInt32LE(kind, 0);
    head.writeUInt32LE(crc, 4);
    head.writeBigUInt64LE(BigInt(len), 8);
    await this.write([head, ...parts]);
    this.sections++;
  }

  private async write(parts: Buffer[]): Promise<void> {
    for (const p of parts) {
      let off = 0;
      while (off < p.length) off += (await this.fh.write(p, off, p.length - off)).bytesWritten;
      this.bytes += p.length;
    }
  }
}


/** What reading a snapshot file yields, in file order. */
export type SnapshotSection =
  | { kind: 'header'; header: SnapshotHeader }
  | { kind: 'shard'; indexUuid: string; n: number; image: LoadedStore };

/**
 * Reads and verifies a snapshot file section by section (stop early to look at the header only).
 * Throws SnapshotFormatError on a wrong magic or version, a checksum mismatch, a truncated file or
 * a malformed image; nothing yielded before the end is trustworthy until the generator finishes.
 */
export async function* readSnapshot(path: string): AsyncGenerator<SnapshotSection> {
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    let pos = 0;
    const read = async (n: number): Promise<Buffer> => {
      if (n > size - pos) throw new SnapshotFormatError(`truncated snapshot: ${n} bytes wanted at ${pos} of ${size}`);
      const b = Buffer.allocUnsafeSlow(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await fh.read(b, got, n - got, pos + got);
        if (bytesRead === 0) throw new SnapshotFormatError('snapshot shrank while reading');
        got += bytesRead;
      }
      pos += n;
      return b;
    };
    const head = await read(12);
    if (!head.subarray(0, 8).equals(MAGIC)) throw new SnapshotFormatError('not a snapshot file');
    const version = head.readUInt32LE(8);
    if (version !== SNAPSHOT_FORMAT) throw new SnapshotFormatError(`snapshot format ${version}, this node reads ${SNAPSHOT_FORMAT}`);
    let sections = 0;
    for (;;) {
      const sh = await read(16);
      const kind = sh.readUInt32LE(0);
      const crc = sh.readUInt32LE(4);
      const len = Number(sh.readBigUInt64LE(8));
      const body = await read(len);
      if (crc32(body) !== crc) throw new SnapshotFormatError(`checksum mismatch in section ${sections} at ${pos - len}`);
      const r = new ByteReader(body);
      if (kind === Section.End) {
        if (r.u32() !== sections) throw new SnapshotFormatError('section count mismatch');
        if (pos !== size) throw new SnapshotFormatError('bytes after the end section');
        return;
      }
      if (kind === Section.Header && sections === 0) yield { kind: 'header', header: r.json<SnapshotHeader>() };
      else if (kind === Section.Shard && sections > 0) {
        const indexUuid = r.str();
        const n = r.u32();
        const image = decodeStore(r);
        if (!r.done) throw new SnapshotFormatError('trailing bytes in a shard section');
        yield { kind: 'shard', indexUuid, n, image };
      } else throw new SnapshotFormatError(`unexpected section kind ${kind} at position ${sections}`);
      sections++;
    }
  } finally {
    await fh.close();
  }
}

/** Deletes all but the newest `keep` snapshots and any leftover temp files; returns what remains. */
export async function pruneSnapshots(dir: string, keep: number): Promise<SnapshotFile[]> {
  const all = await listSnapshots(dir);
  for (const f of all.slice(keep)) await rm(f.path, { force: true });
  for (const n of await readdir(dir).catch(() => [] as string[])) {
    if (!n.endsWith('.tmp') || n.includes(`.${process.pid}.`)) continue;
    const p = join(dir, n);
    // another process's temp file: remove only if clearly abandoned
    const st = await stat(p).catch(() => undefined);
    if (st && Date.now() - st.mtimeMs > 3_600_000) await rm(p, { force: true });
  }
  return all.slice(0, keep);
}
