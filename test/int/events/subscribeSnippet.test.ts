/**
 * Issue 10 item 30: the ten-line Node subscriber of streams/README.md ("Subscribe from your own
 * code"), run as written against a real nats-server and the event log.
 */
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { startNats, type TestNats } from '../../support/natsServer';
import { Bus, ensureStreams, makeEnvelope } from '../../../streams';
import { runCli } from '../../support/cli';

const ROOT = resolve(__dirname, '../../..');

function snippet(): string {
  const readme = readFileSync(join(ROOT, 'streams', 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('### Subscribe from your own code'));
  const m = /```js\n([\s\S]*?)```/.exec(section);
  if (!m) throw new Error('no js block in the Subscribe section of streams/README.md');
  return m[1];
}

describe('the subscriber snippet of streams/README.md', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  let dir: string;
  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
    dir = await mkdtemp(join(tmpdir(), 'snippet-'));
    await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  });
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('is at most ten lines of code', () => {
    const code = snippet().split('\n').filter((l) => l.trim() && !l.trim().startsWith('//'));
    expect(code.length).toBeLessThanOrEqual(10);
  });

  it('prints the facts appended after it started, with their opaque ids', async () => {
    await writeFile(join(dir, 'subscribe.mjs'), snippet());
    // The subscriber's connection, as the README says to save it.
    const creds = await runCli('events', ['credentials', '--json'], nats.env('subscriber'));
    expect(creds.code).toBe(0);
    expect(JSON.parse(creds.stdout)).toEqual({ servers: [nats.url], nkey_seed: expect.stringMatching(/^SU[A-Z2-7]+$/), inbox_prefix: '_INBOX_es_sub' });
    await writeFile(join(dir, 'bus.json'), creds.stdout);
    const p = spawn(process.execPath, ['subscribe.mjs', 'bus.json'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout!.on('data', (d) => (out += d));
    p.stderr!.on('data', (d) => (err += d));
    const bus = new Bus(nc);
    try {
      // DeliverPolicy.New: append until the consumer exists and one fact comes through.
      const end = Date.now() + 20_000;
      let n = 0;
      while (!out.includes('opaque-')) {
        if (p.exitCode !== null || Date.now() > end) throw new Error(`no fact printed; stderr: ${err}`);
        await bus.append(makeEnvelope({ type: 'scroll.extended', aggregateId: `ctx-${n}`, seq: 2, data: { keepAliveMs: 60_000 }, correlationId: `opaque-${n++}` }));
        await new Promise((r) => setTimeout(r, 200));
      }
      const line = out.split('\n').find((l) => l.includes('opaque-'))!;
      expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z scroll\.extended ctx-\d+ opaque-\d+ \{"keepAliveMs":60000\}$/);
    } finally {
      p.kill('SIGTERM');
    }
  });
});
