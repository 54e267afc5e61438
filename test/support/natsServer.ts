import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';

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

async function waitFor<T>(fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error('timed out waiting for nats-server');
    await new Promise((r) => setTimeout(r, 25));
  }
}

function launch(dir: string, port: number | -1): { proc: ChildProcess; ready: Promise<string> } {
  const proc = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js'), '--ports_file_dir', dir], {
    stdio: 'ignore',
  });
  const ready = waitFor(async () => {
    const ports = JSON.parse(await readFile(join(dir, `nats-server_${proc.pid}.ports`), 'utf8')) as { nats: string[] };
    return ports.nats[0];
  }, 10_000);
  return { proc, ready };
}

export async function startNats(): Promise<TestNats> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-'));
  let { proc, ready } = launch(dir, -1);
  const url = (await ready).replace('nats://', '');
  const port = Number(url.split(':').pop());
  const t: TestNats = {
    url,
    dir,
    proc,
    connect: () => connect({ servers: url }),
    async stop(hard = false) {
      await kill(t.proc, hard);
      await rm(dir, { recursive: true, force: true });
    },
    async restart() {
      await kill(t.proc, false);
      ({ proc, ready } = launch(dir, port));
      t.proc = proc;
      await ready;
    },
  };
  return t;
}

function kill(proc: ChildProcess, hard: boolean): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', () => resolve());
    proc.kill(hard ? 'SIGKILL' : 'SIGTERM');
  });
}
