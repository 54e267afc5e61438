import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedNats } from '../../actors/embeddedNats';
import { connectBus, type BusConnection } from '../../streams/busConnection';
import type { BusRole, KeyRole } from '../../streams/busPermissions';

/**
 * A real nats-server with JetStream in its own temp dir on a free port (one per suite), secured as
 * a node's embedded one: only the node and subscriber nkey users get in.
 */
export interface TestNats {
  url: string;
  dir: string;
  proc: ChildProcess;
  /** Connects as a node (default), a subscriber, or (servers started with `admin`) with every permission. */
  connect(role?: KeyRole): Promise<NatsConnection>;
  /** How `role` connects (servers, seed, inbox prefix). */
  connection(role?: KeyRole): BusConnection;
  /** Node settings that log a node started with `natsUrl: url` into this server. */
  settings: Record<string, string>;
  /** Environment of a CLI or node process on this server (NATS_URL and the role's seed file). */
  env(role?: BusRole): Record<string, string>;
  /** Kills the server (SIGKILL when `hard`) and removes its directory. */
  stop(hard?: boolean): Promise<void>;
  /** Restarts on the same port and store (for durability tests). */
  restart(): Promise<void>;
}

export async function startNats(opts: { admin?: boolean } = {}): Promise<TestNats> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-'));
  let server = await startEmbeddedNats(dir, opts);
  const url = server.url.replace('nats://', '');
  const port = Number(url.split(':').pop());
  const t: TestNats = {
    url,
    dir,
    proc: server.proc,
    connection: (role = 'node') => ({ ...server.connection(role), servers: [url] }),
    connect: (role = 'node') => connectBus(t.connection(role)),
    settings: { 'nats.nkey_seed_file': server.keys.node.file },
    env: (role = 'node') => ({ NATS_URL: url, ES_SETTING_NATS_NKEY__SEED__FILE: server.keys[role].file, NATS_NKEY: server.keys[role].file }),
    async stop(hard = false) {
      if (hard) server.proc.kill('SIGKILL');
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await server.stop();
      server = await startEmbeddedNats(dir, { ...opts, port });
      t.proc = server.proc;
    },
  };
  return t;
}
