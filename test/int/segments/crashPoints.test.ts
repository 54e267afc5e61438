/**
 * Issue 19 item 4: `kill -9` during a flush, a merge and a trim loses no acknowledged document. A
 * node runs as a real process (scripts/start.ts) on a nats-server that outlives it; an
 * `ES_CRASH_POINT` (actors/wire/crashPoint.ts) stops it at the exact step, the test kills it there
 * (and first checks the window was hit: a `.seg.tmp` on disk, a `.seg` no commit names, a trim
 * point recorded with the log not yet purged, the log purged), then starts it again without the
 * point: every acknowledged doc is back with its last source, no other, none twice; after the
 * next commit the copy directory holds only what that commit names; the copy opens (`_cat/segments`).
 *
 * Each case writes two batches (index, update, delete; the second updates and deletes docs of the
 * first segment, so deletion files are involved) and crashes at the second flush or trim, or at
 * the force merge of the two segments.
 */
import { jetstreamManager } from '@nats-io/jetstream';
import { startNats, type TestNats } from '../../support/natsServer';
import { startProcessNode, type ProcessNode } from '../../support/processNode';
import { bulk, copyDir, differences, filesEnding, garbage, http, type Model } from '../../support/crashChecks';
import { DATA_STREAM, subjects } from '../../../streams';
import { readCommit } from '../../../actors/shard/engine/store/commitPoint';

jest.setTimeout(240_000);

let nats: TestNats;
let node: ProcessNode;

beforeAll(async () => {
  nats = await startNats();
  node = await startProcessNode(nats);
  await node.stop();
}, 120_000);
afterAll(async () => {
  await node?.remove();
  await nats?.stop();
});

const doc = (i: number, v: number) => ({ n: i, v, t: `doc ${i} version ${v}`, k: `k${i % 7}` });

/** Messages of the shard's document log still in the stream. */
async function logMessages(uuid: string): Promise<number> {
  const nc = await nats.connect();
  try {
    const info = await (await jetstreamManager(nc)).streams.info(DATA_STREAM, { subjects_filter: subjects.dataShard(uuid, 0) });
    return Object.values(info.state.subjects ?? {}).reduce((n, v) => n + v, 0);
  } finally {
    await nc.close();
  }
}

interface Case {
  point: string;
  /** What reaches the point: a `_flush` (flush and trim points) or a `_forcemerge`. */
  trigger: 'flush' | 'forcemerge';
  /** The window was hit: checked on the killed node's directory and log, before the restart. */
  hit: (dir: string, uuid: string) => Promise<void> | void;
}

const CASES: Case[] = [
  { point: 'flush.tmp:2', trigger: 'flush', hit: (dir) => expect(filesEnding(dir, '.seg.tmp')).toHaveLength(1) },
  { point: 'flush.published:2', trigger: 'flush', hit: (dir) => expect(garbage(dir).garbage.filter((f) => f.endsWith('.seg'))).toHaveLength(1) },
  { point: 'merge.tmp', trigger: 'forcemerge', hit: (dir) => expect(filesEnding(dir, '.seg.tmp')).toHaveLength(1) },
  { point: 'merge.published', trigger: 'forcemerge', hit: (dir) => expect(garbage(dir).garbage.filter((f) => f.endsWith('.seg'))).toHaveLength(1) },
  { point: 'trim.before:2', trigger: 'flush', hit: async (_d, uuid) => expect(await logMessages(uuid)).toBeGreaterThan(0) },
  { point: 'trim.recorded:2', trigger: 'flush', hit: async (_d, uuid) => expect(await logMessages(uuid)).toBeGreaterThan(0) },
  { point: 'trim.purged:2', trigger: 'flush', hit: async (_d, uuid) => expect(await logMessages(uuid)).toBe(0) },
];

describe('kill -9 at a crash point of the segment store', () => {
  it.each(CASES)('$point: every acknowledged doc back, no other; no garbage after the next commit', async (c) => {
    const index = `crash-${c.point.replace(/[.:]/g, '-')}`;
    const name = c.point.split(':')[0];
    const model: Model = new Map();
    await node.start({ ES_CRASH_POINT: c.point });
    await http(node.url, 'PUT', `/${index}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
    await bulk(node.url, index, model, Array.from({ length: 300 }, (_, i) => [`d${i}`, doc(i, 1)]));
    await bulk(node.url, index, model, [...Array.from({ length: 30 }, (_, i) => [`d${i}`, doc(i, 2)] as [string, Record<string, unknown>]), ...Array.from({ length: 20 }, (_, i) => [`d${100 + i}`, null] as [string, null])]);
    await http(node.url, 'POST', `/${index}/_flush`);
    const dir = await copyDir(node.url, node.dataDir, index);
    const uuid = dir.split('/').slice(-2)[0];
    // the second batch updates and deletes docs of the first segment, and adds new ones
    await bulk(node.url, index, model, [
      ...Array.from({ length: 200 }, (_, i) => [`d${300 + i}`, doc(300 + i, 1)] as [string, Record<string, unknown>]),
      ...Array.from({ length: 25 }, (_, i) => [`d${200 + i}`, doc(200 + i, 3)] as [string, Record<string, unknown>]),
      ...Array.from({ length: 15 }, (_, i) => [`d${250 + i}`, null] as [string, null]),
    ]);
    const trigger = http(node.url, 'POST', c.trigger === 'flush' ? `/${index}/_flush` : `/${index}/_forcemerge?max_num_segments=1`).catch(() => undefined);
    await node.waitFor(`crash point ${name} reached`);
    await node.kill();
    await trigger;
    await c.hit(dir, uuid);
    expect(readCommit(dir)).toBeDefined();

    await node.start();
    expect(await differences(node.url, index, model)).toEqual([]);
    // the next commit leaves exactly what it names
    await http(node.url, 'POST', `/${index}/_flush`);
    const g = garbage(dir);
    expect(g.garbage).toEqual([]);
    expect(g.files.some((f) => f.endsWith('.seg'))).toBe(true);
    const segs = await http<Array<{ 'docs.count': string }>>(node.url, 'GET', `/_cat/segments/${index}?format=json`);
    expect(segs.reduce((n, s) => n + Number(s['docs.count']), 0)).toBe(model.size);
    expect((await http(node.url, 'GET', `/_cluster/health/${index}`)).status).toBe('green');
    await node.stop();
  });
});
