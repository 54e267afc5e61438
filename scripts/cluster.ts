/**
 * `npm run cluster -- [--nodes 3] [--port 9200] [--data-dir ./data/cluster]`: a whole cluster on this
 * machine, to try what several machines would do. A 3-server NATS cluster on loopback (JetStream
 * clustered, actors/natsCluster.ts) and N node processes (`scripts/start.ts`, as `npm start`) on
 * ports 9200.., each with `cluster.stream_replicas: 3`, its own DATA_DIR, and a NATS_URL listing every
 * server with a different one first. It prints the URLs and the `elastic` password, waits until
 * `_cluster/health` is green or yellow with every node in, and on Ctrl-C stops the nodes first
 * (SIGTERM: each takes its snapshot) and the nats-servers last.
 *
 * Every child runs in its own process group, so the terminal's Ctrl-C reaches only this script, which
 * then stops them in order. If this script is killed with SIGKILL, a small watchdog (a detached `sh`
 * reading a pipe from it) does the same.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectBus, type BusConnection } from '../streams/busConnection';
import { jetstreamManager } from '@nats-io/jetstream';
import { readNodeSettings, envNameOfSetting } from '../actors/config';
import { ensureNatsServer } from '../actors/embeddedNats';
import { startNatsCluster, type NatsCluster } from '../actors/natsCluster';
import { SUBSCRIBER_INBOX_PREFIX } from '../streams/busPermissions';
import { generatePassword } from '../actors/security/bootstrap';
import { hashSecret } from '../actors/security/hashing';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { checkPort } from './cli/portCheck';

const USAGE = `usage: npm run cluster -- [--nodes N] [--port P] [--data-dir DIR]
Starts a 3-server NATS cluster on loopback (JetStream, streams with 3 replicas) and N nodes on
127.0.0.1 ports P..P+N-1; prints their URLs and the elastic password, waits until the cluster is
green or yellow, and stops everything on Ctrl-C (the nodes first, NATS last).
  --nodes N       nodes to start, 1-9 (default 3)
  --port P        HTTP port of the first node (default 9200)
  --data-dir DIR  everything goes here (default ./data/cluster): DIR/nats/n1..n3 (JetStream stores),
                  DIR/node-<i> (each node's DATA_DIR), DIR/node-<i>.log (each node's log)
Every node also gets this environment: ELASTIC_PASSWORD (generated at the first start when unset),
CONFIG, CONFIG_DIR, LOG_LEVEL, ES_SETTING_* (ES_SETTING_CLUSTER_STREAM__REPLICAS defaults to 3).`;

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const REPLICAS_ENV = envNameOfSetting('cluster.stream_replicas');
/** ES's exit code for a configuration error (as `npm start`). */
const EXIT_CONFIG = 78;

const opts = parseOrExit('cluster', USAGE, process.argv.slice(2), { options: { nodes: { type: 'string' }, port: { type: 'string' }, 'data-dir': { type: 'string' } } }, (p) => {
  const nodes = num(str(p, 'nodes'), '--nodes', 3);
  const port = num(str(p, 'port'), '--port', 9200);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > 9) throw new UsageError(`--nodes must be a whole number from 1 to 9, got [${str(p, 'nodes')}]`);
  if (!Number.isInteger(port) || port < 1 || port + nodes - 1 > 65535) throw new UsageError(`--port must be a port number with room for ${nodes} nodes, got [${str(p, 'port')}]`);
  return { nodes, port, dir: resolve(str(p, 'data-dir') ?? './data/cluster') };
});

const say = (l = '') => process.stdout.write(l + '\n');
function fail(lines: string[], code = 1): never {
  for (const l of lines) process.stderr.write(`error: ${l}\n`);
  process.stderr.write('the cluster did not start\n');
  process.exit(code);
}

interface NodeProc {
  name: string;
  url: string;
  port: number;
  dataDir: string;
  log: string;
  /** Where this run's lines start in `log`. */
  from: number;
  proc: ChildProcess;
  exited: Promise<void>;
}

