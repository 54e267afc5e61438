/**
 * The embedded nats-server's JetStream store limit is fixed at the first start and kept in
 * `<dir>/max_file_store`: left to nats-server it is 75% of the disk free at each start, and once the
 * disk had less room the server refused to restore ES_DATA (its max_bytes was set under the old
 * limit), the node made an empty one and the copies' commits were discarded (measured: 500 docs,
 * restarted with 8 GB less free disk, gone). Here the kept value is changed between two starts and
 * the server takes it, not a new figure.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedNats, type EmbeddedNats } from '../../../actors/embeddedNats';

const dir = mkdtempSync(join(tmpdir(), 'nats-store-size-'));
let s: EmbeddedNats | undefined;
afterAll(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const maxStorage = () => [...readFileSync(join(dir, 'nats-server.log'), 'utf8').matchAll(/Max Storage:\s+([\d.]+ [KMGT]?B)/g)].map((m) => m[1]);

it('keeps the store limit of the first start across restarts', async () => {
  s = await startEmbeddedNats(dir);
  const first = Number(readFileSync(join(dir, 'max_file_store'), 'utf8'));
  expect(first).toBeGreaterThan(0);
  expect(readFileSync(join(dir, 'nats-server.conf'), 'utf8')).toContain(`max_file_store: ${first}`);
  await s.stop();
  // as if the disk had changed since: the kept figure wins
  writeFileSync(join(dir, 'max_file_store'), `${123 * 1024 ** 3}\n`);
  s = await startEmbeddedNats(dir);
  await s.stop();
  s = undefined;
  expect(maxStorage().at(-1)).toBe('123.00 GB');
});
