import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Largest NATS message: big pages and bulk batches travel in one message each. */
export const MAX_PAYLOAD = 64 * 1024 * 1024;

export interface EmbeddedNats {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function hasBinary(): boolean {
  return spawnSync('sh', ['-c', 'command -v nats-server'], { stdio: 'ignore' }).status === 0;
}

/** The nats-server executable: on PATH, or where Debian installs it (/usr/sbin, absent from a user's PATH). */
export function natsServerBinary(): string {
  if (hasBinary()) return 'nats-server';
  for (const p of ['/usr/sbin/nats-server', '/usr/local/sbin/nats-server', '/usr/local/bin/nats-server']) if (existsSync(p)) return p;
  return 'nats-server';
}

/**
 * Makes sure `nats-server` is installed: as root, installs Debian's package with apt-get;
 * otherwise throws a one-line instruction.
 */
export function ensureNatsServer(log: (msg: string) => void = () => undefined): void {
  if (hasBinary()) return;
  if (process.getuid?.() !== 0) {
    throw new Error('nats-server is not installed: run `sudo apt-get install -y nats-server` (or set NATS_URL to a running server)');
  }
  log('nats-server not found: installing it with apt-get');
  let r = spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  if (r.status !== 0) {
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    r = spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  }
  if (r.status !== 0 || !hasBinary()) throw new Error('could not install nats-server with apt-get');
}

/** Starts a loopback nats-server child with JetStream stored under `dir`; resolves when it listens. */
export async function startEmbeddedNats(dir: string, opts: { port?: number } = {}): Promise<EmbeddedNats> {
  const abs = resolve(dir);
  mkdirSync(join(abs, 'jetstream'), { recursive: true });
  const conf = join(abs, 'nats-server.conf');
  writeFileSync(
    conf,
    [
      'listen: "127.0.0.1:' + (opts.port ?? -1) + '"',
      `max_payload: ${MAX_PAYLOAD}`,
      'jetstream {',
      `  store_dir: "${join(abs, 'jetstream')}"`,
      '}',
      `ports_file_dir: "${abs}"`,
      '',
    ].join('\n'),
  );
  const proc = spawn(natsServerBinary(), ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  const portsFile = join(abs, `nats-server_${proc.pid}.ports`);
  const end = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`nats-server exited: ${stderr.trim().split('\n').pop()}`);
    if (existsSync(portsFile)) {
      try {
        const url = (JSON.parse(readFileSync(portsFile, 'utf8')) as { nats: string[] }).nats[0];
        if (url) {
          return {
            url,
            proc,
            stop: () =>
              new Promise<void>((res) => {
                if (proc.exitCode !== null) return res();
                proc.once('exit', () => res());
                proc.kill('SIGTERM');
              }),
          };
        }
      } catch {
        /* partially written */
      }
    }
    if (Date.now() > end) throw new Error('nats-server did not start in 15s');
    await new Promise((r) => setTimeout(r, 20));
  }
}
