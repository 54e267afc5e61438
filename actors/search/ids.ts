import { createHmac, hash, timingSafeEqual } from 'node:crypto';
import { illegalArgument } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import type { SortValue } from '../shard/engine/types';

/**
 * Opaque scroll and PIT ids: URL-safe base64 (padded, like ES's) of
 * `[kind byte][key id byte][16-byte context uuid][position JSON][16-byte HMAC-SHA256]`, signed
 * with the cluster's id key (the same on every node, actors/cluster/identity.ts), so any node can
 * read an id another node issued; the key id lets the key be rotated while older ids still
 * verify. The scroll id carries the position after the page it came with, so re-sending an id
 * after a lost response returns the same next page (retry-safe). The MAC makes forged or
 * truncated ids a 400, never a crash or a lookup.
 *
 * Ids issued before the cluster key existed (kind bytes `S`/`P`, no key id, signed with the
 * node's own key) are still read when that key is given.
 */
const KIND = { scroll: 0x73, pit: 0x70 } as const;
const LEGACY_KIND = { scroll: 0x53, pit: 0x50 } as const;
const MAC_LEN = 16;

export interface ScrollPosition {
  /** Internal sort values of the last hit returned (absent before the first page). */
  after?: SortValue[];
  /** Pages served so far (diagnostics only). */
  page: number;
}

/** A signing key and its id (1..255). */
export interface SigningKey {
  kid: number;
  key: Buffer;
}

/** PIT ids remembered (encoded per context, verified per id string), each way; cleared when full. */
const PIT_MEMO_MAX = 10_000;

export class IdCodec {
  private keys: SigningKey[];
  /**
   * A PIT id never changes (no position in it): its encoding per context and its verification per
   * id string are remembered, so a PIT search costs no HMAC. Only ids that verified are kept;
   * both memos are dropped when the keys change.
   */
  private readonly pitIds = new Map<string, string>();
  private readonly pitContexts = new Map<string, string>();

  /**
   * @param keys the cluster's keys, oldest first (the last one signs); a bare Buffer is key id 0
   * @param legacyKey the node key that signed ids before the cluster key existed
   */
  constructor(keys: Buffer | SigningKey[], private readonly legacyKey?: Buffer) {
    this.keys = Buffer.isBuffer(keys) ? [{ kid: 0, key: keys }] : keys;
  }

  /** Takes a rotated key set (the cluster watch calls this). */
  setKeys(keys: SigningKey[]): void {
    if (!keys.length) return;
    this.keys = keys;
    this.pitIds.clear();
    this.pitContexts.clear();
  }

  private mac(key: Buffer, body: Buffer): Buffer {
    return hmacSha256(key, body).subarray(0, MAC_LEN);
  }

  private encode(kind: number, contextId: string, payload: string): string {
    const k = this.keys[this.keys.length - 1];
    const body = Buffer.concat([Buffer.from([kind, k.kid]), Buffer.from(contextId.replace(/-/g, ''), 'hex'), Buffer.from(payload)]);
    const s = Buffer.concat([body, this.mac(k.key, body)]).toString('base64url');
    return s + '='.repeat((4 - (s.length % 4)) % 4);
  }

  private decode(kind: 'scroll' | 'pit', id: string): { contextId: string; payload: string } | undefined {
    if (typeof id !== 'string' || id.length < 8 || id.length > 65536 || !/^[A-Za-z0-9_-]+=*$/.test(id)) return undefined;
    const buf = Buffer.from(id.replace(/=+$/, ''), 'base64url');
    let head: number;
    let key: Buffer | undefined;
    if (buf[0] === KIND[kind]) {
      head = 2;
      key = this.keys.find((k) => k.kid === buf[1])?.key;
    } else if (buf[0] === LEGACY_KIND[kind]) {
      head = 1;
      key = this.legacyKey;
    } else return undefined;
    if (!key || buf.length < head + 16 + MAC_LEN) return undefined;
    const body = buf.subarray(0, buf.length - MAC_LEN);
    const mac = buf.subarray(buf.length - MAC_LEN);
    if (!timingSafeEqual(mac, this.mac(key, body))) return undefined;
    const hex = body.subarray(head, head + 16).toString('hex');
    const contextId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { contextId, payload: body.subarray(head + 16).toString() };
  }

  scrollId(contextId: string, pos: ScrollPosition): string {
    return this.encode(KIND.scroll, contextId, stringify(pos));
  }
  /** Decodes a scroll id or throws ES's 400 `Cannot parse scroll id`. */
  parseScrollId(id: string): { contextId: string; pos: ScrollPosition } {
    const d = this.decode('scroll', id);
    if (!d) throw illegalArgument('Cannot parse scroll id');
    return { contextId: d.contextId, pos: parseJson<ScrollPosition>(d.payload) };
  }
  pitId(contextId: string): string {
    let id = this.pitIds.get(contextId);
    if (id === undefined) {
      id = this.encode(KIND.pit, contextId, '');
      remember(this.pitIds, contextId, id);
    }
    return id;
  }
  /** Decodes a PIT id or throws ES's 400 `invalid id: [x]`. */
  parsePitId(id: string): string {
    const known = this.pitContexts.get(id);
    if (known !== undefined) return known;
    const d = this.decode('pit', id);
    if (!d) throw illegalArgument(`invalid id: [${id}]`);
    remember(this.pitContexts, id, d.contextId);
    return d.contextId;
  }
}

function remember(m: Map<string, string>, k: string, v: string): void {
  if (m.size >= PIT_MEMO_MAX) m.clear();
  m.set(k, v);
}

/** SHA-256's block size: HMAC pads its key to it. */
const BLOCK = 64;
/** Per key: the key XOR ipad and XOR opad blocks (RFC 2104), computed once. */
const pads = new WeakMap<Buffer, { inner: Buffer; outer: Buffer }>();
let scratch = Buffer.alloc(4096);

/**
 * HMAC-SHA256 (RFC 2104) as two one-shot hashes over the key's precomputed pads: the same bytes as
 * `createHmac('sha256', key)`, without its per-call key setup, which costs more than the hashing
 * of an id (every scroll page parses one id and signs the next).
 */
export function hmacSha256(key: Buffer, body: Buffer): Buffer {
  let p = pads.get(key);
  if (!p) {
    const k = key.length > BLOCK ? createHmacKey(key) : key;
    const inner = Buffer.alloc(BLOCK, 0x36);
    const outer = Buffer.alloc(BLOCK, 0x5c);
    for (let i = 0; i < k.length; i++) {
      inner[i] ^= k[i];
      outer[i] ^= k[i];
    }
    pads.set(key, (p = { inner, outer }));
  }
  const n = BLOCK + Math.max(body.length, 32);
  if (scratch.length < n) scratch = Buffer.alloc(2 * n);
  p.inner.copy(scratch, 0);
  body.copy(scratch, BLOCK);
  const innerHash = hash('sha256', scratch.subarray(0, BLOCK + body.length), 'buffer') as unknown as Buffer;
  p.outer.copy(scratch, 0);
  innerHash.copy(scratch, BLOCK);
  return hash('sha256', scratch.subarray(0, BLOCK + 32), 'buffer') as unknown as Buffer;
}

/** A key longer than a block is hashed first (RFC 2104). */
const createHmacKey = (key: Buffer): Buffer => hash('sha256', key, 'buffer') as unknown as Buffer;
