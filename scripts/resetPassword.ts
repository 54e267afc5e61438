/**
 * `npm run reset-password -- [-u <user>] [-i]`: resets the password of a built-in (reserved) or
 * native user of a running node, like ES's `bin/elasticsearch-reset-password`: a temporary superuser
 * is added to the file realm (`<configDir>/users`, `users_roles`, which the node re-reads within a
 * second), changes the password through `POST /_security/user/<user>/_password`, and is removed.
 * Passwords live in the node's event log, so a stopped node cannot be changed from outside: start it.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { generatePassword } from '../actors/security/bootstrap';
import { hashSecret } from '../actors/security/hashing';
import { parseOrExit, str } from './cli/args';
import { readNodeSettings } from '../actors/config';
import { sslSetting } from '../actors/tls/httpSsl';

const USAGE = `usage: npm run reset-password -- [-u <user>] [-a | -i] [-b] [-s] [-f] [--url <url>]
Resets the password of a built-in or native user of a RUNNING node (as ES's elasticsearch-reset-password).
  -u, --username <user>  the user (default: elastic)
  -a, --auto             generate a strong password and print it (the default)
  -i, --interactive      prompt for the new password
  -b, --batch            do not ask for confirmation
  -s, --silent           print only the new password
  -f, --force            run even when the cluster health is red
      --url <url>        the node (default: http://HOST:PORT, i.e. http://127.0.0.1:9200)
A temporary superuser is written to the file realm of the node's config folder (ES_PATH_CONF, else
CONFIG_DIR, else ./config: the node's CONFIG_DIR) and removed afterwards.`;

/** ES's exit codes (org.elasticsearch.cli.ExitCodes). */
const EXIT = { usage: 64, unavailable: 69, config: 78, failure: 1 } as const;

class Failure extends Error {
  constructor(message: string, readonly code: number) {
    super(message);
  }
}

const args = parseOrExit('reset-password', USAGE, process.argv.slice(2), {
  options: {
    username: { type: 'string', short: 'u' },
    auto: { type: 'boolean', short: 'a' },
    interactive: { type: 'boolean', short: 'i' },
    batch: { type: 'boolean', short: 'b' },
    silent: { type: 'boolean', short: 's' },
    force: { type: 'boolean', short: 'f' },
    url: { type: 'string' },
  },
});
if (args.values.auto && args.values.interactive) {
  process.stderr.write(`reset-password: -a and -i exclude each other\n${USAGE}\n`);
  process.exit(EXIT.usage);
}

const username = str(args, 'username') ?? 'elastic';
const silent = args.values.silent === true;
const interactive = args.values.interactive === true;
const configDir = resolve(process.env.ES_PATH_CONF || process.env.CONFIG_DIR || './config');
const url = (str(args, 'url') ?? defaultUrl()).replace(/\/+$/, '');
/** The node's HTTP CA, as ES's tool trusts the node's own: CONFIG_DIR/certs/http_ca.crt when there is one. */
const caFile = join(configDir, 'certs', 'http_ca.crt');
const ca = url.startsWith('https:') && existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;

function defaultUrl(): string {
  const h = process.env.HOST || '127.0.0.1';
  const host = h === '0.0.0.0' ? '127.0.0.1' : h === '::' ? '[::1]' : h.includes(':') ? `[${h}]` : h;
  // HTTPS when the node's settings turn it on (xpack.security.http.ssl.enabled).
  const tls = sslSetting(readNodeSettings(process.env).settings) === true;
  return `${tls ? 'https' : 'http'}://${host}:${process.env.PORT || 9200}`;
}

/** fetch's shape over node:http(s), so an HTTPS node's own CA can be trusted. */
function send(target: string, o: { method: string; headers: Record<string, string>; body?: string }): Promise<{ status: number; text(): Promise<string> }> {
  return new Promise((res, rej) => {
    const req = (target.startsWith('https:') ? httpsRequest : httpRequest)(target, { method: o.method, headers: o.headers, timeout: 10_000, ...(ca ? { ca } : {}) }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (d: Buffer) => chunks.push(d));
      r.on('end', () => res({ status: r.statusCode ?? 0, text: async () => Buffer.concat(chunks).toString('utf8') }));
      r.on('error', rej);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => rej(Object.assign(new Error(e.message), { cause: e })));
    req.end(o.body);
  });
}

// ---- terminal: prompts on stderr (stdout stays the password alone with -s), hidden input on a TTY

let muted = false;
const echo = new Writable({
  write(chunk, _enc, cb) {
    if (!muted) process.stderr.write(chunk);
    cb();
  },
});
let lines: AsyncIterator<string> | undefined;
async function ask(question: string, hidden = false): Promise<string | undefined> {
  if (!lines) {
    const rl = createInterface({ input: process.stdin, output: echo, terminal: process.stdin.isTTY === true });
    // Ctrl-C at a prompt (nothing written yet).
    rl.on('SIGINT', () => {
      process.stderr.write('\n');
      process.exit(130);
    });
    lines = rl[Symbol.asyncIterator]();
  }
  process.stderr.write(question);
  muted = hidden;
  try {
    const r = await lines.next();
    return r.done ? undefined : r.value;
  } finally {
    muted = false;
    if (hidden && process.stdin.isTTY) process.stderr.write('\n');
  }
}

// ---- HTTP

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