const host = process.env.HOST || '127.0.0.1';
const shown = (p: string) => (relative(process.cwd(), p).startsWith('..') ? p : relative(process.cwd(), p) || '.');
const nodeNames = Array.from({ length: opts.nodes }, (_, i) => `node-${i + 1}`);

// ---- checks before anything starts (a bad setting or a taken port costs nothing) ----
const { errors, warnings } = readNodeSettings({ ...process.env, [REPLICAS_ENV]: process.env[REPLICAS_ENV] ?? '3' });
for (const w of warnings) process.stderr.write(`warning: ${w}\n`);
if (errors.length) fail(errors, EXIT_CONFIG);
const taken = (await Promise.all(nodeNames.map((_, i) => checkPort(host, opts.port + i)))).filter((m): m is string => !!m);
if (taken.length) fail(taken.map((m) => m.replace(/, or start this node with another PORT.*$/, `, or start the cluster with another --port`)));
const leftovers = natsServersOn(join(opts.dir, 'nats'));
if (leftovers.length) {
  fail([`nats-server ${leftovers.join(', ')} still run(s) on ${shown(join(opts.dir, 'nats'))} (a cluster that was not stopped with Ctrl-C?): stop them (kill ${leftovers.join(' ')}) or use another --data-dir`]);
}
try {
  ensureNatsServer((m) => say(m));
} catch (e) {
  fail([(e as Error).message]);
}

/** Pids of nats-servers whose config lies under `dir` (from /proc; none when there is no /proc). */
function natsServersOn(dir: string): number[] {
  const out: number[] = [];
  let pids: string[] = [];
  try {
    pids = readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of pids) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('nats-server') && argv.some((a) => a.startsWith(dir + '/'))) out.push(Number(pid));
    } catch {
      /* gone */
    }
  }
  return out;
}

// ---- state and orderly stop ----
mkdirSync(opts.dir, { recursive: true });
const markerPath = join(opts.dir, 'cluster.json');
/** What earlier runs left to know (no secret): whether elastic's password is already in the log. */
const marker = ((): { elasticPasswordStored?: boolean } => {
  try {
    return JSON.parse(readFileSync(markerPath, 'utf8')) as { elasticPasswordStored?: boolean };
  } catch {
    return {}; // absent or damaged: as on a first start (a stored password is then detected at the first request)
  }
})();
let nats: NatsCluster | undefined;
/** The NATS cluster while it starts (a stop then waits for it, so its servers are not left behind). */
let natsStarting: Promise<NatsCluster> | undefined;
const nodes: NodeProc[] = [];
let stoppingSince: number | undefined;
let started = false;

/**
 * The watchdog: if this script dies without stopping its children (SIGKILL), the pipe closes and the
 * watchdog sends SIGTERM to the nodes, waits for them (up to 60 s), then to the nats-servers. A clean
 * stop tells it `done` first, so it never signals a pid that may have been reused.
 */
const watchdog = spawn(
  'sh',
  [
    '-c',
    'nodes=""; nats=""; while read kind pid; do case "$kind" in done) exit 0;; node) nodes="$nodes $pid";; nats) nats="$nats $pid";; esac; done; ' +
      '[ -n "$nodes" ] && kill -TERM $nodes 2>/dev/null; i=0; for p in $nodes; do while kill -0 $p 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; done; ' +
      '[ -n "$nats" ] && kill -TERM $nats 2>/dev/null; exit 0',
  ],
  { stdio: ['pipe', 'ignore', 'ignore'], detached: true },
);
watchdog.on('error', () => undefined);
watchdog.stdin!.on('error', () => undefined);
const watch = (kind: 'node' | 'nats', pid: number | undefined) => pid && watchdog.stdin!.write(`${kind} ${pid}\n`);

