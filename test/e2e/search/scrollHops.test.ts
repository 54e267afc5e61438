/**
 * Which of our source files one `scroll_id` continuation runs in (issue 23: at most 8). Measured,
 * not read: V8's precise coverage counts the functions called between two snapshots, and only
 * the files every one of five continuations ran in count. The route and
 * the search service are the request's own path (8 files: one route, seven of actors/search/, no
 * bouncing back into another route); the HTTP edge, the context service, the shard side (the
 * node's own copy, in process), the ground floor and the logging of the extension fact are printed
 * beside it.
 */
import { Session } from 'node:inspector';
import { relative, sep } from 'node:path';
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from './helpers';

const ROOT = relative('/', `${__dirname}/../../..`);
let t: TestNode;
const session = new Session();
const post = <T>(method: string, params?: object) =>
  new Promise<T>((resolve, reject) => session.post(method, params ?? {}, (e, r) => (e ? reject(e) : resolve(r as T))));

type Coverage = { result: { url: string; functions: { ranges: { count: number }[] }[] }[] };

/** Our files (repo paths) whose functions ran since the last call. */
async function ranSinceLast(): Promise<string[]> {
  const { result } = await post<Coverage>('Profiler.takePreciseCoverage');
  const files = new Set<string>();
  for (const s of result) {
    const path = s.url.replace(/^file:\/\//, '').replace(/^\//, '');
    if (!path.startsWith(ROOT + sep) || path.includes('node_modules')) continue;
    if (s.functions.some((f) => f.ranges[0].count > 0)) files.add(path.slice(ROOT.length + 1));
  }
  return [...files].sort();
}

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'hops', settings: { number_of_shards: 2 } });
  await bulkIndex(t, 'hops', Array.from({ length: 100 }, (_, i) => ({ n: i })), (d) => String(d.n));
  session.connect();
  await post('Profiler.enable');
  await post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });
});

afterAll(async () => {
  await post('Profiler.stopPreciseCoverage').catch(() => undefined);
  session.disconnect();
  await t?.stop();
});

it('runs a scroll_id continuation in one route and at most 7 files of the search service', async () => {
  const first = await raw(t, 'POST', '/hops/_search?scroll=1m', { size: 5, sort: ['_doc'] });
  expect(first.status).toBe(200);
  let id: string = first.json._scroll_id;
  // warm: the first continuations load and compile what later ones only call
  for (let i = 0; i < 2; i++) id = (await raw(t, 'POST', '/_search/scroll', { scroll_id: id, scroll: '1m' })).json._scroll_id;
  // Five continuations, each between two snapshots; the files every one of them ran in are the
  // request's (a node's timers, heartbeats and log followers run now and then, never in all five).
  let every: string[] | undefined;
  for (let i = 0; i < 5; i++) {
    await ranSinceLast();
    const page = await raw(t, 'POST', '/_search/scroll', { scroll_id: id, scroll: '1m' });
    const ran = (await ranSinceLast()).filter((f) => !f.startsWith('test/'));
    expect(page.status).toBe(200);
    expect(page.json.hits.hits).toHaveLength(5);
    id = page.json._scroll_id;
    every = every ? every.filter((f) => ran.includes(f)) : ran;
  }
  const files = every!;
  const of = (re: RegExp) => files.filter((f) => re.test(f));
  const path = of(/^actors\/(edge\/routes|search)\//);
  const groups = {
    'route and search service': path,
    'HTTP edge': of(/^actors\/edge\/(?!routes\/)/),
    'contexts (use, owner)': of(/^actors\/contexts\/(service|registry)\.ts$/),
    'shard side (own copy, in process)': of(/^actors\/shard\//),
    'ground floor': of(/^actors\/wire\//),
    'the extension fact (machine, log, its echo)': files.filter(
      (f) => !/^actors\/(edge|search|shard|wire)\//.test(f) && !/^actors\/contexts\/(service|registry)\.ts$/.test(f),
    ),
  };
  console.log(`scroll continuation, ${files.length} files of ours:\n${Object.entries(groups).map(([k, v]) => `${k} (${v.length}): ${v.join(', ')}`).join('\n')}`);
  expect(path.filter((f) => f.startsWith('actors/edge/routes/'))).toEqual(['actors/edge/routes/scroll.ts']);
  expect(path.length).toBeLessThanOrEqual(8); // today: scroll.ts, scrollService, ids, keepAlive, contextUse, coordinator, hitList, shardClient
});
