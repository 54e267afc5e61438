import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import bcrypt from 'bcryptjs';

/**
 * bcrypt (`$2a$`/`$2b$`/`$2y$`) hashing and verification off the event loop. bcryptjs is pure
 * JavaScript (≈60 ms per verification at cost 10): one unref'd worker thread runs it, so a login
 * never stalls other requests. Should the worker fail to start, bcryptjs's async API (which yields to
 * the event loop between rounds) is used instead.
 */

/** ES Hasher.isBcryptPrefix: `$2<minor>$` with minor a, b or y; then `<cost>$` and 53 characters. */
export const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;

type Msg = { op: 'hash'; secret: string; cost: number } | { op: 'compare'; secret: string; hash: string };

interface Job {
  msg: Msg;
  resolve(v: string | boolean): void;
  reject(e: Error): void;
}

// The worker is evaluated as CommonJS; it loads bcryptjs by absolute path (no TypeScript involved).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const bcrypt = require(workerData.bcryptPath);
parentPort.on('message', (m) => {
  try {
    const result = m.op === 'hash' ? bcrypt.hashSync(m.secret, bcrypt.genSaltSync(m.cost)) : bcrypt.compareSync(m.secret, m.hash);
    parentPort.postMessage({ id: m.id, result });
  } catch (e) {
    parentPort.postMessage({ id: m.id, error: String(e && e.message || e) });
  }
});
`;

let worker: Worker | undefined;
let workerBroken = false;
let nextId = 0;
const pending = new Map<number, Job>();

/** Where bcryptjs lives, for the worker (CommonJS under jest, ESM under tsx: no `require` there). */
function bcryptPath(): string {
  try {
    return typeof require === 'function' ? require.resolve('bcryptjs') : createRequire(join(process.cwd(), 'package.json')).resolve('bcryptjs');
  } catch {
    return 'bcryptjs';
  }
}

/** The worker is gone: its jobs run on the in-process fallback instead of failing. */
function workerLost() {
  worker = undefined;
  workerBroken = true;
  const jobs = [...pending.values()];
  pending.clear();
  for (const job of jobs) fallback(job.msg).then(job.resolve, job.reject);
}

function fallback(msg: Msg): Promise<string | boolean> {
  return msg.op === 'hash' ? bcrypt.hash(msg.secret, msg.cost) : bcrypt.compare(msg.secret, msg.hash);
}

function getWorker(): Worker | undefined {
  if (worker || workerBroken) return worker;
  try {
    const w = new Worker(WORKER_SOURCE, { eval: true, workerData: { bcryptPath: bcryptPath() } });
    w.unref();
    w.on('message', (m: { id: number; result?: string | boolean; error?: string }) => {
      const job = pending.get(m.id);
      if (!job) return;
      pending.delete(m.id);
      if (m.error !== undefined) job.reject(new Error(m.error));
      else job.resolve(m.result!);
    });
    w.on('error', workerLost);
    w.on('exit', () => {
      if (worker === w) workerLost();
    });
    worker = w;
  } catch {
    workerBroken = true;
  }
  return worker;
}

function run(msg: Msg): Promise<string | boolean> {
  const w = getWorker();
  if (!w) return fallback(msg);
  const id = ++nextId;
  return new Promise<string | boolean>((resolve, reject) => {
    pending.set(id, { msg, resolve, reject });
    // A job keeps the worker referenced (the process waits for it); an idle worker does not.
    w.ref();
    w.postMessage({ id, ...msg });
  }).finally(() => {
    if (!pending.size) worker?.unref();
  });
}

/** A bcrypt hash of `secret` with ES's `$2a$` prefix (the same algorithm bcryptjs writes as `$2b$`). */
export async function bcryptHash(secret: string, cost: number): Promise<string> {
  const h = (await run({ op: 'hash', secret, cost })) as string;
  return `$2a$${h.slice(4)}`;
}

/** Verifies a `$2a$`/`$2b$`/`$2y$` hash (false for anything malformed). */
export async function bcryptVerify(secret: string, hash: string): Promise<boolean> {
  if (!BCRYPT_HASH.test(hash)) return false;
  // bcryptjs reads the three minors alike; normalise so no version quirk can make a valid hash fail.
  return (await run({ op: 'compare', secret, hash: `$2b$${hash.slice(4)}` })) as boolean;
}

/** Stops the worker (tests; the process exits without it since the worker is unref'd). */
export async function stopBcryptWorker(): Promise<void> {
  const w = worker;
  worker = undefined;
  if (w) await w.terminate();
}

/** Whether bcrypt work runs on the worker thread (false: the in-process fallback). */
export const bcryptOnWorker = (): boolean => !!worker && !workerBroken;