const gone = (p: ChildProcess) => p.exitCode !== null || p.signalCode !== null;
const exitedOf = (p: ChildProcess) => new Promise<void>((r) => (gone(p) ? r() : p.once('exit', () => r())));
const how = (p: ChildProcess) => (p.signalCode ? `signal ${p.signalCode}` : `exit ${p.exitCode}`);

/** SIGTERM, then SIGKILL if it has not exited after `graceMs`. */
async function terminate(p: ChildProcess, graceMs: number): Promise<void> {
  if (gone(p)) return;
  const done = exitedOf(p);
  p.kill('SIGTERM');
  const hard = setTimeout(() => p.kill('SIGKILL'), graceMs);
  await done;
  clearTimeout(hard);
}

/** Nodes first (each snapshots and leaves the cluster), the nats-servers last. */
async function stopAll(code: number): Promise<never> {
  const live = nodes.filter((n) => !gone(n.proc));
  if (live.length) say(`stopping ${live.map((n) => n.name).join(', ')} ...`);
  await Promise.all(
    nodes.map(async (n) => {
      if (gone(n.proc)) return;
      await terminate(n.proc, 65_000); // start.ts gives its own shutdown 60 s
      say(`  ${n.name} stopped (${how(n.proc)})`);
    }),
  );
  temporaryUser.remove();
  nats ??= await natsStarting?.catch(() => undefined);
  if (nats) {
    say('stopping the nats-servers ...');
    await Promise.all(nats.servers.map((s) => terminate(s.proc, 10_000)));
    say('  nats-servers stopped');
  }
  watchdog.stdin!.end('done\n');
  await exitedOf(watchdog);
  process.exit(code);
}

for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (stoppingSince !== undefined) {
      // Ctrl-C reaches us twice (from the terminal, and relayed by npm/tsx): only a later one forces.
      if (Date.now() - stoppingSince < 1_000) return;
      say('second signal: killing everything');
      for (const n of nodes) if (!gone(n.proc)) n.proc.kill('SIGKILL');
      for (const s of nats?.servers ?? []) if (!gone(s.proc)) s.proc.kill('SIGKILL');
      watchdog.stdin!.end('done\n');
      process.exit(130);
    }
    stoppingSince = Date.now();
    void stopAll(0);
  });
}

/** Never resolves: a stop under way ends the process. */
const forever = () => new Promise<never>(() => undefined);

/** Stops what started and exits 1 with `lines`; while stopping already, lets that stop finish. */
async function abort(lines: string[]): Promise<never> {
  if (stoppingSince !== undefined) return forever();
  stoppingSince = Date.now();
  for (const l of lines) process.stderr.write(`error: ${l}\n`);
  return stopAll(1);
}

/** The last lines a node wrote in this run (its log is appended to across runs). */
const tail = (file: string, from = 0) => {
  try {
    return readFileSync(file).subarray(from).toString('utf8').trim().split('\n').slice(-15).join('\n') || '(nothing logged)';
  } catch {
    return '(no log)';
  }
};

/** Polls until `check` answers something, within `ms`, unless a stop began. */
async function until<T>(ms: number, check: () => Promise<T | undefined>): Promise<T | undefined> {
  const end = Date.now() + ms;
  while (stoppingSince === undefined && Date.now() < end) {
    const v = await check();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 200));
  }
  return undefined;
}

/**
 * A temporary file-realm user with the `superuser` role (as ES's own CLI tools use), written to the
 * nodes' shared CONFIG_DIR (`users`, `users_roles`, re-read by every node within a second) only while
 * this script waits for the health of a cluster whose `elastic` password it does not know, and
 * removed right after (also on Ctrl-C and on exit). Only its hash is ever written.
 */
