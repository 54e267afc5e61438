import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Client as Client8 } from 'es8';
import { Client as Client9 } from 'es9';
import { startNats, type TestNats } from './natsServer';
import { startSystem, type System } from '../../actors/system';
import { Settings } from '../../actors/config';
import { startConsole } from '../../actors/console';

export const ELASTIC_PASSWORD = 'changeme-test-1';

export interface TestNode {
  nats: TestNats;
  sys: System;
  url: string;
  dataDir: string;
  configDir: string;
  /** Official v8 client, authenticated as `elastic` when security is on. */
  es: Client8;
  /** Official v9 client. */
  es9: Client9;
  /** Stops the node only (keeps NATS and the data dir) and starts it again on the same log. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface TestNodeOptions {
  security?: boolean;
  settings?: Record<string, unknown>;
}

/**
 * A whole node for end-to-end tests: a real nats-server in a temp dir, the system on port 0, and
 * the official clients pointed at it.
 */
export async function startTestNode(opts: TestNodeOptions = {}): Promise<TestNode> {
  const nats = await startNats();
  const dataDir = await mkdtemp(join(tmpdir(), 'esnode-'));
  const configDir = join(dataDir, 'config');
  const settingsOf = () =>
    new Settings({
      'xpack.security.enabled': opts.security ?? false,
      'bootstrap.password': ELASTIC_PASSWORD,
      ...nats.settings,
      ...(opts.settings ?? {}),
    });
  const boot = () =>
    startSystem({
      host: '127.0.0.1',
      port: 0,
      natsUrl: nats.url,
      dataDir,
      configDir,
      settings: settingsOf(),
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
      extensions: [startConsole],
    });
  const auth = opts.security ? { username: 'elastic', password: ELASTIC_PASSWORD } : undefined;
  const clients = (url: string) => ({
    es: new Client8({ node: url, ...(auth ? { auth } : {}) }),
    es9: new Client9({ node: url, ...(auth ? { auth } : {}) }),
  });
  const t = { nats, dataDir, configDir } as TestNode;
  const attach = (sys: System) => {
    t.sys = sys;
    t.url = sys.url;
    Object.assign(t, clients(sys.url));
  };
  attach(await boot());
  t.restart = async () => {
    await t.es.close();
    await t.es9.close();
    await t.sys.stop();
    attach(await boot());
  };
  t.stop = async () => {
    await t.es.close();
    await t.es9.close();
    await t.sys.stop();
    await nats.stop();
    await rm(dataDir, { recursive: true, force: true });
  };
  return t;
}
