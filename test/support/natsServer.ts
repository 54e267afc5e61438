import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startEmbeddedNats } from '../../actors/embeddedNats';

/** A real nats-server with JetStream in its own temp dir on a free port (one per suite). */
export interface TestNats {
  url: string;
  dir: string;
  proc: ChildProcess;
  connect(): Promise<NatsConnection>;
  /** Kills the server (SIGKILL when `hard`) and removes its directory. */
  stop(hard?: boolean): Promise<void>;
  /** Restarts on the same port and store (for durability tests). */
  restart(): Promise<void>;
}

export async function startNats(): Promise<TestNats> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-'));
  let server = await startEmbeddedNats(dir);
  const url = server.url.replace('nats://', '');
  const port = Number(url.split(':').pop());
  const t: TestNats = {
    url,
    dir,
    proc: server.proc,
    connect: () => connect({ servers: url }),
    async stop(hard = false) {
      if (hard) server.proc.kill('SIGKILL');
      await server.stop();
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await server.stop();
      server = await startEmbeddedNats(dir, { port });
      t.proc = server.proc;
    },
  };
  return t;
}
