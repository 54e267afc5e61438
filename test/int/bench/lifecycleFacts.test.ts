import { spawn } from 'node:child_process';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { startTestNode, type TestNode } from '../../support/node';
import { checkLifecycleFacts, factCounter } from '../../../scripts/bench/lifecycleFacts';

/** Runs one mode of the bench's child load generator (as scripts/bench/load.ts does). */
function loader<T>(cfg: Record<string, unknown>): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', require.resolve('tsx/esm'), join(__dirname, '../../../scripts/bench/loader.mjs')], { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(Buffer.concat(out).toString()) as T) : reject(new Error(Buffer.concat(err).toString()))));
    child.stdin.end(JSON.stringify(cfg));
  });
}

describe('the events bench: context lifecycles through HTTP', () => {
  let t: TestNode;
  let nc: NatsConnection;
  beforeAll(async () => {
    t = await startTestNode();
    nc = await t.nats.connect();
    await t.es.indices.create({ index: 'life', settings: { number_of_shards: 3, number_of_replicas: 0 } });
    await t.es.bulk({ refresh: true, operations: Array.from({ length: 30 }, (_, i) => [{ index: { _index: 'life', _id: String(i) } }, { n: i }]).flat() });
  });
  afterAll(async () => {
    await nc.close();
    await t.stop();
  });

  it('logs an opened, an extended and a freed fact for every scroll and every PIT', async () => {
    const facts = factCounter(nc, 'es.v1.evt.>');
    await nc.flush();
    await loader({ mode: 'lifecycle', port: Number(new URL(t.url).port), index: 'life', scrolls: 12, pits: 6, conc: 4 });
    const got = await facts.settle();
    expect(() => checkLifecycleFacts(got.byFact, 12, 6)).not.toThrow();
    expect(Object.fromEntries(got.byFact)).toEqual({
      'scroll.opened': 12,
      'scroll.extended': 12,
      'scroll.cleared': 12,
      'pit.opened': 6,
      'pit.extended': 6,
      'pit.closed': 6,
    });
  });

  it('names the facts a run is missing', () => {
    const seen = new Map([['scroll.opened', 2], ['scroll.extended', 2], ['scroll.cleared', 2], ['pit.opened', 1], ['pit.closed', 1]]);
    expect(() => checkLifecycleFacts(seen, 2, 1)).toThrow('pit.extended 0 of 1');
  });
});