async function call(method: string, path: string, auth?: string, body?: unknown): Promise<{ status: number; json: Record<string, any> }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const res = await send(url + path, {
    method,
    headers: { ...(auth ? { authorization: auth } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let json = {};
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    /* not JSON */
  }
  return { status: res.status, json };
}

async function checkNode(): Promise<void> {
  let r;
  try {
    r = await call('GET', '/');
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new Failure(
      `Failed to determine the health of the cluster running at ${url}: ${cause?.code ?? cause?.message ?? (e as Error).message}\n` +
        'Is the node running? Passwords are kept in the node\'s event log, so they can only be changed through a running node: ' +
        'start it (`npm start`, with the same DATA_DIR and CONFIG_DIR) and run this command again, or pass --url.',
      EXIT.unavailable,
    );
  }
  if (r.status === 200) throw new Failure(`security is not enabled on the node at ${url} (xpack.security.enabled: false): there is no password to reset`, EXIT.config);
  if (r.status !== 401) throw new Failure(`unexpected answer ${r.status} from ${url}: is it this project's node?`, EXIT.unavailable);
}

// ---- the temporary file-realm superuser

const ROLE = 'superuser';
/** Rewrites a realm file line by line; `drop` removes it when nothing is left (a file this tool created). */
async function edit(file: string, change: (lines: string[]) => string[], drop = false): Promise<void> {
  const before = existsSync(file) ? await readFile(file, 'utf8') : '';
  const kept = change(before ? before.replace(/\n$/, '').split('\n') : []);
  if (!kept.length && drop) await rm(file, { force: true });
  else await writeFile(file, kept.length ? kept.join('\n') + '\n' : '', { mode: 0o600 });
}

async function withTemporarySuperuser<T>(run: (auth: string) => Promise<T>): Promise<T> {
  if (!existsSync(configDir)) {
    throw new Failure(`config folder ${configDir} does not exist: run this with the node's CONFIG_DIR (or ES_PATH_CONF)`, EXIT.config);
  }
  const name = `reset_password_${randomBytes(6).toString('hex')}`;
  const secret = randomBytes(24).toString('base64url');
  const userLine = `${name}:${await hashSecret(secret, 'pbkdf2')}`;
  const roleLine = `${ROLE}:${name}`;
  const users = join(configDir, 'users');
  const usersRoles = join(configDir, 'users_roles');
  const created = { users: !existsSync(users), usersRoles: !existsSync(usersRoles) };
  const remove = async () => {
    await edit(users, (ls) => ls.filter((l) => l !== userLine), created.users);
    await edit(usersRoles, (ls) => ls.filter((l) => l !== roleLine), created.usersRoles);
  };
  // Interrupted while the temporary superuser exists: remove it before exiting.
  const onSignal = () => void remove().finally(() => process.exit(130));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(sig, onSignal);
  try {
    // The role first: a reload that sees the user then sees its role too.
    await edit(usersRoles, (ls) => [...ls, roleLine]);
    await edit(users, (ls) => [...ls, userLine]);
    const auth = basic(name, secret);
    // The file realm re-reads its files when their mtime changes (a 1 s poll).
    const end = Date.now() + 15_000;
    for (;;) {
      const r = await call('GET', '/_security/_authenticate', auth);
      if (r.status === 200 && Array.isArray(r.json.roles) && r.json.roles.includes(ROLE)) break;
      if (Date.now() > end) {
        throw new Failure(`the node at ${url} did not accept the temporary file-realm user written to ${configDir}: is that the node's CONFIG_DIR, and is its file realm enabled?`, EXIT.config);
      }
      await new Promise((res) => setTimeout(res, 250));
    }
    return await run(auth);
  } finally {
    await remove();
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(sig, onSignal);
  }
}

// ---- the command

async function newPassword(): Promise<string> {
  if (!interactive) return generatePassword();
  for (let attempt = 0; attempt < 3; attempt++) {
    const a = await ask(`Enter password for [${username}]: `, true);
    const b = a === undefined ? undefined : await ask(`Re-enter password for [${username}]: `, true);
    if (a === undefined || b === undefined) throw new Failure('no password given', EXIT.failure);
    if (a === b) return a;
    process.stderr.write('Passwords do not match.\n');
  }
  throw new Failure('Passwords do not match.', EXIT.failure);
}

async function main(): Promise<void> {
  await checkNode();
  if (args.values.batch !== true) {
    const what = interactive
      ? `This tool will reset the password of the [${username}] user.\nYou will be prompted to enter the password.\n`
      : `This tool will reset the password of the [${username}] user to an autogenerated value.\nThe password will be printed in the console.\n`;
    const yes = await ask(`${what}Please confirm that you would like to continue [y/N] `);
    if (!/^y(es)?$/i.test((yes ?? '').trim())) {
      process.stderr.write('cancelled: the password was not changed\n');
      return;
    }
  }
  const password = await newPassword();
  await withTemporarySuperuser(async (auth) => {
    if (args.values.force !== true) {
      const h = await call('GET', '/_cluster/health', auth);
      if (h.json.status === 'red') throw new Failure(`the cluster health at ${url} is red: run with -f to reset the password anyway`, EXIT.unavailable);
    }
    const r = await call('POST', `/_security/user/${encodeURIComponent(username)}/_password`, auth, { password });
    if (r.status !== 200) {
      const err = r.json.error as { type?: string; reason?: string } | undefined;
      throw new Failure(`Failed to reset password for the [${username}] user: ${err?.type ?? r.status}: ${err?.reason ?? JSON.stringify(r.json)}`, EXIT.failure);
    }
  });
  if (silent) {
    if (!interactive) process.stdout.write(`${password}\n`);
  } else {
    process.stdout.write(`Password for the [${username}] user successfully reset.\n${interactive ? '' : `New value: ${password}\n`}`);
  }
}

main().then(
  () => process.exit(0),
  (e: Error) => {
    process.stderr.write(`ERROR: ${e.message}\n`);
    process.exit(e instanceof Failure ? e.code : EXIT.failure);
  },
);
