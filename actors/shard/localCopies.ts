/**
 * The shard copies a node holds, found by the node's NATS connection: a search coordinator on the
 * same node asks its own started copy in process (no NATS round trip for a page of sources), and
 * the queue group otherwise. Keyed by connection, so nodes sharing a process (tests) each see only
 * their own copies.
 */

/** What a copy answers in process: the same reply bytes it would send over NATS. */
export interface LocalCopy {
  /**
   * The reply to a read op, or undefined when this copy cannot answer now (not started; `get`
   * only from the primary, which is real-time).
   */
  answerLocally(op: LocalOp, body: Uint8Array): Promise<Uint8Array> | undefined;
}

/** Ops a node's own copy answers in process: searches, counts, and real-time gets on the primary. */
export type LocalOp = 'query' | 'fetch' | 'count' | 'get';

const byConnection = new WeakMap<object, Map<string, LocalCopy>>();
const key = (indexUuid: string, n: number) => `${indexUuid}/${n}`;

export function registerLocalCopy(nc: object, indexUuid: string, n: number, copy: LocalCopy): void {
  let m = byConnection.get(nc);
  if (!m) byConnection.set(nc, (m = new Map()));
  m.set(key(indexUuid, n), copy);
}

export function unregisterLocalCopy(nc: object, indexUuid: string, n: number, copy: LocalCopy): void {
  const m = byConnection.get(nc);
  if (m?.get(key(indexUuid, n)) === copy) m.delete(key(indexUuid, n));
}

/** This node's copy of shard `[indexUuid][n]`, if it holds one. */
export function localCopy(nc: object, indexUuid: string, n: number): LocalCopy | undefined {
  return byConnection.get(nc)?.get(key(indexUuid, n));
}
