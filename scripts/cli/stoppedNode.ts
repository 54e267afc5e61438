import { cpSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { startEmbeddedNats } from '../../actors/embeddedNats';
import type { BusConnection } from '../../streams/busConnection';
import { streamDirOf } from './natsUrl';

/** A private nats-server serving a copy of a stopped node's event log. */
export interface StoppedLog {
  url: string;
  /** The private server's subscriber (it has users of its own, as every embedded server). */
  conn: BusConnection;
  /** Stops the private server and removes the copy. */
  close(): Promise<void>;
}

/**
 * Serves the event log (ES_EVT) of a stopped node without touching its store: the stream's files are
 * copied to a temporary store (a nats-server writes to a store it opens, even to read it: recovery
 * rewrites indexes and trims torn blocks) and a private nats-server on a free loopback port serves
 * the copy. The node's own store, ports files and documents (ES_DATA) are left as they are, and no
 * revival facts are appended, as starting the node would.
 */
export async function openStoppedLog(natsDir: string): Promise<StoppedLog> {
  const src = streamDirOf(natsDir);
  const tmp = mkdtempSync(join(tmpdir(), 'es-stopped-log-'));
  let cleaned = false;
  const clean = () => {
    if (!cleaned) rmSync(tmp, { recursive: true, force: true });
    cleaned = true;
  };
  try {
    // Consumers (obs/) stay behind: the copy gets only the stream.
    cpSync(src, streamDirOf(join(tmp, 'nats')), { recursive: true, filter: (p) => !relative(src, p).startsWith(`obs${sep}`) });
    mkdirSync(join(streamDirOf(join(tmp, 'nats')), 'obs'), { recursive: true });
    const server = await startEmbeddedNats(join(tmp, 'nats'));
    process.once('exit', clean);
    return {
      url: server.url,
      conn: server.connection('subscriber'),
      close: async () => {
        await server.stop();
        clean();
        process.off('exit', clean);
      },
    };
  } catch (e) {
    clean();
    throw e;
  }
}
