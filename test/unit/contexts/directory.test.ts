/**
 * ContextDirectory's memory of ended contexts: bounded, oldest ended first, open ones always kept,
 * ended ones slim (no pinned searchers or scroll request). Facts are applied directly; the follower
 * is never started, so the connection is never used.
 */
import pino from 'pino';
import type { NatsConnection } from '@nats-io/transport-node';
import { ContextDirectory } from '../../../actors/contexts';
import { makeEnvelope } from '../../../streams';

const pinned = [{ index: 'i', indexUuid: 'u', n: 0, shardIndex: 0, searcher: { maxDoc: 1, seqNo: 0 } }];
const opened = (id: string) =>
  makeEnvelope({ type: 'scroll.opened', aggregateId: id, seq: 1, data: { keepAliveMs: 60_000, indices: ['i'], shards: 1, pinned, request: { body: '{}', params: {} } } });
const cleared = (id: string) => makeEnvelope({ type: 'scroll.cleared', aggregateId: id, seq: 2, data: {} });

describe('ContextDirectory', () => {
  it('keeps the newest 100,000 ended contexts, every open one, and ended ones without their searchers', () => {
    const d = new ContextDirectory({} as NatsConnection, pino({ level: 'silent' }));
    d.apply(opened('keep-open'));
    const n = 100_000 + 500;
    for (let i = 0; i < n; i++) {
      d.apply(opened(`c${i}`));
      d.apply(cleared(`c${i}`));
    }
    expect(d.get('keep-open')?.status).toBe('open');
    expect(d.get('keep-open')?.pinned).toHaveLength(1);
    for (let i = 0; i < 500; i++) expect(d.get(`c${i}`)).toBeUndefined();
    const last = d.get(`c${n - 1}`)!;
    expect(last.status).toBe('cleared');
    expect(last.pinned).toEqual([]);
    expect(last.request).toBeUndefined();
    expect(last.indices).toEqual(['i']);
    expect(d.get('c500')?.status).toBe('cleared');
    expect(d.all()).toHaveLength(100_001);
  });
});
