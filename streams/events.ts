import type { Envelope } from './envelope';

/** Slice of a sliced scroll or PIT search. */
export interface Slice {
  id: number;
  max: number;
  field?: string;
}

export type ReleaseReason = 'exhausted' | 'index_deleted' | 'index_closed' | 'shutdown' | 'no_scroll_param' | 'keep_alive_too_large';

/** Owner principal of a context or credential (never a secret). */
export interface Owner {
  username: string;
  realm: string;
}
export type ScrollFact =
  | Envelope<'scroll.opened', { indices: string[]; keepAliveMs: number; slice?: Slice; owner?: Owner; shards: number }>
  | Envelope<'scroll.extended', { keepAliveMs: number }>
  | Envelope<'scroll.released', { reason: ReleaseReason }>
  | Envelope<'scroll.expired' | 'scroll.cleared', Record<string, never>>;

export type PitFact =
  | Envelope<'pit.opened', { indices: string[]; keepAliveMs: number; owner?: Owner; shards: number }>
  | Envelope<'pit.extended', { keepAliveMs: number }>
  | Envelope<'pit.released', { reason: ReleaseReason }>
  | Envelope<'pit.expired' | 'pit.closed', Record<string, never>>;

/** `node.joined` data: what a node says about itself once its HTTP edge listens (no secrets). */
export interface NodeJoinedData {
  name: string;
  host: string;
  /** `host:port` of its HTTP edge. */
  http_address: string;
  version: string;
  /** ms since epoch. */
  started_at: number;
}

/** `node.left` data: a clean stop (`stopped`) or silence (`timed_out`); `by` is the node that noticed. */
export interface NodeLeftData {
  reason: 'stopped' | 'timed_out';
  by?: string;
  silent_ms?: number;
}

export type NodeFact = Envelope<'node.joined', NodeJoinedData> | Envelope<'node.left', NodeLeftData>;
