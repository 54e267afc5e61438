import type { NatsConnection } from '@nats-io/transport-node';
import { DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';

/**
 * Deletes every message of `filter` from `stream` (a deleted index's shard subjects in the document
 * log), so that the room they took in the store is free again, as deleting an index frees its disk in
 * ES. Messages are deleted one by one: nats-server 2.9's filtered purge frees them from the stream
 * but not from the account's storage total, which is what its limits look at. The stream's first
 * message stays (the start-up check that no snapshot gap exists reads the first sequence).
 * Returns how many were deleted.
 */
export async function deleteSubjectMessages(nc: NatsConnection, stream: string, filter: string): Promise<number> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(stream);
  if (!info.state.messages) return 0;
  const last = info.state.last_seq;
  const consumer = await jetstream(nc).consumers.get(stream, { filter_subjects: filter, deliver_policy: DeliverPolicy.All, headers_only: true });
  if ((await consumer.info(true)).num_pending === 0) return 0;
  const seqs: number[] = [];
  const messages = await consumer.consume({ max_messages: 1024 });
  try {
    for await (const m of messages) {
      if (m.seq > last) break;
      if (m.seq !== info.state.first_seq) seqs.push(m.seq);
      if (m.info.pending === 0) break;
    }
  } finally {
    messages.stop();
  }
  let deleted = 0;
  for (const seq of seqs) {
    try {
      if (await jsm.streams.deleteMessage(stream, seq, false)) deleted++;
    } catch {
      // already gone
    }
  }
  return deleted;
}
