/**
 * Issue 2, foundation: bulk ingest through the HTTP edge (next to publishing the same NDJSON
 * batches straight into JetStream), heap per document after the load, and search latency next to
 * the raw NATS request/reply round trip on the same nats-server, all in the same run.
 */
import { connect } from '@nats-io/transport-node';
import { publishBatches, timeRequests } from './load';
import { median, percentile, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'foundation';

export async function run(o: BenchOptions): Promise<Row[]> {
  const c = await o.corpus.get();
  const rows: Row[] = [];
  const ingest = (c.ingest.docs / c.ingest.ms) * 1000;

  // The log's own speed for the same batches, right after the load (a sample of the corpus size).
  o.note('foundation: the same NDJSON batches straight into JetStream ...');
  const sample = Math.min(c.docs, o.quick ? 100_000 : 250_000);
  const raw = await publishBatches(c.natsUrl, { stream: 'BENCH_RAW_BULK', docs: sample, batch: c.ingest.batch, window: c.ingest.conc });
  const rawRate = (raw.docs / raw.ms) * 1000;
  rows.push(
    row(S, `bulk ingest through HTTP (${c.docs.toLocaleString('en-US')} docs, batches of ${c.ingest.batch}, ${c.ingest.conc} in flight)`, ingest, 'docs/s', { min: 50_000 }),
    row(S, 'bulk ingest MB/s of NDJSON', c.ingest.bytes / c.ingest.ms / 1000, 'MB/s'),
    row(S, 'same batches published straight into JetStream', rawRate, 'docs/s'),
    row(S, 'ingest / raw JetStream publish', ingest / rawRate, 'ratio', { min: 0.2 }),
    row(S, 'heap per document after the load (gc)', c.heapPerDoc, 'B/doc'),
    row(S, 'heap per document / NDJSON bytes per document', c.heapPerDoc / (c.ingest.bytes / c.ingest.docs), 'ratio'),
  );

  // Latency, one request in flight from a child process, interleaved with NATS request/reply
  // to a responder in this process (where the shard actors also answer).
  const nc = await connect({ servers: c.natsUrl });
  try {
    const reply = new Uint8Array(100);
    nc.subscribe('bench.echo', { callback: (_e, m) => void m.respond(reply) });
    await nc.flush();
    const q = (body: unknown) => ({ method: 'POST', path: `/${c.index}/_search`, body: JSON.stringify(body) });
    const rounds = o.quick ? 100 : 400;
    o.note(`foundation: search latency, ${rounds} interleaved rounds ...`);
    const { ms } = await timeRequests(c.port, {
      natsUrl: c.natsUrl,
      rounds,
      warmup: 10,
      specs: [
        q({ query: { match: { title: 'alpha bravo' } }, size: 10 }),
        q({ query: { match_all: {} }, sort: [{ n: 'asc' }], size: 10 }),
        { nats: 'bench.echo', bytes: 100 },
      ],
    });
    const [match, sorted, natsRtt] = ms;
    const p = (xs: number[], k: number) => (k === 50 ? median(xs) : percentile(xs, k));
    for (const [name, xs] of [['match top-10', match], ['match_all sorted by n (long), top-10', sorted], ['NATS request/reply 100 B (same server)', natsRtt]] as const) {
      rows.push(row(S, `${name} p50`, p(xs, 50), 'ms'), row(S, `${name} p99`, p(xs, 99), 'ms'));
    }
    rows.push(
      row(S, 'match p50 / NATS RTT p50', p(match, 50) / p(natsRtt, 50), 'ratio'),
      row(S, 'match p99 / NATS RTT p99', p(match, 99) / p(natsRtt, 99), 'ratio'),
      row(S, 'match_all sorted p50 / NATS RTT p50', p(sorted, 50) / p(natsRtt, 50), 'ratio'),
      row(S, 'match_all sorted p99 / NATS RTT p99', p(sorted, 99) / p(natsRtt, 99), 'ratio'),
    );
  } finally {
    await nc.close();
  }
  return rows;
}
