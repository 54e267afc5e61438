/**
 * Issue 21 item 2: with the nats-server gone, every request that needs it answers 503 within 2 s
 * (or succeeds from what the node holds), scroll and PIT included; every request kind is measured.
 * Then the server comes back on the same port and store and every kind works again, no restart.
 * The probes are those of `npm run faults` (scripts/faultProbes.ts), which repeats the outage.
 */
import { once } from 'node:events';
import { rm } from 'node:fs/promises';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedNats, type EmbeddedNats } from '../../../actors/embeddedNats';
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { faultFixtures, faultProbes, probeRound, send, type FaultFixtures } from '../../../scripts/faultProbes';
import { poll } from '../../support/poll';

jest.setTimeout(120_000);

let t: TestNode;
let revived: EmbeddedNats | undefined;
let fx: FaultFixtures;
const basic = { authorization: `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}` };
const req = (method: string, path: string, body?: unknown) => send(t.url, method, path, body, basic);

beforeAll(async () => {
  t = await startTestNode({ security: true });
  fx = await faultFixtures(t.url, basic, ELASTIC_PASSWORD);
});

afterAll(async () => {
  await t.es.close();
  await t.es9.close();
  await t.sys.stop();
  await revived?.stop();
  await rm(t.nats.dir, { recursive: true, force: true });
  await rm(t.dataDir, { recursive: true, force: true });
});

it('answers every request kind within 2 s while NATS is down (503 or a success from what the node holds), then serves them all again', async () => {
  const nc = (t.sys.ctx as { nc: NatsConnection }).nc;
  const disconnected = (async () => {
    for await (const s of nc.status()) if (s.type === 'disconnect') return;
  })();
  t.nats.proc.kill('SIGKILL');
  await once(t.nats.proc, 'exit');
  await disconnected;

  const down = await probeRound(t.url, basic, faultProbes(fx, ELASTIC_PASSWORD), true);
  console.log(`while NATS is down:\n${down.lines.join('\n')}`);
  expect(down.bad).toEqual([]);

  const back = Date.now();
  revived = await startEmbeddedNats(t.nats.dir, { port: Number(t.nats.url.split(':').pop()) });
  await poll(async () => (await req('PUT', '/o/_doc/after?refresh=true', { n: 100 })).status === 201, 20_000, 'writes back');
  const recovered = Date.now() - back;
  // every kind served again, at once (a log follower stuck after the reconnect made some take seconds)
  const again = await probeRound(t.url, basic, faultProbes(fx, ELASTIC_PASSWORD), false);
  const followers = (await req('GET', '/_nodes/_local/stats/log_followers')).json.nodes[t.sys.ctx.node.id].log_followers;
  console.log(`NATS back: first write acknowledged after ${recovered} ms; then\n${again.lines.join('\n')}\n${JSON.stringify(followers)}`);
  expect(again.bad).toEqual([]);
  expect(followers.map((f: { stream: string; stalls: number }) => [f.stream, f.stalls])).toEqual(followers.map((f: { stream: string }) => [f.stream, 0]));
});
