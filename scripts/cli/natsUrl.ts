import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where the URL came from, for the one line the CLIs print to stderr. */
export interface NatsUrl {
  url: string;
  source: 'NATS_URL' | 'ports file' | 'default';
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * The NATS server to read the event log from: `NATS_URL` when set; else the embedded server a node
 * started under `DATA_DIR` (default `./data`), found through the `nats-server_<pid>.ports` file it
 * writes in `DATA_DIR/nats` (a live pid first, then the newest file); else nats://127.0.0.1:4222.
 */
export function resolveNatsUrl(env: NodeJS.ProcessEnv = process.env): NatsUrl {
  if (env.NATS_URL) return { url: env.NATS_URL, source: 'NATS_URL' };
  const dir = join(resolve(env.DATA_DIR ?? './data'), 'nats');
  if (existsSync(dir)) {
    const files = readdirSync(dir)
      .map((f) => /^nats-server_(\d+)\.ports$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ path: join(dir, m[0]), pid: Number(m[1]), mtime: statSync(join(dir, m[0])).mtimeMs }))
      .sort((a, b) => Number(alive(b.pid)) - Number(alive(a.pid)) || b.mtime - a.mtime);
    for (const f of files) {
      try {
        const url = (JSON.parse(readFileSync(f.path, 'utf8')) as { nats?: string[] }).nats?.[0];
        if (url) return { url, source: 'ports file' };
      } catch {
        /* partially written or stale: try the next */
      }
    }
  }
  return { url: 'nats://127.0.0.1:4222', source: 'default' };
}
