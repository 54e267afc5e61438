import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, statSync, statfsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { BusConnection } from '../streams/busConnection';
import { SUBSCRIBER_INBOX_PREFIX, type BusRole, type KeyRole } from '../streams/busPermissions';
import { ensureBusKeys, ensureRoleKey, type RoleKey } from './bus/credentials';
import { renderServerConfig, roleUsers, type TlsFiles } from './bus/serverConfig';

/** Largest NATS message: big pages and bulk batches travel in one message each. */
export const MAX_PAYLOAD = 64 * 1024 * 1024;

export interface EmbeddedNats {
  url: string;
  proc: ChildProcess;
  /** The roles' nkeys (seed files under `<dir>/auth`, mode 0600); `admin` only when asked for. */
  keys: Record<BusRole, RoleKey> & { admin?: RoleKey };
  /** How a client of `role` connects (the subscriber with its own inbox prefix). */
  connection(role: KeyRole): BusConnection;
  stop(): Promise<void>;
}

/** Where a node's embedded server keeps its users' seeds: `<DATA_DIR>/nats/auth`. */
export const authDirOf = (natsDir: string) => join(resolve(natsDir), 'auth');

/** The connection of `role` to a server at `url` with the seeds under `natsDir/auth`. */
export function roleConnection(url: string, key: RoleKey): BusConnection {
  return { servers: [url], nkeySeed: key.seed, ...(key.role === 'subscriber' ? { inboxPrefix: SUBSCRIBER_INBOX_PREFIX } : {}) };
}

/** Where Debian (and `make install`) put daemons: not on an ordinary user's PATH. */
export const SBIN_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

function executable(p: string): boolean {
  try {
    accessSync(p, constants.X_OK);
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The `nats-server` binary: on PATH, else in the sbin folders; undefined when there is none. */
export function findNatsServer(env: NodeJS.ProcessEnv = process.env, extraDirs: readonly string[] = SBIN_DIRS): string | undefined {
  const dirs = [...(env.PATH ?? '').split(':').filter(Boolean), ...extraDirs];
  for (const d of dirs) {
    const p = join(d, 'nats-server');
    if (executable(p)) return p;
  }
  return undefined;
}

export interface EnsureOptions {
  env?: NodeJS.ProcessEnv;
  uid?: number;
  extraDirs?: readonly string[];
  /** Runs apt-get (tests replace it); returns its exit status. */
  apt?: (args: string[]) => number | null;
}

const runApt = (args: string[]) =>
  spawnSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status;

/**
 * The path of `nats-server`, installing Debian's package with apt-get when running as root; otherwise
 * throws a one-line instruction that fits the user (root or not).
 */
export function ensureNatsServer(log: (msg: string) => void = () => undefined, o: EnsureOptions = {}): string {
  const env = o.env ?? process.env;
  const extra = o.extraDirs ?? SBIN_DIRS;
  const found = findNatsServer(env, extra);
  if (found) return found;
  const where = `looked on PATH and in ${extra.join(', ')}`;
  if ((o.uid ?? process.getuid?.()) !== 0) {
    throw new Error(`nats-server is not installed (${where}): install it with \`sudo apt-get install -y nats-server\`, or set NATS_URL to a running nats-server`);
  }
  const apt = o.apt ?? runApt;
  log('nats-server not found: installing it with apt-get');
  let status = apt(['install', '-y', '-qq', 'nats-server']);
  if (status !== 0) {
    apt(['update', '-qq']);
    status = apt(['install', '-y', '-qq', 'nats-server']);
  }
  const installed = status === 0 ? findNatsServer(env, extra) : undefined;
  if (!installed) {
    throw new Error(`nats-server is not installed (${where}) and \`apt-get install -y nats-server\` failed (see its output above): install it yourself, or set NATS_URL to a running nats-server`);
  }
  return installed;
}

/** A running process (a zombie, killed but not yet reaped, does not count). */
export const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state ..."; comm may hold spaces and parentheses.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc: trust kill(0)
  }
};

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return undefined;
  }
};

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (alive(pid)) {
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
  return true;
}

