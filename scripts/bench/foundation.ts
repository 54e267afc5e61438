/**
 * Issue 2, foundation: bulk ingest through the HTTP edge (next to publishing the same NDJSON
 * batches straight into JetStream, in interleaved rounds), heap per document after the load, and
 * search latency next to the raw NATS request/reply round trip on the same nats-server, all in the
 * same run.
 */
import { connectBus } from '../../streams/busConnection';
import { call, MAPPINGS } from './corpus';
import { loadBulk, publishBatches, timeRequests } from './load';
import { median, pairedRatio, percentile, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'foundation';

export async function run(o: BenchOptions): Promise<Row[]> {
  const c = await o.corpus.get();
  const rows: Row[] = [];
  const corpusIngest = (c.ingest.docs / c.ingest.ms) * 1000;

  // Ingest next to the log's own speed for the same batches, interleaved: each round loads a fresh
  // scratch index through HTTP, then publishes the same NDJSON batches straight into JetStream, so
  // both sides of each ratio see the same machine (the corpus load above ran at another moment).
  const sample = Math.min(c.docs, o.quick ? 50_000 : 100_000);
  const rounds = o.quick ? 2 : 3;
  const http: number[] = [];
  const raw: number[] = [];
  for (let r = 0; r < rounds; r++) {
    o.note(`foundation: ingest round ${r + 1}/${rounds}: ${sample.toLocaleString('en-US')} docs through HTTP, then the same batches straight into JetStream ...`);
    const scratch = `${c.index}-ingest`;
    await call(c.url, 'PUT', `/${scratch}`, { settings: { number_of_shards: 3, number_of_replicas: 0 }, mappings: MAPPINGS });
    try {
      const h = await loadBulk(c.port, { index: scratch, docs: sample, batch: c.ingest.batch, conc: c.ingest.conc });
      if (h.errorBatches) throw new Error(`${h.errorBatches} bulk batches into ${scratch} had item errors`);
      http.push((h.docs / h.ms) * 1000);
    } finally {
      await call(c.url, 'DELETE', `/${scratch}`);
    }
    const j = await publishBatches(c.natsConn, { stream: `BENCH_RAW_BULK_${r}`, docs: sample, batch: c.ingest.batch, window: c.ingest.conc });
    raw.push((j.docs / j.ms) * 1000);
  }
  rows.push(
    row(S, `bulk ingest through HTTP building the corpus (${c.docs.toLocaleString('en-US')} docs, batches of ${c.ingest.batch}, ${c.ingest.conc} in flight)`, corpusIngest, 'docs/s'),
    row(S, 'bulk ingest MB/s of NDJSON (corpus)', c.ingest.bytes / c.ingest.ms / 1000, 'MB/s'),
    row(S, `bulk ingest through HTTP, ${sample.toLocaleString('en-US')} docs into a new index (median of ${rounds} rounds)`, median(http), 'docs/s', { min: 50_000 }),
    row(S, 'same batches published straight into JetStream (same rounds)', median(raw), 'docs/s'),
    row(S, 'ingest / raw JetStream publish (paired rounds)', pairedRatio(http, raw), 'ratio', { min: 0.2 }),
    row(S, 'heap per document after the load (gc)', c.heapPerDoc, 'B/doc'),
    row(S, 'heap per document / NDJSON bytes per document', c.heapPerDoc / (c.ingest.bytes / c.ingest.docs), 'ratio'),
  );

  // Latency, one request in flight from a child process, interleaved with NATS request/reply
  // to a responder in this process (where the shard actors also answer).
  const nc = await connectBus(c.natsConn);
  try {
    const reply = new Uint8Array(100);
    nc.subscribe('bench.echo', { callback: (_e, m) => void m.respond(reply) });
    await nc.flush();
    const q = (body: unknown) => ({ method: 'POST', path: `/${c.index}/_search`, body: JSON.stringify(body) });
    const rounds = o.quick ? 100 : 400;
    o.note(`foundation: search latency, ${rounds} interleaved rounds ...`);
    const { ms } = await timeRequests(c.port, {
      nats: c.natsConn,
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
