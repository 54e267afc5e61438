import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EVENT_STREAM } from '../../streams';
import { alive } from '../../actors/embeddedNats';

/** Where the URL came from, for the one line the CLIs print to stderr. */
export interface NatsUrl {
  url: string;
  source: 'NATS_URL' | 'ports file' | 'default';
  /** Ports file only: its nats-server process is still running. */
  live?: boolean;
}


/** The embedded server's folder of the node whose data is in `DATA_DIR` (default `./data`). */
export const natsDirOf = (env: NodeJS.ProcessEnv) => join(resolve(env.DATA_DIR ?? './data'), 'nats');

/** The folder of a JetStream stream in an embedded server's store (nats-server adds `jetstream/$G`). */
export const streamDirOf = (natsDir: string, stream = EVENT_STREAM) => join(natsDir, 'jetstream', 'jetstream', '$G', 'streams', stream);

/**
 * The NATS server to read the event log from: `NATS_URL` when set; else the embedded server a node
 * started under `DATA_DIR` (default `./data`), found through the `nats-server_<pid>.ports` file it
 * writes in `DATA_DIR/nats` (a live pid first, then the newest file); else nats://127.0.0.1:4222.
 */
export function resolveNatsUrl(env: NodeJS.ProcessEnv = process.env): NatsUrl {
  if (env.NATS_URL) return { url: env.NATS_URL, source: 'NATS_URL' };
  const dir = natsDirOf(env);
  if (existsSync(dir)) {
    const files = readdirSync(dir)
      .map((f) => /^nats-server_(\d+)\.ports$/.exec(f))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ path: join(dir, m[0]), live: alive(Number(m[1])), mtime: statSync(join(dir, m[0])).mtimeMs }))
      .sort((a, b) => Number(b.live) - Number(a.live) || b.mtime - a.mtime);
    for (const f of files) {
      try {
        const url = (JSON.parse(readFileSync(f.path, 'utf8')) as { nats?: string[] }).nats?.[0];
        if (url) return { url, source: 'ports file', live: f.live };
      } catch {
        /* partially written or stale: try the next */
      }
    }
  }
  return { url: 'nats://127.0.0.1:4222', source: 'default' };
}

/** Where the event log is: a running server, or the store of a stopped node under `DATA_DIR`. */
export type LogLocation = { kind: 'server'; url: string; source: NatsUrl['source'] } | { kind: 'stopped'; natsDir: string; dataDir: string };

/**
 * A running server when there is one (NATS_URL, or a live ports file); else the event log of a
 * stopped node when `DATA_DIR` holds one (read through a private server on a copy,
 * scripts/cli/stoppedNode.ts); else the default URL.
 */
export function locateLog(env: NodeJS.ProcessEnv = process.env): LogLocation {
  const r = resolveNatsUrl(env);
  const natsDir = natsDirOf(env);
  const stopped = { kind: 'stopped' as const, natsDir, dataDir: resolve(env.DATA_DIR ?? './data') };
  if ((r.source === 'default' || (r.source === 'ports file' && !r.live)) && existsSync(streamDirOf(natsDir))) return stopped;
  return { kind: 'server', url: r.url, source: r.source };
}

/**
 * The servers of a NATS_URL for nats.js: `npm run cluster` prints one listing every server of the
 * NATS cluster, comma-separated (nats.js would take the whole string for one URL).
 */
export const natsServers = (url: string): string[] => url.split(',').map((u) => u.trim()).filter(Boolean);
