import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import pino from 'pino';
import { Bus, ensureStreams } from '../../streams';
import { Settings } from '../../actors/config';
import { startEdge, type Edge } from '../../actors/edge/httpEdge';
import { Router } from '../../actors/edge/router';
import type { NodeContext } from '../../actors/nodeContext';
import { startSecurity, type SecurityModuleWithServices } from '../../actors/security';
import { startNats, type TestNats } from './natsServer';

export const ELASTIC_PASSWORD = 'changeme-test-1';

export interface SecurityHarnessOptions {
  /** Node settings (flat ES keys); `bootstrap.password` defaults to {@link ELASTIC_PASSWORD}. */
  settings?: Record<string, unknown>;
  /** Shares another harness's nats-server (a second node on the same event log). */
  nats?: TestNats;
  /** Config dir (service_tokens, users, JWK sets); a temp dir by default. */
  configDir?: string;
  nodeName?: string;
}

export interface SecurityHarness {
  url: string;
  nats: TestNats;
  nc: NatsConnection;
  configDir: string;
  security: SecurityModuleWithServices;
  /** Moves the credential clock forward (token expiry, refresh window). */
  advance(ms: number): void;
  /**
   * Stops security and the edge, then starts them again on the same stream (a node restart);
   * `between` runs while the node is down (e.g. to swap files in its data dir).
   */
  restart(between?: () => Promise<void> | void): Promise<void>;
  /** The node's data dir (checkpoints). */
  dataDir: string;
  stop(): Promise<void>;
  /** What the node printed instead of stdout (the generated elastic password banner). */
  printed: string[];
}

/**
 * Security module + HTTP edge on 127.0.0.1:0 over a real nats-server, with two dummy routes for
 * authorization checks: `GET|POST /_test/{index}/_search` (indices:data/read/search on the path's
 * indices) and `GET /_test/_nodes/stats` (cluster:monitor/nodes/stats).
 */
export async function startSecurityHarness(opts: SecurityHarnessOptions = {}): Promise<SecurityHarness> {
  const nats = opts.nats ?? (await startNats());
  const ownNats = !opts.nats;
  const tmp = await mkdtemp(join(tmpdir(), 'sec-'));
  const configDir = opts.configDir ?? tmp;
  let offset = 0;
  const now = () => Date.now() + offset;
  const printed: string[] = [];
  const settings = new Settings({ 'bootstrap.password': ELASTIC_PASSWORD, ...(opts.settings ?? {}) });
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

  let nc!: NatsConnection;
  let edge!: Edge;
  let security!: SecurityModuleWithServices;
  const h = { nats, configDir, printed } as SecurityHarness;

  const boot = async () => {
    nc = await nats.connect();
    await ensureStreams(nc);
    const router = new Router();
    const ctx: NodeContext = {
      nc,
      bus: new Bus(nc),
      log,
      settings,
      router,
      node: { id: `node-${Math.random().toString(36).slice(2)}`, name: opts.nodeName ?? 'node0', clusterName: 'test', clusterUuid: 'cu', host: '127.0.0.1' },
      dataDir: tmp,
      configDir,
    };
    security = await startSecurity(ctx, { now, print: (t) => printed.push(t) });
    router.add(
      ['GET', 'POST'],
      '/_test/{index}/_search',
      (req) => ({ body: { indices: security.allowedIndices(req.auth, 'indices:data/read/search', req.params.index.split(',')) } }),
      { kind: 'indices', action: 'indices:data/read/search', indices: (req) => req.params.index.split(',') },
    );
    router.add('GET', '/_test/_nodes/stats', () => ({ body: { ok: true } }), { kind: 'cluster', action: 'cluster:monitor/nodes/stats' });
    edge = await startEdge({ host: '127.0.0.1', port: 0, router, security: security.enabled ? security.gate : undefined, log });
    Object.assign(h, { url: edge.url, nc, security });
  };
  const shutdown = async () => {
    await edge.close();
    await security.stop();
    await nc.drain().catch(() => nc.close());
  };
  try {
    await boot();
  } catch (e) {
    await nc?.close();
    if (ownNats) await nats.stop();
    await rm(tmp, { recursive: true, force: true });
    throw e;
  }
  h.advance = (ms) => {
    offset += ms;
  };
  h.restart = async (between) => {
    await shutdown();
    await between?.();
    await boot();
  };
  h.dataDir = tmp;
  h.stop = async () => {
    await shutdown();
    if (ownNats) await nats.stop();
    await rm(tmp, { recursive: true, force: true });
  };
  return h;
}

/** `Authorization: Basic …` for a user. */
export const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

/** A raw HTTP call (status, headers and parsed body) for checks the official client hides. */
export async function call(
  url: string,
  method: string,
  path: string,
  opts: { auth?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: {
      ...(opts.auth ? { authorization: opts.auth } : {}),
      ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(opts.headers ?? {}),
    },
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}
