import { open, statfs } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { DiscardPolicy, jetstreamManager } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { DATA_STREAM } from '../../streams';
import type { Settings } from '../config';
import { floodStageBlocked } from '../wire/esErrors';
import { parseTimeValue } from '../wire/timeValue';
import { diskLevel, diskThresholds, freeBytesThreshold, INFO_INTERVAL_KEY, parseBytes, type DiskLevel, type DiskThresholds } from './diskThreshold';

/** One place the document log's room is measured: the JetStream store, or the disk under it. */
export interface RoomReading {
  source: 'jetstream' | 'disk';
  totalBytes: number;
  freeBytes: number;
  /** What sized `totalBytes` (the JetStream store: account limit, server limit, setting, learned). */
  from: string;
  level: DiskLevel;
}

export interface FloodStageOptions {
  nc: NatsConnection;
  settings: Settings;
  log: Logger;
  /** The JetStream store directory of an embedded nats-server (its disk is watched too). */
  storeDir?: string;
  /** The embedded nats-server's log file: its start banner names the store's `Max Storage`. */
  serverLog?: string;
  /** Whether this node manages the document log's cap (one node does: the allocation lease holder). */
  manager?: () => boolean;
}

/** Room kept in the store beyond the document log's cap: lifecycle facts, credentials, KV buckets. */
export function lifecycleReserve(capacity: number): number {
  return Math.max(1024 * 1024, Math.min(Math.floor(capacity * 0.02), 1024 ** 3));
}

/** The `Max Storage:` a nats-server printed at its last start (1024-based units, as nats prints them). */
export function maxStorageFromLog(text: string): number | undefined {
  const all = [...text.matchAll(/Max Storage:\s+([\d.]+)\s*([KMGTPE]?B)\b/g)];
  const m = all.at(-1);
  if (!m) return undefined;
  const pow = ' KMGTPE'.indexOf(m[2].length === 2 ? m[2][0] : ' ');
  return Math.round(Number(m[1]) * 1024 ** Math.max(pow, 0));
}

/**
 * ES's DiskThresholdMonitor for the store the document log lives in. Every `cluster.info.update.interval`
 * it reads the room JetStream has left (account storage against the store's size: the account's
 * JetStream limit, the server's `max_file_store` from an embedded server's start banner or the
 * `nats.max_file_store` setting, or what the store held when it last refused an append) and, for an
 * embedded nats-server, the disk under the store, and applies ES's watermarks to each. Over the
 * flood stage every index gets ES's read-only-allow-delete block: writes to it are refused with
 * 429 `cluster_block_exception`, deletes (of documents and indices) go on; the block is released once
 * every measure is back under the high watermark, as ES does, without a restart.
 *
 * It also keeps a cap on the document log (ES_DATA `max_bytes`, discard new) a little under the
 * store's size, so that a full document log leaves room for lifecycle and credential facts: opening
 * a PIT, clearing a scroll or invalidating a key never fails because documents filled the store.
 */
export class FloodStage {
  /** The read-only-allow-delete block is on (every index). */
  blocked = false;
  level: DiskLevel = 'ok';
  readings: RoomReading[] = [];
  /** Polls that failed (NATS down): the last readings stand. */
  failures = 0;
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private serverMax?: number;
  private learned?: number;
  private stopped = false;
  /** Bytes written through this node since the last look (see noteWritten). */
  private written = 0;

  constructor(private readonly o: FloodStageOptions) {}

  private get thresholds(): DiskThresholds {
    return diskThresholds((k) => this.o.settings.get<unknown>(k, undefined));
  }

  /** The store's size in bytes as best known now, and where it comes from. */
  capacity(accountMax = -1): { bytes: number; from: string } | undefined {
    const known: Array<{ bytes: number; from: string }> = [];
    if (accountMax > 0) known.push({ bytes: accountMax, from: 'account limit' });
    const setting = this.o.settings.get<unknown>('nats.max_file_store', undefined);
    if (setting !== undefined && setting !== null) known.push({ bytes: parseBytes(String(setting), 'nats.max_file_store'), from: 'nats.max_file_store' });
    else if (this.serverMax) known.push({ bytes: this.serverMax, from: 'nats-server max_file_store' });
    if (this.learned) known.push({ bytes: this.learned, from: 'learned from a refused append' });
    return known.filter((k) => k.bytes > 0).sort((a, b) => a.bytes - b.bytes)[0];
  }