const temporaryUser = (() => {
  const configDir = resolve(process.env.CONFIG_DIR || './config');
  const users = join(configDir, 'users');
  const roles = join(configDir, 'users_roles');
  let lines: { user: string; role: string; created: { users: boolean; roles: boolean } } | undefined;
  const edit = (file: string, change: (ls: string[]) => string[], dropIfEmpty: boolean) => {
    const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
    const kept = change(before ? before.replace(/\n$/, '').split('\n') : []);
    if (!kept.length && dropIfEmpty) rmSync(file, { force: true });
    else writeFileSync(file, kept.length ? kept.join('\n') + '\n' : '', { mode: 0o600 });
  };
  const remove = () => {
    if (!lines) return;
    const l = lines;
    lines = undefined;
    edit(users, (ls) => ls.filter((x) => x !== l.user), l.created.users);
    edit(roles, (ls) => ls.filter((x) => x !== l.role), l.created.roles);
  };
  process.on('exit', remove);
  return {
    /** Adds the user and resolves with its Authorization header once `url` accepts it. */
    async add(url: string): Promise<string> {
      mkdirSync(configDir, { recursive: true });
      const name = `cluster_start_${randomBytes(6).toString('hex')}`;
      const secret = randomBytes(24).toString('base64url');
      lines = { user: `${name}:${await hashSecret(secret, 'pbkdf2')}`, role: `superuser:${name}`, created: { users: !existsSync(users), roles: !existsSync(roles) } };
      const l = lines;
      edit(roles, (ls) => [...ls, l.role], false); // the role first: a reload that sees the user sees its role
      edit(users, (ls) => [...ls, l.user], false);
      const authorization = basic(name, secret);
      const ok = await until(20_000, async () => ((await get(`${url}/_security/_authenticate`, authorization))?.status === 200 ? true : undefined));
      if (stoppingSince !== undefined) await forever();
      if (!ok) await abort([`the nodes did not accept a temporary file-realm user written to ${shown(configDir)}: is the file realm enabled? Start with ELASTIC_PASSWORD=<elastic's password> instead`]);
      return authorization;
    },
    remove,
  };
})();

// ---- NATS ----
say(`starting a 3-server NATS cluster (JetStream) under ${shown(join(opts.dir, 'nats'))} ...`);
try {
  natsStarting = startNatsCluster({ dir: join(opts.dir, 'nats'), name: 'es-nats', detached: true, logFiles: true, secure: true });
  nats = await natsStarting;
} catch (e) {
  await abort([`the NATS cluster did not start: ${(e as Error).message} (logs: ${shown(join(opts.dir, 'nats'))}/n*/nats-server.log)`]);
}
for (const s of nats!.servers) watch('nats', s.proc.pid);
if (stoppingSince !== undefined) await forever(); // Ctrl-C during the NATS start: stopAll exits
// On a restart, the streams of an earlier run (document log, lifecycle log, KV buckets) elect their
// leaders seconds after the servers answer: a node started before that times out opening them.
const leaderless = await until(120_000, async () => {
  const missing = await streamsWithoutLeader(nats!.connection('node')).catch((e: Error) => [e.message]);
  return missing.length ? undefined : missing;
});
if (stoppingSince !== undefined) await forever();
if (!leaderless) await abort([`the JetStream streams under ${shown(join(opts.dir, 'nats'))} got no leader within 120 s (logs: ${shown(join(opts.dir, 'nats'))}/n*/nats-server.log)`]);

/** Names of the streams that have no elected leader yet (all of them when JetStream does not answer). */
async function streamsWithoutLeader(conn: BusConnection): Promise<string[]> {
  const nc = await connectBus(conn, { timeout: 2_000 });
  try {
    const jsm = await jetstreamManager(nc, { timeout: 2_000 });
    const missing: string[] = [];
    for await (const si of jsm.streams.list()) {
      const info = await jsm.streams.info(si.config.name).catch(() => undefined);
      if (!info?.cluster?.leader) missing.push(si.config.name);
    }
    return missing;
  } finally {
    await nc.close();
  }
}

// ---- the elastic password ----
// Given: every node uses it (as `npm start`). Not given, first start: generated here once, handed to
// every node, and stored (hashed) in the cluster's log once the cluster is up, so later starts need
// nothing. Not given, later start: the log has it.
const given = process.env.ELASTIC_PASSWORD || undefined;
const generated = !given && !marker.elasticPasswordStored ? generatePassword() : undefined;
const password = given ?? generated;

