import { createHmac, timingSafeEqual } from 'node:crypto';
import { illegalArgument } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';
import type { SortValue } from '../shard/engine/types';

/**
 * Opaque scroll and PIT ids: URL-safe base64 (padded, like ES's) of
 * `[kind byte][16-byte context uuid][position JSON][16-byte HMAC-SHA256]`. The scroll id carries the
 * position after the page it came with, so re-sending an id after a lost response returns the same
 * next page (retry-safe). The MAC makes forged or truncated ids a 400, never a crash or a lookup.
 */
const KIND = { scroll: 0x53, pit: 0x50 } as const;
const MAC_LEN = 16;

export interface ScrollPosition {
  /** Internal sort values of the last hit returned (absent before the first page). */
  after?: SortValue[];
  /** Pages served so far (diagnostics only). */
  page: number;
}

export class IdCodec {
  constructor(private readonly key: Buffer) {}

  private mac(body: Buffer): Buffer {
    return createHmac('sha256', this.key).update(body).digest().subarray(0, MAC_LEN);
  }

  private encode(kind: number, contextId: string, payload: string): string {
    const body = Buffer.concat([Buffer.from([kind]), Buffer.from(contextId.replace(/-/g, ''), 'hex'), Buffer.from(payload)]);
    const s = Buffer.concat([body, this.mac(body)]).toString('base64url');
    return s + '='.repeat((4 - (s.length % 4)) % 4);
  }

  private decode(kind: number, id: string): { contextId: string; payload: string } | undefined {
    if (typeof id !== 'string' || id.length < 8 || id.length > 65536 || !/^[A-Za-z0-9_-]+=*$/.test(id)) return undefined;
    const buf = Buffer.from(id.replace(/=+$/, ''), 'base64url');
    if (buf.length < 1 + 16 + MAC_LEN || buf[0] !== kind) return undefined;
    const body = buf.subarray(0, buf.length - MAC_LEN);
    const mac = buf.subarray(buf.length - MAC_LEN);
    if (!timingSafeEqual(mac, this.mac(body))) return undefined;
    const hex = body.subarray(1, 17).toString('hex');
    const contextId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
    return { contextId, payload: body.subarray(17).toString() };
  }

  scrollId(contextId: string, pos: ScrollPosition): string {
    return this.encode(KIND.scroll, contextId, stringify(pos));
  }
  /** Decodes a scroll id or throws ES's 400 `Cannot parse scroll id`. */
  parseScrollId(id: string): { contextId: string; pos: ScrollPosition } {
    const d = this.decode(KIND.scroll, id);
    if (!d) throw illegalArgument('Cannot parse scroll id');
    return { contextId: d.contextId, pos: parseJson<ScrollPosition>(d.payload) };
  }
  pitId(contextId: string): string {
    return this.encode(KIND.pit, contextId, '');
  }
  /** Decodes a PIT id or throws ES's 400 `invalid id: [x]`. */
  parsePitId(id: string): string {
    const d = this.decode(KIND.pit, id);
    if (!d) throw illegalArgument(`invalid id: [${id}]`);
    return d.contextId;
  }
}
