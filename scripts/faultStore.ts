/**
 * The store-full fault of issue 21 for `npm run faults -- --fault store` (scripts/faults.ts): a
 * nats-server with a small `max_file_store` and a node in a child process on it, then `cycles` times
 * (odd ones with the disk watermarks off, so the store's own limit refuses, cutting a batch anywhere;
 * even ones with them on, so the flood-stage block does): bulks into an index until the store refuses (every item 201 or ES's 429, never a 500), checks that
 * the visible documents are exactly the acknowledged ones (no failed item visible), that a PIT opens,
 * a scroll clears and an API key is invalidated while the log is full, deletes the index and waits
 * for writes to be taken again, without a restart. Its bounded CI version is
 * test/int/reliability/storeFull.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildNode, stopChildNode } from './cli/childNode';
import { send } from './faultProbes';

export interface StoreOptions {
  script: string;
  storeMb: number;
  cycles: number;
  auth: Record<string, string>;
}

/** A nats-server without users (the node warns about it) whose JetStream store holds `mb` MB. */
async function smallStore(mb: number): Promise<{ dir: string; proc: ChildProcess; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'faults-store-'));
  const conf = join(dir, 'nats.conf');
  writeFileSync(conf, `listen: "127.0.0.1:-1"\njetstream { store_dir: "${join(dir, 'js')}", max_file_store: ${mb * 1024 * 1024} }\nports_file_dir: "${dir}"\nlog_file: "${join(dir, 'nats.log')}"\n`);
  const proc = spawn('nats-server', ['-c', conf], { stdio: 'ignore' });
  const ports = join(dir, `nats-server_${proc.pid}.ports`);
  for (let i = 0; i < 200; i++) {
    if (existsSync(ports)) {
      try {
        return { dir, proc, url: (JSON.parse(readFileSync(ports, 'utf8')) as { nats: string[] }).nats[0] };
      } catch {
        /* being written */
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill();
  throw new Error('nats-server did not start');
}

/** Runs the cycles; returns the misses (empty: every check held). */
export async function storeFull(o: StoreOptions): Promise<string[]> {
  const nats = await smallStore(o.storeMb);
  const child = await startChildNode({ script: o.script, prefix: 'faults-node-', env: { FAULTS_NATS_URL: nats.url, FAULTS_STORE: `${o.storeMb}mb` } });
  const misses: string[] = [];
  const call = (method: string, path: string, body?: unknown) => send(child.url, method, path, body, o.auth, 60_000);
  const filler = 'x'.repeat(2000);
  try {
    for (let cycle = 1; cycle <= o.cycles; cycle++) {
      const index = `fill${cycle}`;
      // odd cycles run into the store's own refusal (a batch may be cut inside), even ones into the flood-stage block
      const watermarks = cycle % 2 === 0;
      await call('PUT', '/_cluster/settings', { persistent: { 'cluster.routing.allocation.disk.threshold_enabled': watermarks } });
      if ((await call('PUT', `/${index}`, { settings: { number_of_shards: 2 } })).status !== 200) misses.push(`cycle ${cycle}: index not created`);
      const acked = new Set<string>();
      const failed: string[] = [];
      const statuses = new Map<number, number>();
      const started = Date.now();
      for (let round = 0; failed.length < 1_500 && round < 2_000; round++) {
        const lines = Array.from({ length: 500 }, (_, i) => `{"index":{"_id":"r${round}-${i}"}}\n{"n":${i},"pad":"${filler}"}\n`).join('');
        const res = await call('POST', `/${index}/_bulk`, lines);
        if (res.status !== 200) {
          misses.push(`cycle ${cycle}: bulk answered ${res.status ?? res.err} ${res.text.slice(0, 200)}`);
          break;
        }
        for (const item of res.json.items as Array<{ index: { _id: string; status: number } }>) {
          statuses.set(item.index.status, (statuses.get(item.index.status) ?? 0) + 1);
          if (item.index.status === 201) acked.add(item.index._id);
          else failed.push(item.index._id);
        }
      }
      const odd = [...statuses.keys()].filter((s) => s !== 201 && s !== 429);
      if (odd.length) misses.push(`cycle ${cycle}: item statuses ${odd.join(', ')} (only 201 and 429 are right)`);
      if (!failed.length) misses.push(`cycle ${cycle}: the store never refused a write`);
      await call('POST', `/${index}/_refresh`);
      const count = (await call('GET', `/${index}/_count`)).json?.count;
      const ghosts = (await call('POST', `/${index}/_search`, { size: 0, track_total_hits: true, query: { ids: { values: failed.slice(0, 10_000) } } })).json?.hits?.total?.value;
      if (count !== acked.size || ghosts !== 0) misses.push(`cycle ${cycle}: ${count} visible, ${acked.size} acknowledged, ${ghosts} of the failed items visible`);
      const pit = await call('POST', `/${index}/_pit?keep_alive=1m`);
      const scroll = await call('POST', `/${index}/_search?scroll=1m`, { size: 1 });
      const cleared = await call('DELETE', '/_search/scroll', { scroll_id: scroll.json?._scroll_id });
      const closed = await call('DELETE', '/_pit', { id: pit.json?.id });
      const key = await call('POST', '/_security/api_key', { name: `while-full-${cycle}` });
      const inv = await call('DELETE', '/_security/api_key', { ids: [key.json?.id] });
      const life = [pit.status, scroll.status, cleared.json?.succeeded, closed.json?.succeeded, key.status, inv.json?.invalidated_api_keys?.length];
      if (JSON.stringify(life) !== JSON.stringify([200, 200, true, true, 200, 1])) misses.push(`cycle ${cycle}: lifecycle while full: ${JSON.stringify(life)}`);
      const deleted = await call('DELETE', `/${index}`);
      let back = NaN;
      const freed = Date.now();
      for (let i = 0; i < 300; i++) {
        if ((await call('PUT', `/after/_doc/${cycle}`, { a: cycle })).status === 201) {
          back = Date.now() - freed;
          break;
        }
        await new Promise((r) => setTimeout(r, 100));
      }
      if (deleted.status !== 200 || !(back >= 0)) misses.push(`cycle ${cycle}: delete ${deleted.status}; writes ${back >= 0 ? 'back' : 'not back within 30 s'}`);
      console.log(`cycle ${cycle} (${watermarks ? 'flood-stage watermark' : "the store's own limit"}): ${acked.size} acknowledged = ${count} visible, ${failed.length} refused (${[...statuses].map(([s, n]) => `${n} × ${s}`).join(', ')}), 0 of them visible: ${ghosts === 0}; full in ${((Date.now() - started) / 1000).toFixed(1)} s; PIT, scroll clear, key invalidation while full: ${life.join('/')}; writes back ${back} ms after the index was deleted`);
    }
    if (child.exited()) misses.push('the node process died');
  } finally {
    await stopChildNode(child);
    nats.proc.kill();
    if (!misses.length) {
      rmSync(child.dataDir, { recursive: true, force: true });
      rmSync(nats.dir, { recursive: true, force: true });
    } else console.log(`node log kept: ${child.logFile}`);
  }
  return misses;
}