// ---- nodes ----
const servers = nats!.servers.map((s) => s.url);

/** Starts node `i` (its own process group; output appended to DIR/node-<i>.log). */
function spawnNode(i: number): NodeProc {
  const name = nodeNames[i];
  const port = opts.port + i;
  const dataDir = join(opts.dir, name);
  const log = join(opts.dir, `${name}.log`);
  // Each node prefers its own server (as nodes on several machines would), the others as fallbacks.
  const natsUrl = [...servers.slice(i % servers.length), ...servers.slice(0, i % servers.length)].join(',');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NATS_URL: natsUrl,
    DATA_DIR: dataDir,
    HOST: host,
    PORT: String(port),
    NODE_NAME: process.env.NODE_NAME ? `${process.env.NODE_NAME}-${i + 1}` : name,
    [REPLICAS_ENV]: process.env[REPLICAS_ENV] ?? '3',
    // The node role's nkey and the cluster's CA (actors/bus/clusterFiles.ts).
    [envNameOfSetting('nats.nkey_seed_file')]: nats!.files!.keys.node.file,
    [envNameOfSetting('nats.tls.ca')]: nats!.files!.caFile,
  };
  if (password) env.ELASTIC_PASSWORD = password;
  else delete env.ELASTIC_PASSWORD;
  const fd = openSync(log, 'a');
  const from = fstatSync(fd).size;
  const proc = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'start.ts')], { cwd: process.cwd(), env, stdio: ['ignore', fd, fd], detached: true });
  closeSync(fd);
  proc.on('error', () => undefined);
  watch('node', proc.pid);
  const n: NodeProc = { name, url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`, port, dataDir, log, from, proc, exited: exitedOf(proc) };
  nodes.push(n);
  void n.exited.then(() => {
    if (stoppingSince !== undefined) return;
    if (!started) void abort([`${name} exited during start-up (${how(proc)}); the end of ${shown(log)}:\n${tail(log, from)}`]);
    else process.stderr.write(`warning: ${name} exited (${how(proc)}); the others keep running. The end of ${shown(log)}:\n${tail(log, from)}\n`);
  });
  return n;
}

const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString('base64')}`;
/** GET with an optional Authorization header; undefined while nothing answers. */
async function get(url: string, authorization?: string): Promise<{ status: number; json: Record<string, unknown> } | undefined> {
  try {
    const res = await fetch(url, { headers: authorization ? { authorization } : {}, signal: AbortSignal.timeout(35_000) });
    const text = await res.text();
    return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  } catch {
    return undefined;
  }
}

/** Resolves once the node answers `GET /` (a 401 means up too); aborts after 180 s. */
async function waitUp(n: NodeProc): Promise<void> {
  const up = await until(180_000, async () => ((await get(`${n.url}/`))?.status ?? 0) > 0 || undefined);
  if (stoppingSince !== undefined) await forever();
  if (!up) await abort([`${n.name} did not answer on ${n.url} within 180 s; the end of ${shown(n.log)}:\n${tail(n.log, n.from)}`]);
}

// The first node alone bootstraps what the cluster shares (streams, KV buckets, identity), so the
// others do not race it creating replicated streams on a NATS cluster that has just formed.
say(`starting ${nodeNames[0]} (logs in ${shown(opts.dir)}/node-<i>.log) ...`);
await waitUp(spawnNode(0));
if (opts.nodes > 1) {
  say(`starting ${nodeNames.slice(1).join(', ')} ...`);
  await Promise.all(nodeNames.slice(1).map((_, k) => waitUp(spawnNode(k + 1))));
}
const security = (await get(`${nodes[0].url}/`))?.status === 401;
let authorization: string | undefined;
if (security && password) {
  authorization = basic('elastic', password);
  if ((await get(`${nodes[0].url}/`, authorization))?.status === 401) {
    await abort([
      given
        ? 'ELASTIC_PASSWORD is not the password of elastic in this cluster: the log holds a password set earlier (through the API or a previous start)'
        : `elastic's password of this cluster was set earlier (${shown(markerPath)} is missing): start with ELASTIC_PASSWORD=<it>, or run \`npm run reset-password -- --url ${nodes[0].url}\` while the cluster runs`,
    ]);
  }
} else if (security) {
  // The password is in the log and not known here: a temporary file-realm user reads the health.
  authorization = await temporaryUser.add(nodes[0].url);
}

// Green or yellow with every node in.
say(`waiting for ${opts.nodes} node${opts.nodes > 1 ? 's' : ''} to see each other and the cluster to be green or yellow ...`);
const health = await until(300_000, async () => {
  const h = await get(`${nodes[0].url}/_cluster/health?wait_for_nodes=${opts.nodes}&wait_for_status=yellow&timeout=30s`, authorization);
  const j = h?.json;
  return h?.status === 200 && j?.number_of_nodes === opts.nodes && (j.status === 'green' || j.status === 'yellow') ? j : undefined;
});
if (stoppingSince !== undefined) await forever();
if (!health) await abort([`the cluster did not reach yellow with ${opts.nodes} nodes in 300 s (see ${shown(opts.dir)}/node-<i>.log)`]);
temporaryUser.remove();

// A generated password is stored (hashed) in the log through the API, so the next start needs none.
if (security && generated) {
  const res = await fetch(`${nodes[0].url}/_security/user/elastic/_password`, {
    method: 'POST',
    headers: { authorization: basic('elastic', generated), 'content-type': 'application/json' },
    body: JSON.stringify({ password: generated }),
  }).catch((e: Error) => ({ ok: false, status: 0, text: async () => e.message }));
  if (!res.ok) await abort([`could not store the generated password: HTTP ${res.status} ${(await res.text()).slice(0, 300)}`]);
}
if (security && !given) writeFileSync(markerPath, JSON.stringify({ elasticPasswordStored: true }) + '\n');
started = true;

say('');
say(`cluster [${String(health!.cluster_name)}] is ${String(health!.status)} with ${String(health!.number_of_nodes)} nodes:`);
for (const n of nodes) say(`  ${n.name.padEnd(8)} ${n.url.padEnd(24)} pid ${n.proc.pid}, DATA_DIR ${shown(n.dataDir)}, log ${shown(n.log)}`);
say(`  NATS_URL=${servers.join(',')}   (3 nats-servers, JetStream streams with ${process.env[REPLICAS_ENV] ?? '3'} replicas; logs ${shown(join(opts.dir, 'nats'))}/n*/nats-server.log)`);
say(`  the bus: TLS for clients and routes (CA ${shown(nats!.files!.caFile)}); no anonymous client gets in. The read-only subscriber:`);
say(`    NATS_URL=${servers.join(',')} NATS_NKEY=${shown(nats!.files!.keys.subscriber.file)} NATS_CA=${shown(nats!.files!.caFile)}`);
say(`    (with those, \`npm run events\`, \`npm run replay\` and \`npm run -s events -- credentials --json\` use it)`);
say(`    nkey seed: ${nats!.files!.keys.subscriber.seed}   inbox prefix: ${SUBSCRIBER_INBOX_PREFIX}`);
if (!security) say('security is off (xpack.security.enabled: false)');
else if (generated) say(`\nPassword for the elastic user (generated now and printed once; it is stored hashed in the cluster's log):\n  ${generated}\n  curl -u elastic:${generated} '${nodes[0].url}/_cat/nodes?v'`);
else if (given) say('the elastic user\'s password is ELASTIC_PASSWORD');
else say('the elastic user\'s password is the one printed when this cluster first started (`npm run reset-password -- --url ' + nodes[0].url + '` sets a new one)');
say('\nCtrl-C stops everything: the nodes first (each takes its snapshot), then the nats-servers.');
