/**
 * A seeded sample of the breakers run (scripts/breakers.ts runs 300,000 docs on a 512 MB heap):
 * a node in a child process with a 160 MB heap, a `terms` of size 2,000,000 over a keyword with one
 * value per doc and 16 concurrent 2,000-hit pages, twice. Every answer is a 200 or an ES-shaped
 * 4xx, the large `terms` is ES's too_many_buckets_exception, and the node stays up.
 */
import { resolve } from 'node:path';
import { rmSync } from 'node:fs';
import { startChildNode, stopChildNode, type ChildNode } from '../../../scripts/cli/childNode';
import { runBreakers } from '../../../scripts/breakersRun';

jest.setTimeout(180_000);

let child: ChildNode;

beforeAll(async () => {
  child = await startChildNode({ script: resolve(__dirname, '../../../scripts/breakers.ts'), prefix: 'breakers-ci-', env: { NODE_OPTIONS: '--max-old-space-size=160', LOG_LEVEL: 'warn' } });
});
afterAll(async () => {
  await stopChildNode(child);
  rmSync(child.dataDir, { recursive: true, force: true });
});

it('answers a 2,000,000-bucket terms and 16 concurrent pages with 200 or ES-shaped errors, and stays up', async () => {
  // fewer docs than the script, so the bucket limit comes down to meet them
  const put = await fetch(`${child.url}/_cluster/settings`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ persistent: { 'search.max_buckets': 5_000 } }) });
  expect(put.status).toBe(200);
  const report = await runBreakers({ url: child.url, seed: 19, docs: 12_000, docBytes: 400, pages: 16, pageSize: 2_000, buckets: 2_000_000, rounds: 2 });
  expect(report.loaded).toBe(12_000);
  expect(report.bad).toEqual([]);
  expect(report.answers).toHaveLength(2 * 18);
  expect(report.summary['terms-size']).toEqual({ '400 search_phase_execution_exception': 2 });
  for (const a of report.answers.filter((x) => x.what === 'page' && x.status === 200)) expect(a.hits).toBe(2_000);
  expect(child.exited()).toBe(false);
  const root = await fetch(`${child.url}/`);
  expect(root.status).toBe(200);
  const stats = (await (await fetch(`${child.url}/_nodes/_local/stats/breaker`)).json()) as { nodes: Record<string, { breakers: Record<string, { estimated_size_in_bytes: number }> }> };
  const b = Object.values(stats.nodes)[0].breakers;
  expect([b.request.estimated_size_in_bytes, b.inflight_requests.estimated_size_in_bytes]).toEqual([0, expect.any(Number)]); // every search gave its reservations back
});
