import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { MAX_PAYLOAD, natsServerBinary } from './embeddedNats';
import { connectionOptions, type BusConnection } from '../streams/busConnection';
import type { BusRole } from '../streams/busPermissions';
import { clusterConnection, clusterServerConfig, ensureClusterFiles, type ClusterFiles, type ServerSpec } from './bus/clusterFiles';

/** One nats-server of a local cluster. */
export interface ClusterServer {
  name: string;
  /** `nats://127.0.0.1:<port>` */
  url: string;
  port: number;
  clusterPort: number;
  dir: string;
  proc: ChildProcess;
  /** SIGKILL (hard) or SIGTERM, and wait for the exit. */
  kill(hard?: boolean): Promise<void>;
  /** Starts it again on the same ports and store. */
  restart(): Promise<void>;
}

export interface NatsCluster {
  servers: ClusterServer[];
  /** Every client URL, comma-separated (a NATS_URL). */
  url: string;
  /** Secured clusters: the CA, certificates and role keys (actors/bus/clusterFiles.ts). */
  files?: ClusterFiles;
  /** How `role` connects (secured clusters; an open one takes any client). */
  connection(role: BusRole): BusConnection;
  stop(): Promise<void>;
}

/** A free loopback port (bound then released: fine on a test machine). */
export function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const p = (srv.address() as { port: number }).port;
      srv.close(() => res(p));
    });
    srv.on('error', rej);
  });
}

function exited(p: ChildProcess): Promise<void> {
  return p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', () => r()));
}

/**
 * Starts `n` nats-servers on loopback that route to each other and form one JetStream cluster
 * (each with its own `server_name`, client port, cluster port and store under `dir`). Resolves once
 * JetStream answers (a meta leader is elected). Debian's nats-server 2.9.10 does this.
 */
export async function startNatsCluster(opts: {
  servers?: number;
  dir: string;
  clientPorts?: number[];
  name?: string;
  /** Each server in its own process group, so a Ctrl-C to the caller's group does not stop it first (`npm run cluster`). */
  detached?: boolean;
  /** Each server logs to `<dir>/<name>/nats-server.log` (default: no log). */
  logFiles?: boolean;
  /**
   * Client and route TLS with a CA generated under `<dir>/bus`, and only the node and subscriber
   * users (`npm run cluster`). Without it the servers take anonymous clients (the test clusters).
   */
  secure?: boolean;
}): Promise<NatsCluster> {
  const n = opts.servers ?? 3;
  const dir = resolve(opts.dir);
  const ports = await Promise.all(Array.from({ length: n }, (_, i) => (opts.clientPorts?.[i] ? Promise.resolve(opts.clientPorts[i]) : freePort())));
  const cports = await Promise.all(Array.from({ length: n }, () => freePort()));
  const bin = natsServerBinary();
  const servers: ClusterServer[] = [];
  const specs: ServerSpec[] = Array.from({ length: n }, (_, i) => ({ name: `n${i + 1}`, host: '127.0.0.1', clientPort: ports[i], routePort: cports[i] }));
  const files = opts.secure ? await ensureClusterFiles(join(dir, 'bus'), specs) : undefined;
  for (let i = 0; i < n; i++) {
    const name = `n${i + 1}`;
    const sdir = join(dir, name);
    mkdirSync(join(sdir, 'jetstream'), { recursive: true });
    const conf = join(sdir, 'nats-server.conf');
    const routes = cports.filter((_, j) => j !== i).map((p) => `    "nats-route://127.0.0.1:${p}"`);
    const logFile = opts.logFiles ? join(sdir, 'nats-server.log') : undefined;
    writeFileSync(
      conf,
      files
        ? clusterServerConfig(files, specs[i], specs, { clusterName: opts.name ?? 'es-nats', storeDir: join(sdir, 'jetstream'), maxPayload: MAX_PAYLOAD, ...(logFile ? { logFile } : {}) })
        : [
            `server_name: "${name}"`,
            `listen: "127.0.0.1:${ports[i]}"`,
            `max_payload: ${MAX_PAYLOAD}`,
            ...(logFile ? [`log_file: "${logFile}"`, 'logfile_size_limit: 10MB'] : []),
            'jetstream {',
            `  store_dir: "${join(sdir, 'jetstream')}"`,
            '}',
            'cluster {',
            `  name: "${opts.name ?? 'es-nats'}"`,
            `  listen: "127.0.0.1:${cports[i]}"`,
            '  routes: [',
            ...routes,
            '  ]',
            '}',
            '',
          ].join('\n'),
    );
    const s: ClusterServer = {
      name,
      url: `${files ? 'tls' : 'nats'}://127.0.0.1:${ports[i]}`,
      port: ports[i],
      clusterPort: cports[i],
      dir: sdir,
      proc: spawn(bin, ['-c', conf], { stdio: 'ignore', detached: opts.detached ?? false }),
      async kill(hard = false) {
        const p = s.proc;
        p.kill(hard ? 'SIGKILL' : 'SIGTERM');
        await exited(p);
      },
      async restart() {
        await s.kill();
        s.proc = spawn(bin, ['-c', conf], { stdio: 'ignore', detached: opts.detached ?? false });
        await waitForJetStream(s.url, 30_000, login(files, specs));
      },
    };
    servers.push(s);
  }
  try {
    await waitForJetStream(servers.map((s) => s.url).join(','), 30_000, login(files, specs));
  } catch (e) {
    // Do not leave servers running behind a failed start.
    await Promise.all(servers.map((s) => s.kill(true)));
    throw e;
  }
  return {
    servers,
    url: servers.map((s) => s.url).join(','),
    ...(files ? { files } : {}),
    connection: (role) => (files ? clusterConnection(files, specs, role) : { servers: servers.map((s) => s.url) }),
    async stop() {
      await Promise.all(servers.map((s) => s.kill()));
    },
  };
}

/** The node's login of a secured cluster (its TLS and nkey), for the start-up probe. */
const login = (files: ClusterFiles | undefined, specs: ServerSpec[]) => (files ? clusterConnection(files, specs, 'node') : undefined);

/** Resolves once JetStream answers through `url` (a cluster needs its meta leader first). */
export async function waitForJetStream(url: string, timeoutMs: number, conn?: BusConnection): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const nc = await connect({ ...(conn ? connectionOptions(conn) : {}), servers: url.split(','), timeout: 1_000 });
      try {
        await (await jetstreamManager(nc, { timeout: 1_000 })).getAccountInfo();
        return;
      } finally {
        await nc.close();
      }
    } catch (e) {
      last = e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`JetStream did not answer on ${url} within ${timeoutMs} ms: ${(last as Error)?.message}`);
}
