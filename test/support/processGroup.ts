import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../..');

/** Env for a child: no inherited NATS_URL/DATA_DIR/CONFIG/PORT/ES_SETTING_* unless given. */
export function cleanEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (!/^(NATS_URL|DATA_DIR|CONFIG|CONFIG_DIR|ES_PATH_CONF|PORT|HOST|ELASTIC_PASSWORD|ES_SETTING_.*)$/.test(k)) base[k] = v;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) base[k] = v;
  return base;
}

/** A command started in its own process group (as a shell starts `npm start`), with its output collected. */
export interface GroupProcess {
  proc: ChildProcess;
  pgid: number;
  out(): string;
  /** Resolves with the exit code of the group leader. */
  exited: Promise<number | null>;
}

export function spawnGroup(cmd: string, args: string[], env: Record<string, string | undefined>): GroupProcess {
  const proc = spawn(cmd, args, { cwd: ROOT, env: cleanEnv(env), detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((res) => proc.once('exit', (code) => res(code)));
  return { proc, pgid: proc.pid!, out: () => out, exited };
}

/** Pids of the processes still in a process group. */
export function groupMembers(pgid: number): number[] {
  const r = spawnSync('ps', ['-eo', 'pid=,pgid=,stat='], { encoding: 'utf8' });
  return r.stdout
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter(([, g, stat]) => Number(g) === pgid && !stat?.startsWith('Z'))
    .map(([p]) => Number(p));
}

/** The process group of a pid, or undefined when it is gone. */
export function pgidOf(pid: number): number | undefined {
  const r = spawnSync('ps', ['-o', 'pgid=', '-p', String(pid)], { encoding: 'utf8' });
  const n = Number(r.stdout.trim());
  return r.status === 0 && n > 0 ? n : undefined;
}

/** A running process (a zombie, killed but not yet reaped, does not count). */
export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  const r = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' });
  return r.status === 0 && !r.stdout.trim().startsWith('Z');
};

/** Waits until no process of the group is left; returns how long that took. */
export async function waitGroupGone(pgid: number, timeoutMs: number): Promise<number> {
  const t0 = Date.now();
  while (groupMembers(pgid).length) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`process group ${pgid} still running after ${timeoutMs} ms: ${groupMembers(pgid).join(' ')}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Date.now() - t0;
}

/** Kills whatever is left of a group (test cleanup). */
export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

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

export async function until<T>(fn: () => Promise<T | undefined> | T | undefined, timeoutMs: number, what: string): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch {
      /* not yet */
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
