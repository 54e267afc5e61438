/**
 * Issue 19 item 4: `kill -9` during a segment copy (peer recovery through the object store
 * ES_SEGMENTS) loses nothing, on a 3-server NATS cluster with nodes as real processes. A shard's
 * log is trimmed behind its commit (0 replicas), a few more docs stay in the log's tail, then a
 * replica is added on a new node, which must copy segments:
 *
 * - the target is killed once it fetched its first file (`ES_CRASH_POINT=recovery.fetch`): its
 *   directory has files and no commit; restarted, it recovers again;
 * - the source is killed once it put its first file (`recovery.put`); restarted, the target's
 *   recovery completes from it.
 *
 * Then the new copy, alone (the source stopped), answers every acknowledged doc and no other, and
 * after its next commit its directory holds only what that commit names.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startTestCluster, until, type ClusterNode, type TestCluster } from '../../support/cluster';
import { bulk, copyDir, differences, filesEnding, garbage, http, type Model } from '../../support/crashChecks';
import { DATA_STREAM, subjects } from '../../../streams';
import { readCommit } from '../../../actors/shard/engine/store/commitPoint';

jest.setTimeout(300_000);

let c: TestCluster | undefined;
afterEach(async () => {
  await c?.stop();
  c = undefined;
});

const doc = (i: number, v: number) => ({ n: i, v, t: `doc ${i} version ${v}` });

async function logMessages(uuid: string): Promise<number> {
  const nc = await connect({ servers: c!.nats.url.split(',') });
  try {
    const info = await (await jetstreamManager(nc)).streams.info(DATA_STREAM, { subjects_filter: subjects.dataShard(uuid, 0) });
    return Object.values(info.state.subjects ?? {}).reduce((n, v) => n + v, 0);
  } finally {
    await nc.close();
  }
}

const health = (n: ClusterNode) => http(n.url, 'GET', '/_cluster/health/pr');

/** An index on node 0 whose log is trimmed behind its segments, plus a tail of 50 docs in the log only. */
async function trimmedIndex(n: ClusterNode, model: Model): Promise<string> {
  await http(n.url, 'PUT', '/pr', { settings: { number_of_shards: 1, number_of_replicas: 0 } });
  for (let b = 0; b < 3; b++) {
    await bulk(n.url, 'pr', model, Array.from({ length: 200 }, (_, i) => [`d${b * 200 + i}`, doc(b * 200 + i, 1)]));
    await bulk(n.url, 'pr', model, [...Array.from({ length: 10 }, (_, i) => [`d${i * 7}`, doc(i * 7, b + 2)] as [string, Record<string, unknown>]), [`d${b * 200 + 199}`, null]]);
    await http(n.url, 'POST', '/pr/_flush');
  }
  const dir = await copyDir(n.url, n.dataDir, 'pr');
  const uuid = dir.split('/').slice(-2)[0];
  await until(async () => (await logMessages(uuid)) === 0, 30_000, 'shard log trimmed');
  await bulk(n.url, 'pr', model, Array.from({ length: 50 }, (_, i) => [`t${i}`, doc(1000 + i, 1)]));
  return uuid;
}

/**
 * Both copies started (green) within 30 s of the restart at `t0`, no half-fetched file left; then
 * the new copy alone (the source stopped) has every doc, and no garbage after a commit.
 */
async function newCopyWhole(target: ClusterNode, source: ClusterNode, model: Model, t0: number): Promise<void> {
  await until(async () => {
    const h = await health(target).catch(() => undefined);
    return h?.status === 'green' && h.active_shards === 2;
  }, 60_000, 'two started copies');
  expect(Date.now() - t0).toBeLessThan(30_000);
  expect(filesEnding(await copyDir(target.url, target.dataDir, 'pr'), '.tmp')).toEqual([]);
  await source.stop();
  await until(async () => (await health(target)).active_primary_shards === 1, 60_000, 'primary on the new node');
  expect(await differences(target.url, 'pr', model)).toEqual([]);
  await http(target.url, 'POST', '/pr/_flush');
  const dir = await copyDir(target.url, target.dataDir, 'pr');
  expect(garbage(dir).garbage).toEqual([]);
}

describe('kill -9 during a segment copy', () => {
  it('the target, while it fetches: restarted, it copies again and serves every doc', async () => {
    c = await startTestCluster({ nodes: 1, process: true });
    const model: Model = new Map();
    const src = c.nodes[0];
    await trimmedIndex(src, model);
    const target = await c.addNode({ process: true, env: { ES_CRASH_POINT: 'recovery.fetch' } });
    await http(src.url, 'PUT', '/pr/_settings', { index: { number_of_replicas: 1 } });
    await until(() => target.out().includes('crash point recovery.fetch reached'), 60_000, 'the target fetching');
    await target.kill();
    // the window: files fetched, no commit yet
    const dir = await copyDir(src.url, target.dataDir, 'pr');
    expect(filesEnding(dir, '.seg').length).toBeGreaterThan(0);
    expect(readCommit(dir)).toBeUndefined();
    const t0 = Date.now();
    await target.start();
    await newCopyWhole(target, src, model, t0);
  });

  it('the source, while it puts: restarted, the target copies from it and serves every doc', async () => {
    c = await startTestCluster({ nodes: 0, process: true });
    const src = await c.addNode({ process: true, env: { ES_CRASH_POINT: 'recovery.put' } });
    const model: Model = new Map();
    await trimmedIndex(src, model);
    const target = await c.addNode({ process: true });
    await http(src.url, 'PUT', '/pr/_settings', { index: { number_of_replicas: 1 } });
    await until(() => src.out().includes('crash point recovery.put reached'), 60_000, 'the source putting');
    await src.kill();
    const t0 = Date.now();
    await src.start();
    expect(await differences(src.url, 'pr', model)).toEqual([]);
    await newCopyWhole(target, src, model, t0);
  });
});
