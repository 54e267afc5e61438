import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { gunzipSync, inflateSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { asEsError, EsError, HttpBodyError, toErrorBody } from '../wire/esErrors';
import { stringify } from '../wire/json';
import { checkCompatibility, hasContent } from './compatibility';
import { makeRequest, RawJson, type EsRequest, type EsResponse, type Route, type Router } from './router';

/** The security gate the edge consults (actors/security implements it). */
export interface SecurityGate {
  /** Who is calling (a value when known at once, else a promise of it), or throws a 401 EsError. */
  authenticate(req: EsRequest): unknown | Promise<unknown>;
  /** Throws a 403 EsError when `auth` may not run `action` (on `indices`). */
  authorize(auth: unknown, action: string, indices?: string[]): void | Promise<void>;
}

export interface EdgeOptions {
  host: string;
  port: number;
  router: Router;
  security?: SecurityGate;
  log: Logger;
  /** http.max_content_length (default 100mb). */
  maxContentLength?: number;
}

export interface Edge {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

const PRODUCT = { 'x-elastic-product': 'Elasticsearch' };

/**
 * The HTTP edge actor: REST in, message flows out, REST back. Plain node:http (≈50k req/s here);
 * every response carries X-elastic-product, which the official clients require.
 */
export async function startEdge(opts: EdgeOptions): Promise<Edge> {
  const max = opts.maxContentLength ?? 100 * 1024 * 1024;
  const server = createServer({ keepAliveTimeout: 60_000 }, (req, res) => {
    void handle(req, res, opts, max);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `http://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage, max: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) throw new HttpBodyError(413, { error: 'Request Entity Too Large', status: 413 });
    chunks.push(c as Buffer);
  }
  if (!chunks.length) return undefined;
  let body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const enc = req.headers['content-encoding'];
  if (enc === 'gzip') body = gunzipSync(body);
  else if (enc === 'deflate') body = inflateSync(body);
  return body;
}

function parseQuery(search: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (!search) return out;
  for (const [k, v] of new URLSearchParams(search)) out[k] = v;
  return out;
}

async function handle(req: IncomingMessage, res: ServerResponse, opts: EdgeOptions, max: number): Promise<void> {
  const method = req.method ?? 'GET';
  const uri = req.url ?? '/';
  const q = uri.indexOf('?');
  const path = q < 0 ? uri : uri.slice(0, q);
  const query = parseQuery(q < 0 ? '' : uri.slice(q + 1));
  const compat = compatibleType(req.headers);
  let route: Route | undefined;
  try {
    checkCompatibility(req.headers, hasContent(req.headers)); // before routing, as ES
    const m = opts.router.match(method, path);
    if (m.kind === 'none') {
      throw new HttpBodyError(400, { error: `no handler found for uri [${uri}] and method [${method}]`, status: 400 });
    }
    if (m.kind === 'method') {
      throw new HttpBodyError(
        405,
        { error: `Incorrect HTTP method for uri [${uri}] and method [${method}], allowed: [${m.allowed.join(', ')}]`, status: 405 },
        { allow: m.allowed.join(',') },
      );
    }
    route = m.route;
    let body = await readBody(req, max);
    if (!body && query.source) body = Buffer.from(query.source); // ES's `source=` body-in-URL form
    const esReq = makeRequest({ method, path, uri, params: m.params, query, headers: req.headers, body });
    if (opts.security && !route.anonymous) {
      // Awaited only when they are promises: a warm authentication is a value, and every needless
      // await is a trip through the microtask queue on each request.
      const who = opts.security.authenticate(esReq);
      esReq.auth = who instanceof Promise ? await who : who;
      const a = route.authz;
      const ok = a.kind === 'cluster' ? opts.security.authorize(esReq.auth, a.action) : a.kind === 'indices' ? opts.security.authorize(esReq.auth, a.action, a.indices(esReq)) : undefined;
      if (ok instanceof Promise) await ok;
    }
    const out = await route.handler(esReq);
    send(res, method, out.status ?? 200, out.body, out.headers, compat, query.pretty !== undefined);
  } catch (e) {
    if (e instanceof HttpBodyError) {
      send(res, method, e.status, e.body, e.headers, compat, false);
      return;
    }
    const err = asEsError(e);
    if (!(e instanceof EsError) || err.status >= 500) {
      opts.log.error({ err: e, method, path, route: route?.pattern }, 'request failed');
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(err.extra.header ?? {})) headers[k] = v;
    send(res, method, err.status, toErrorBody(err), headers, compat, query.pretty !== undefined);
  }
}

function compatibleType(h: IncomingMessage['headers']): string {
  const accept = String(h.accept ?? h['content-type'] ?? '');
  const m = /compatible-with=(\d+)/.exec(accept);
  return m ? `application/vnd.elasticsearch+json;compatible-with=${m[1]}` : 'application/json';
}

function send(
  res: ServerResponse,
  method: string,
  status: number,
  body: unknown,
  headers: Record<string, string | string[]> | undefined,
  contentType: string,
  pretty: boolean,
): void {
  if (res.headersSent) return;
  if (body instanceof Readable) {
    // A streamed body (the console's server-sent events): written as it comes, ended by either side.
    res.writeHead(status, { ...PRODUCT, 'content-type': contentType, ...(headers ?? {}) });
    res.on('close', () => body.destroy());
    body.on('error', () => res.destroy());
    if (method === 'HEAD') res.end();
    else body.pipe(res);
    return;
  }
  let payload: Buffer | undefined;
  if (body instanceof RawJson) {
    payload = Buffer.concat(body.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c)));
    if (pretty) payload = Buffer.from(JSON.stringify(JSON.parse(payload.toString()), null, 2));
  } else if (body !== undefined) {
    payload = Buffer.from(pretty ? JSON.stringify(JSON.parse(stringify(body)), null, 2) : stringify(body));
  }
  res.writeHead(status, {
    ...PRODUCT,
    'content-type': contentType,
    'content-length': payload ? payload.length : 0,
    ...(headers ?? {}),
  });
  res.end(method === 'HEAD' ? undefined : payload);
}