/** The nats-server executable to run (findNatsServer, or the bare name for a clear spawn error). */
export const natsServerBinary = (): string => findNatsServer() ?? 'nats-server';

/**
 * A node killed with SIGKILL leaves its nats-server running (it is in its own process group, so that
 * Ctrl-C reaches only the node): stop such a leftover before starting on the same store, or refuse
 * when the node that started it is still alive.
 */
async function reclaimStore(abs: string, conf: string): Promise<void> {
  if (!existsSync(abs)) return;
  const ownerFile = join(abs, 'node.pid');
  const owner = existsSync(ownerFile) ? Number(readFileSync(ownerFile, 'utf8')) : NaN;
  for (const f of readdirSync(abs)) {
    const m = /^nats-server_(\d+)\.ports$/.exec(f);
    if (!m) continue;
    const pid = Number(m[1]);
    if (!alive(pid) || !cmdline(pid)?.includes(conf)) continue;
    if (owner > 0 && owner !== process.pid && alive(owner)) {
      throw new Error(`the store ${abs} is in use by node pid ${owner} (its nats-server is pid ${pid}): stop that node first, or use another DATA_DIR`);
    }
    process.kill(pid, 'SIGTERM');
    if (!(await waitGone(pid, 10_000))) {
      process.kill(pid, 'SIGKILL');
      await waitGone(pid, 5_000);
    }
  }
}

/**
 * The embedded server's JetStream store limit, fixed at the first start (75% of the disk free then,
 * nats-server's own default) and kept in `<dir>/max_file_store`. Left to nats-server, the limit is
 * computed again at every start: once the disk had less room (segments written meanwhile, other
 * files), the server refused to restore ES_DATA, whose `max_bytes` was set under the old limit
 * ("insufficient storage resources"), the node created an empty one, and every copy's commits,
 * tied to the old log, were discarded: a restart lost the documents.
 */
function pinnedStoreSize(abs: string): number | undefined {
  const file = join(abs, 'max_file_store');
  try {
    const kept = Number(readFileSync(file, 'utf8').trim());
    if (Number.isFinite(kept) && kept > 0) return kept;
  } catch {
    /* first start */
  }
  try {
    const fs = statfsSync(join(abs, 'jetstream'));
    const bytes = Math.floor((fs.bavail * fs.bsize * 3) / 4);
    if (!(bytes > 0)) return undefined;
    writeFileSync(file, `${bytes}\n`);
    return bytes;
  } catch {
    return undefined; // nats-server's own default
  }
}

/**
 * Starts a loopback nats-server child with JetStream stored under `dir`; resolves when it listens.
 * Only the node and subscriber users get in (nkeys generated under `dir/auth` at the first start).
 * The child runs in its own process group (`detached`), so a signal to the node's group (Ctrl-C,
 * `kill -TERM -<pgid>`) does not stop it before the node has written its snapshot; the node stops
 * it last, and kills it if the node process exits any other way.
 */
