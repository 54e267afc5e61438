/**
 * Issue 18, the secured bus and edge, each figure side by side in one run:
 * - search rate over HTTPS / plain HTTP: one node with two listeners on the same router (the second
 *   with a certificate of a generated CA), a keep-alive client with 16 connections, rounds alternating;
 * - a scroll page whose shard answers over a TLS NATS connection / a plain one: two 2-node deployments,
 *   each on its own nats-server (nkey users both, one with client TLS), a 1-shard index held by one
 *   node and paged through the other, so every page's query and fetch cross NATS.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { startEmbeddedNats, type EmbeddedNats } from '../../actors/embeddedNats';
import { startEdge } from '../../actors/edge/httpEdge';
import { startSystem, type System } from '../../actors/system';
import { makeCa, makeLeaf } from '../../actors/tls/certificates';
import { benchSettings, call } from './corpus';
import { onAbort } from './cleanup';
import { httpRate, loadBulk, portOf, scrollPages } from './load';
import { median, pairedRatio, percentile, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'bus';
const INDEX = 'bus-bench';

async function httpsRates(o: BenchOptions, root: string, rows: Row[]): Promise<void> {
  const nats = await startEmbeddedNats(join(root, 'nats-https'));
  const ca = await makeCa('bench CA');
  const leaf = await makeLeaf(ca, { name: 'bench', sans: ['127.0.0.1', 'localhost'] });
  let sys: System | undefined;
  const off = onAbort(async () => {
    await sys?.stop();
    await nats.stop();
  });
  try {
    sys = await startSystem({
      host: '127.0.0.1', port: 0, natsUrl: nats.url, dataDir: join(root, 'https-data'), configDir: join(root, 'https-config'),
      settings: benchSettings({ 'nats.nkey_seed_file': nats.keys.node.file }), log: pino({ level: 'silent' }),
    });
    const tls = await startEdge({ host: '127.0.0.1', port: 0, router: sys.router, log: pino({ level: 'silent' }), tls: { key: leaf.key, cert: leaf.cert + ca.cert } });
    try {
      await call(sys.url, 'PUT', `/${INDEX}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
      await loadBulk(portOf(sys.url), { index: INDEX, docs: 200, batch: 200, refresh: true });
      const path = `/${INDEX}/_search?size=10`;
      const plain = () => httpRate(portOf(sys!.url), { path, seconds: o.quick ? 1.5 : 2, conc: 16 });
      const secure = () => httpRate(tls.port, { path, seconds: o.quick ? 1.5 : 2, conc: 16, ca: ca.cert });
      await plain();
      await secure(); // warm both (JIT, TLS sessions)
      const http: number[] = [];
      const https: number[] = [];
      const rounds = Math.max(4, o.rounds + (o.rounds % 2));
      for (let r = 0; r < rounds; r++) {
        o.note(`bus: search rate HTTPS vs HTTP, round ${r + 1}/${rounds} ...`);
        for (const which of r % 2 ? ['https', 'http'] : ['http', 'https']) {
          const x = which === 'http' ? await plain() : await secure();
          if (x.bad) throw new Error(`${which}: ${x.bad} of ${x.n} searches failed`);
          (which === 'http' ? http : https).push(x.rate);
        }
      }
      rows.push(
        row(S, 'search rate, plain HTTP (keep-alive, 16 connections)', median(http), 'req/s'),
        row(S, 'search rate, HTTPS (keep-alive, 16 connections; ECDSA P-256 certificate)', median(https), 'req/s'),
        row(S, 'search rate HTTPS / HTTP', pairedRatio(https, http), 'ratio', { min: 0.8 }),
      );
    } finally {
      await tls.close();
    }
  } finally {
    off();
    await sys?.stop();
    await nats.stop();
  }
}

/** Two nodes on one nats-server; the index's one shard on one of them; returns the other's port (pages cross NATS). */
async function deployment(root: string, name: string, nats: EmbeddedNats, docs: number): Promise<{ nodes: System[]; pagePort: number }> {
  const settings = (i: number) => benchSettings({
    'node.name': `${name}-${i}`,
    'nats.nkey_seed_file': nats.keys.node.file,
    ...(nats.url.startsWith('tls:') ? { 'nats.tls.ca': join(root, `${name}-ca.crt`) } : {}),
  });
  const nodes: System[] = [];
  for (let i = 0; i < 2; i++) {
    nodes.push(await startSystem({ host: '127.0.0.1', port: 0, natsUrl: nats.url, dataDir: join(root, `${name}-${i}`), configDir: join(root, `${name}-${i}-config`), settings: settings(i), log: pino({ level: 'silent' }) }));
  }
  const [a] = nodes;
  await call(a.url, 'PUT', `/${INDEX}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
  await loadBulk(portOf(a.url), { index: INDEX, docs, batch: 5000, refresh: true });
  for (let i = 0; ; i++) {
    const shards = await call<Array<{ node: string; state: string }>>(a.url, 'GET', `/_cat/shards/${INDEX}?format=json&h=node,state`);
    const holder = shards.find((s) => s.state === 'STARTED')?.node;
    if (holder) {
      const other = nodes.find((n) => n.ctx.node.name !== holder)!;
      return { nodes, pagePort: portOf(other.url) };
    }
    if (i > 100) throw new Error(`${INDEX} was not allocated on ${name}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function tlsNatsPages(o: BenchOptions, root: string, rows: Row[]): Promise<void> {
  const ca = await makeCa('bench NATS CA');
  const leaf = await makeLeaf(ca, { name: 'nats', sans: ['127.0.0.1', 'localhost'] });
  for (const [f, text] of [['tls-ca.crt', ca.cert], ['nats.crt', leaf.cert], ['nats.key', leaf.key]] as const) await writeFile(join(root, f), text, { mode: 0o600 });
  const servers: EmbeddedNats[] = [];
  const nodes: System[] = [];
  const off = onAbort(async () => {
    for (const n of nodes) await n.stop();
    for (const s of servers) await s.stop();
  });
  try {
    const plainNats = await startEmbeddedNats(join(root, 'nats-plain'));
    servers.push(plainNats);
    const tlsNats = await startEmbeddedNats(join(root, 'nats-tls'), { tls: { cert: join(root, 'nats.crt'), key: join(root, 'nats.key'), ca: join(root, 'tls-ca.crt') } });
    servers.push(tlsNats);
    const docs = o.quick ? 20_000 : 50_000;
    o.note(`bus: two 2-node deployments (plain and TLS NATS), ${docs.toLocaleString('en-US')} docs each ...`);
    const plain = await deployment(root, 'plain', plainNats, docs);
    nodes.push(...plain.nodes);
    const tls = await deployment(root, 'tls', tlsNats, docs);
    nodes.push(...tls.nodes);
    const pages = o.quick ? 30 : 60;
    const p50 = async (port: number) => percentile((await scrollPages(port, { index: INDEX, size: 1000, pages })).ms, 50);
    await p50(plain.pagePort);
    await p50(tls.pagePort); // warm-up
    const a: number[] = [];
    const b: number[] = [];
    const rounds = Math.max(4, o.rounds + (o.rounds % 2));
    for (let r = 0; r < rounds; r++) {
      o.note(`bus: scroll pages over plain vs TLS NATS, round ${r + 1}/${rounds} ...`);
      for (const which of r % 2 ? ['tls', 'plain'] : ['plain', 'tls']) (which === 'plain' ? a : b).push(await p50(which === 'plain' ? plain.pagePort : tls.pagePort));
    }
    rows.push(
      row(S, 'scroll next page p50 (size 1,000; shard on the other node, query and fetch over plain NATS)', median(a), 'ms'),
      row(S, 'scroll next page p50, the same over a TLS NATS connection', median(b), 'ms'),
      row(S, 'scroll page speed over TLS NATS / plain (p50 plain / p50 TLS)', pairedRatio(a, b), 'ratio', { min: 0.85 }),
    );
  } finally {
    off();
    for (const n of nodes) await n.stop();
    for (const s of servers) await s.stop();
  }
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  const root = await mkdtemp(join(tmpdir(), 'bench-bus-'));
  try {
    await httpsRates(o, root, rows);
    await tlsNatsPages(o, root, rows);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  return rows;
}