  /** The cap the document log should have (bytes), when the store's size is known. */
  async dataCap(): Promise<number | undefined> {
    await this.readServerMax();
    const c = this.capacity();
    return c && c.from !== 'learned from a refused append' ? c.bytes - lifecycleReserve(c.bytes) : undefined;
  }

  async start(): Promise<void> {
    await this.readServerMax();
    await this.poll();
    void this.watchReconnects();
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    let ms = 1_000;
    try {
      ms = parseTimeValue(String(this.o.settings.get<unknown>(INFO_INTERVAL_KEY, '1s')), INFO_INTERVAL_KEY);
    } catch {
      // checked when set
    }
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), Math.max(100, ms));
    this.timer.unref();
  }

  /** A nats-server that restarted may have another size (its banner is read again). */
  private async watchReconnects(): Promise<void> {
    for await (const s of this.o.nc.status()) if (s.type === 'reconnect') void this.readServerMax().then(() => this.poll());
  }

  private async readServerMax(): Promise<void> {
    if (!this.o.serverLog) return;
    try {
      const fh = await open(this.o.serverLog, 'r');
      try {
        const { size } = await fh.stat();
        // the banner of the last start: read backwards in 1 MB steps
        for (let end = size; end > 0; end -= 1024 * 1024 - 4096) {
          const start = Math.max(0, end - 1024 * 1024);
          const buf = Buffer.alloc(end - start);
          await fh.read(buf, 0, buf.length, start);
          const found = maxStorageFromLog(buf.toString('latin1'));
          if (found) {
            this.serverMax = found;
            return;
          }
          if (start === 0) return;
        }
      } finally {
        await fh.close();
      }
    } catch {
      // no log yet: the store's size stays unknown until the next read
    }
  }

  /**
   * This node's edge had `bytes` written to the log since the last look: until the next one, they
   * count as used (a burst of writes cannot run far past the flood stage between two looks).
   */
  noteWritten(bytes: number): void {
    this.written += bytes;
    const js = this.readings.find((r) => r.source === 'jetstream');
    if (!js || this.blocked) return;
    let t: DiskThresholds;
    try {
      t = this.thresholds;
    } catch {
      return;
    }
    if (diskLevel(t, js.totalBytes, js.freeBytes - this.written) !== 'flood') return;
    this.apply(t, this.readings.map((r) => (r === js ? { ...r, freeBytes: Math.max(0, r.freeBytes - this.written), level: 'flood' as const } : r)));
    void this.poll();
  }

  /** The store refused an append for lack of room: look again now, and learn its size if unknown. */
  noteFull(): void {
    void this.poll(true);
  }

  /** Throws ES's 429 when writes to these indices are blocked (deletes are never blocked). */
  checkWrite(...indices: string[]): void {
    if (indices.length && this.writesBlocked) throw floodStageBlocked(indices);
  }

  /** Whether writes (not deletes) to indices are refused now. */
  get writesBlocked(): boolean {
    if (!this.blocked) return false;
    try {
      return this.thresholds.enabled;
    } catch {
      return true; // settings checked when set; a bad combination keeps the block
    }
  }

  poll(full = false): Promise<void> {
    this.polling ??= this.measure(full).finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async measure(full: boolean): Promise<void> {
    let t: DiskThresholds;
    try {
      t = this.thresholds;
    } catch (e) {
      this.o.log.warn({ err: (e as Error).message }, 'disk watermark settings are invalid; keeping the last decision');
      return;
    }
    const readings: RoomReading[] = [];
    try {
      const jsm = await jetstreamManager(this.o.nc, { timeout: 2_000 });
      const written = this.written;
      const account = await jsm.getAccountInfo();
      this.written -= written; // now in the account's figure
      if (full && !this.capacity(account.limits.max_storage)) {
        this.learned = account.storage;
        this.o.log.warn({ storage: account.storage }, 'the JetStream store refused an append for lack of room: its size is taken to be what it holds now');
      }
      if (this.learned && account.storage > this.learned) this.learned = undefined; // it was larger than learned
      const c = this.capacity(account.limits.max_storage);
      if (c) {
        const free = Math.max(0, c.bytes - account.storage);
        readings.push({ source: 'jetstream', totalBytes: c.bytes, freeBytes: free, from: c.from, level: diskLevel(t, c.bytes, free) });
        if (this.o.manager?.()) await this.keepCap(jsm, c);
      }
      this.failures = 0;
    } catch {
      this.failures++;
      return; // NATS is not answering: the last decision stands
    }
    if (this.o.storeDir) {
      try {
        const s = await statfs(this.o.storeDir);
        const total = s.blocks * s.bsize;
        const free = s.bavail * s.bsize;
        readings.push({ source: 'disk', totalBytes: total, freeBytes: free, from: this.o.storeDir, level: diskLevel(t, total, free) });
      } catch {
        // no local file system to look at
      }
    }
    this.apply(t, readings);
  }

  private apply(t: DiskThresholds, readings: RoomReading[]): void {
    const order: DiskLevel[] = ['ok', 'low', 'high', 'flood'];
    const level = readings.reduce<DiskLevel>((a, r) => (order.indexOf(r.level) > order.indexOf(a) ? r.level : a), 'ok');
    const was = this.blocked;
    if (level === 'flood') this.blocked = true;
    else if (level !== 'high') this.blocked = false; // released under the high watermark (ES 7.4+)
    if (level !== this.level || was !== this.blocked) {
      const worst = readings.find((r) => r.level === level);
      const room = worst && { source: worst.source, total: worst.totalBytes, free: worst.freeBytes, from: worst.from };
      if (this.blocked && !was) {
        this.o.log.warn({ ...room, flood_stage: t.flood.text }, `flood stage disk watermark [${t.flood.text}] exceeded on the document log's store; all indices are marked read-only (deletes allowed)`);
      } else if (!this.blocked && was) {
        this.o.log.info({ ...room }, `the document log's store is below the high disk watermark again; releasing the read-only-allow-delete block`);
      } else if (order.indexOf(level) > order.indexOf(this.level) && level !== 'ok') {
        this.o.log.warn({ ...room, level }, `${level} disk watermark exceeded on the document log's store`);
      }
    }
    this.level = level;
    this.readings = readings;
  }

  /**
   * Keeps ES_DATA's cap at the store's size less the lifecycle reserve. Raising it is always safe;
   * setting or lowering it is done only with a wide margin over what the stream holds, because
   * nats-server deletes a stream's oldest messages down to a lowered `max_bytes` (discard new or not).
   */
  private async keepCap(jsm: Awaited<ReturnType<typeof jetstreamManager>>, c: { bytes: number; from: string }): Promise<void> {
    if (c.from === 'learned from a refused append') return;
    const target = c.bytes - lifecycleReserve(c.bytes);
    const info = await jsm.streams.info(DATA_STREAM);
    const cur = info.config.max_bytes;
    if (cur > 0 && Math.abs(cur - target) <= target * 0.005 && info.config.discard === DiscardPolicy.New) return;
    const margin = Math.max(target * 0.1, 2 * (this.o.nc.info?.max_payload ?? 1024 * 1024));
    const raising = cur > 0 && target > cur;
    if (!raising && target < info.state.bytes + margin) return;
    try {
      await jsm.streams.update(DATA_STREAM, { ...info.config, max_bytes: target, discard: DiscardPolicy.New });
      this.o.log.info({ max_bytes: target, was: cur, store: c.bytes, from: c.from }, 'document log capped below the store size (room kept for lifecycle facts)');
    } catch (e) {
      this.o.log.warn({ err: (e as Error).message, max_bytes: target }, 'could not cap the document log');
    }
  }

  /**
   * The document log is at its cap and something that frees room must still go in (an index
   * deletion): the cap is raised into the lifecycle reserve by half of it (raising never deletes
   * anything); the next look lowers it again once the room is back. False when there is no cap.
   */
  async borrowRoom(): Promise<boolean> {
    const c = this.capacity();
    if (!c) return false;
    try {
      const jsm = await jetstreamManager(this.o.nc, { timeout: 2_000 });
      const info = await jsm.streams.info(DATA_STREAM);
      const cur = info.config.max_bytes;
      if (cur <= 0 || cur >= c.bytes) return false;
      const to = Math.min(c.bytes, cur + Math.ceil(lifecycleReserve(c.bytes) / 2));
      await jsm.streams.update(DATA_STREAM, { ...info.config, max_bytes: to });
      this.o.log.warn({ max_bytes: to, was: cur }, 'document log cap raised into the lifecycle reserve to let a deletion in');
      return true;
    } catch (e) {
      this.o.log.warn({ err: (e as Error).message }, 'could not raise the document log cap');
      return false;
    }
  }

  /** What `_nodes/stats` shows under `fs`. */
  room(): { level: DiskLevel; blocked: boolean; readings: RoomReading[] } {
    return { level: this.level, blocked: this.writesBlocked, readings: this.readings };
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