export async function startEmbeddedNats(dir: string, opts: { port?: number; bin?: string; admin?: boolean; tls?: TlsFiles } = {}): Promise<EmbeddedNats> {
  const abs = resolve(dir);
  const conf = join(abs, 'nats-server.conf');
  await reclaimStore(abs, conf);
  mkdirSync(join(abs, 'jetstream'), { recursive: true });
  // Credentials first (kept across restarts): the server never runs open to anonymous clients.
  const keys: EmbeddedNats['keys'] = { ...ensureBusKeys(authDirOf(abs)), ...(opts.admin ? { admin: ensureRoleKey(authDirOf(abs), 'admin') } : {}) };
  writeFileSync(
    conf,
    renderServerConfig({
      listen: `127.0.0.1:${opts.port ?? -1}`,
      maxPayload: MAX_PAYLOAD,
      logFile: join(abs, 'nats-server.log'),
      storeDir: join(abs, 'jetstream'),
      maxFileStore: pinnedStoreSize(abs),
      portsFileDir: abs,
      users: roleUsers(keys),
      // Client TLS (the benchmarks compare it with plain connections); a node's own server is loopback-only.
      ...(opts.tls ? { tls: opts.tls } : {}),
    }),
    { mode: 0o600 },
  );
  const bin = opts.bin ?? findNatsServer() ?? 'nats-server';
  const proc = spawn(bin, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  writeFileSync(join(abs, 'node.pid'), String(process.pid));
  const dog = proc.pid === undefined ? undefined : watchdog(proc.pid);
  // When the node exits without stop() (uncaught error, process.exit): stop it now rather than leave it.
  const onExit = () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
  };
  process.on('exit', onExit);
  proc.once('exit', () => {
    process.off('exit', onExit);
    dog?.kill('SIGKILL'); // its pid must not outlive the server (pid reuse)
  });
  let stderr = '';
  proc.stderr?.on('data', (d) => (stderr = (stderr + d).slice(-4000)));
  proc.once('error', (e) => (stderr += `\n${e.message}`));
  const portsFile = join(abs, `nats-server_${proc.pid}.ports`);
  const end = Date.now() + 15_000;
  for (;;) {
    if (proc.exitCode !== null || proc.pid === undefined) throw new Error(`nats-server exited: ${lastLine(stderr) ?? lastLine(logTail(abs)) ?? 'no output'}`);
    if (existsSync(portsFile)) {
      try {
        const listed = (JSON.parse(readFileSync(portsFile, 'utf8')) as { nats: string[] }).nats[0];
        const url = listed && opts.tls ? listed.replace(/^nats:/, 'tls:') : listed;
        if (url) return { url, proc, keys, connection: (role) => {
          const key = keys[role];
          if (!key) throw new Error(`this nats-server has no ${role} user`);
          return { ...roleConnection(url, key), ...(opts.tls ? { tls: { ca: readFileSync(opts.tls.ca, 'utf8') } } : {}) };
        }, stop: () => stopChild(proc) };
      } catch {
        /* partially written */
      }
    }
    if (Date.now() > end) {
      proc.kill('SIGKILL');
      throw new Error('nats-server did not start in 15s');
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

/**
 * A detached `sh` that waits for end-of-file on a pipe from this process, then sends the nats-server
 * SIGTERM: when the node dies in a way no handler sees (`kill -9`, OOM), the pipe closes and its
 * nats-server stops too, instead of running on outside every process group.
 */
function watchdog(natsPid: number): ChildProcess {
  const dog = spawn('sh', ['-c', `read _ ; kill -TERM ${natsPid} 2>/dev/null`], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
  dog.on('error', () => undefined); // no sh: the reclaim at the next start still applies
  dog.stdin?.on('error', () => undefined);
  // Neither the pipe nor the child keeps the node's event loop alive.
  (dog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  dog.unref();
  return dog;
}

const lastLine = (text: string) => text.trim().split('\n').pop() || undefined;

/** The end of the server's log file (start-up errors after the config was read go there). */
function logTail(abs: string): string {
  try {
    return readFileSync(join(abs, 'nats-server.log'), 'utf8').slice(-4000);
  } catch {
    return '';
  }
}

/** SIGTERM (nats-server flushes JetStream and exits), SIGKILL if it has not exited after 10 s. */
function stopChild(proc: ChildProcess): Promise<void> {
  return new Promise<void>((res) => {
    if (proc.exitCode !== null || proc.signalCode !== null) return res();
    const hard = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    proc.once('exit', () => {
      clearTimeout(hard);
      res();
    });
    proc.kill('SIGTERM');
  });
}
