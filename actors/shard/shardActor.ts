import type { NatsConnection, Msg, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { subjects } from '../../streams';
import { asEsError, errorToWire, type EsErrorBody } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import { decodeBatch, encodeBatch } from './opCodec';
import { ChunkedResponder } from './replyChunks';
import type { ShardStore } from './engine';
import type { DocWrite, LoggedOp, SearcherRef, ShardQueryRequest, WriteOutcome } from './engine/types';

/** Address of one shard copy. */
export interface ShardRef {
  index: string;
  indexUuid: string;
  n: number;
}

export type ShardReply<T> = { ok: true; result: T } | { ok: false; error: EsErrorBody };

/** Query op: runs on a pinned searcher (PIT/scroll) or the current one; may fetch sources inline. */
export interface QueryMessage {
  req: ShardQueryRequest;
  searcher?: SearcherRef;
  /** Include the top hits' sources in the reply (single-shard searches skip the fetch round trip). */
  fetch?: boolean;
}
export interface QueryReplyHead {
  searcher: SearcherRef;
  result: import('./engine/types').ShardQueryResult;
  /** Number of leading hits whose sources follow the header line (when fetch was asked). */
  fetched?: number;
  /** Char length of each fetched source, in hit order. */
  lens?: number[];
}
export interface FetchMessage {
  docs: number[];
}
export interface FetchReplyHead {
  /** How many of the requested docs are in this reply (a prefix; the caller asks again for the rest). */
  count: number;
  lens: number[];
  ids: string[];
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Where a shard appends its write batches (actors/cluster/documentLog.ts): `write` brackets the
 * apply + append so a snapshot can find an instant where memory equals the log.
 */
export interface DocLogWriter {
  write<T>(fn: () => Promise<T>): Promise<T>;
  append(subject: string, payload: Uint8Array, ops: number): Promise<unknown>;
}

/**
 * Reply framing for sources: `<header json>\n<src0><src1>…`, the header giving each source's
 * length, so the coordinator parses only the header and splices the bytes.
 */
function framedReply(head: unknown, sources: string[]): Uint8Array {
  return enc.encode(`${stringify({ ok: true, result: head })}\n${sources.join('')}`);
}

/**
 * A shard actor: owns one ShardStore, answers `es.v1.shard.<uuid>.<n>.<op>` over request/reply
 * through ONE wildcard subscription (queue group per shard), appends its write batches to the
 * document log before replying, and refreshes on its refresh interval.
 */
export class ShardActor {
  private sub?: Subscription;
  private timer?: NodeJS.Timeout;
  private readonly maxPayload: number;
  /** Replies over `max_payload` go in parts (replyChunks.ts). */
  private readonly replies: ChunkedResponder;

  constructor(
    readonly ref: ShardRef,
    readonly store: ShardStore,
    private readonly deps: { nc: NatsConnection; docLog: DocLogWriter; log: Logger; refreshIntervalMs: () => number },
  ) {
    this.maxPayload = deps.nc.info?.max_payload ?? 1024 * 1024;
    this.replies = new ChunkedResponder(deps.nc, () => deps.nc.info?.max_payload ?? this.maxPayload);
  }

  start(): this {
    const { indexUuid, n } = this.ref;
    const prefix = `es.v1.shard.${indexUuid}.${n}.`;
    this.sub = this.deps.nc.subscribe(`${prefix}*`, {
      queue: subjects.shardQueue(indexUuid, n),
      callback: (err, msg) => {
        if (err) return; // closing
        void this.dispatch(msg.subject.slice(prefix.length), msg);
      },
    });
    this.scheduleRefresh();
    return this;
  }

  private scheduleRefresh() {
    const ms = this.deps.refreshIntervalMs();
    this.timer = setTimeout(
      () => {
        if (this.store.pendingRefresh()) this.store.refresh();
        this.scheduleRefresh();
      },
      ms > 0 ? ms : 1000,
    );
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    if (this.sub && !this.sub.isClosed()) await this.sub.drain().catch(() => undefined);
    await this.replies.stop();
  }

  private async dispatch(op: string, msg: Msg): Promise<void> {
    try {
      switch (op) {
        case 'write':
          this.replies.respond(msg, enc.encode(await this.deps.docLog.write(() => this.write(dec.decode(msg.data)))));
          return;
        case 'query':
          this.replies.respond(msg, this.query(parseJson<QueryMessage>(dec.decode(msg.data))));
          return;
        case 'fetch':
          this.replies.respond(msg, this.fetch(parseJson<FetchMessage>(dec.decode(msg.data))));
          return;
        case 'get': {
          const { id } = parseJson<{ id: string }>(dec.decode(msg.data));
          return this.ok(msg, this.store.get(id) ?? null);
        }
        case 'refresh':
          this.store.refresh();
          return this.ok(msg, { searcher: this.store.acquireSearcher() });
        case 'searcher':
          return this.ok(msg, this.store.acquireSearcher());
        case 'count': {
          const { query, searcher } = parseJson<{ query?: unknown; searcher?: SearcherRef }>(dec.decode(msg.data));
          return this.ok(msg, this.store.count(searcher ?? this.store.acquireSearcher(), query));
        }
        case 'stats':
          return this.ok(msg, this.store.stats());
        default:
          throw new Error(`unknown shard op [${op}]`);
      }
    } catch (e) {
      const err = asEsError(e);
      if (err.status >= 500) this.deps.log.error({ err: e, shard: this.ref, op }, 'shard op failed');
      try {
        this.replies.respond(msg, enc.encode(JSON.stringify({ ok: false, error: errorToWire(err) })));
      } catch {
        // the connection is gone: the requester fails on its own
      }
    }
  }

  private ok(msg: Msg, result: unknown) {
    this.replies.respond(msg, enc.encode(stringify({ ok: true, result })));
  }

  /**
   * Applies a batch, appends the resulting ops to the document log and replies only after the
   * JetStream ack: an acknowledged write is never lost.
   */
  private async write(text: string): Promise<string> {
    const [headLine, ...rest] = splitFirstLine(text);
    const head = JSON.parse(headLine) as { refresh?: 'true' | 'false' | 'wait_for' };
    const writes = decodeBatch<DocWrite>(rest.join(''));
    const outcomes: WriteOutcome[] = [];
    const logged: LoggedOp[] = [];
    for (const w of writes) {
      const o = this.store.write(w);
      if (o.ok && o.logged) logged.push(o.logged);
      outcomes.push(o.ok ? { ...o, logged: undefined } : o);
    }
    if (logged.length) {
      await this.deps.docLog.append(subjects.dataShard(this.ref.indexUuid, this.ref.n), enc.encode(encodeBatch(logged, (l) => l.source)), logged.length);
    }
    let refreshed = false;
    if (head.refresh === 'true' || head.refresh === 'wait_for') {
      if (this.store.pendingRefresh()) this.store.refresh();
      refreshed = head.refresh === 'true';
    }
    return stringify({ ok: true, result: { outcomes, refreshed } });
  }

  private query(m: QueryMessage): Uint8Array {
    const searcher = m.searcher ?? this.store.acquireSearcher();
    const result = this.store.query(searcher, m.req);
    if (!m.fetch) return framedReply({ searcher, result }, []);
    const sources: string[] = [];
    const lens: number[] = [];
    let budget = Math.floor(this.maxPayload * 0.45); // chars ~ bytes for JSON; leave room for UTF-8 growth
    for (const h of result.hits) {
      const s = this.store.source(h.doc);
      if (sources.length && s.length > budget) break;
      budget -= s.length;
      sources.push(s);
      lens.push(s.length);
    }
    return framedReply({ searcher, result, fetched: sources.length, lens }, sources);
  }

  private fetch(m: FetchMessage): Uint8Array {
    const sources: string[] = [];
    const lens: number[] = [];
    const ids: string[] = [];
    let budget = Math.floor(this.maxPayload * 0.45);
    for (const d of m.docs) {
      const s = this.store.source(d);
      if (sources.length && s.length > budget) break;
      budget -= s.length;
      sources.push(s);
      lens.push(s.length);
      ids.push(this.store.id(d));
    }
    return framedReply({ count: sources.length, lens, ids } satisfies FetchReplyHead, sources);
  }
}

function splitFirstLine(text: string): [string, string] {
  const nl = text.indexOf('\n');
  return nl < 0 ? [text, ''] : [text.slice(0, nl), text.slice(nl + 1)];
}

/** Decodes a framed reply: header object plus the source strings that follow it. */
export function decodeFramed<T>(data: Uint8Array, lensOf: (head: T) => number[] | undefined): { head: ShardReply<T>; sources: string[] } {
  const text = dec.decode(data);
  const nl = text.indexOf('\n');
  const head = parseJson<ShardReply<T>>(nl < 0 ? text : text.slice(0, nl));
  const sources: string[] = [];
  if (head.ok && nl >= 0) {
    let pos = nl + 1;
    for (const len of lensOf(head.result) ?? []) {
      sources.push(text.slice(pos, pos + len));
      pos += len;
    }
  }
  return { head, sources };
}
