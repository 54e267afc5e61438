import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { requestsInFlight } from '../wire/inFlight';
import { createServer as createHttpsServer } from 'node:https';
import { Readable } from 'node:stream';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from 'pino';
import { asEsError, EsError, fromJetStream, HttpBodyError, toErrorBody } from '../wire/esErrors';
import { stringify } from '../wire/json';
import { checkCompatibility, hasContent } from './compatibility';
import { makeRequest, type Route, type Router } from './router';
import { RawJson, type EsRequest, type EsResponse, type SecurityGate } from '../wire/rest';
import { DEFAULT_MAX_CONTENT_LENGTH, readBody, type BodyAccount } from './httpBody';
import type { CircuitBreakerService } from '../wire/circuitBreaker';
import { redactError, redactUri, secretsOf } from './logRedaction';
import { responseShape, serialize, shapeBody, type ResponseShape } from './responseFormat';

export interface EdgeOptions {
  host: string;
  port: number;
  router: Router;
  security?: SecurityGate;
  log: Logger;
  /** http.max_content_length (default 100mb). */
  maxContentLength?: number;
  /** The node's breakers: request bodies are accounted on `inflight_requests` until the response is sent. */
  breakers?: CircuitBreakerService;
  /** HTTPS (actors/tls/httpSsl.ts): PEM key and certificate chain. */
  tls?: { key: string; cert: string; passphrase?: string };
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
  const max = opts.maxContentLength ?? DEFAULT_MAX_CONTENT_LENGTH;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    requestsInFlight.n++;
    handle(req, res, opts, max)
      .catch((e: unknown) => {
        // last resort: a failure while answering must never become an unhandled rejection
        opts.log.error({ err: redactError(e, secretsOf(req.url ?? '/')), uri: redactUri(req.url ?? '/') }, 'response failed');
        res.destroy();
      })
      .finally(() => requestsInFlight.n--);
  };
  const server: Server = opts.tls ? createHttpsServer({ key: opts.tls.key, cert: opts.tls.cert, passphrase: opts.tls.passphrase }, onRequest) : createServer(onRequest);
  server.keepAliveTimeout = 60_000;
  if (opts.tls) {
    // Plain HTTP (or anything else) on the HTTPS port never reaches the API: the handshake fails and
    // the connection is closed, as ES does.
    server.on('tlsClientError', (err: Error & { code?: string }) => {
      if (/wrong version number|http request|unknown protocol/i.test(err.message)) opts.log.warn('received plaintext http traffic on an https channel, closing connection');
      else opts.log.debug({ err: err.message }, 'TLS handshake failed');
    });
  }
  // Node's own parser errors (431, bad method, malformed framing) get ES-shaped bodies too.
  // An `Expect` other than 100-continue: Node answers 417 with an empty body; here ES's error shape.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const e = new EsError('illegal_argument_exception', 417, `unsupported expectation [${String(req.headers.expect ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 100)}]`);
    send(res, req.method ?? 'GET', 417, toErrorBody(e), { connection: 'close' }, 'application/json', undefined);
  });
  // Node takes any Expect holding the token `100-continue` for one (`100-continue, x`); ES (Netty)
  // only the exact value, and answers anything else 417.
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (String(req.headers.expect ?? '').trim().toLowerCase() !== '100-continue') {
      server.emit('checkExpectation', req, res);
      return;
    }
    res.writeContinue();
    onRequest(req, res);
  });
  server.on('clientError', (err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket) => answerClientError(err, socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${host}:${port}`,
    port,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Actions whose REST handlers ES never lets the in-flight breaker trip (`canTripCircuitBreaker()`
 * false: main, health, cluster settings update, node stats, allocation explain), so a node whose
 * breakers trip can still be looked at and its limits changed. Their bytes are still counted.
 */
const NEVER_TRIP = new Set(['cluster:monitor/main', 'cluster:monitor/health', 'cluster:admin/settings/update', 'cluster:monitor/nodes/stats', 'cluster:monitor/allocation/explain']);

/** ES's label of HTTP bodies on the in-flight requests breaker. */
const HTTP_REQUEST = '<http_request>';

/** The in-flight account of one request, given back when its response is done (sent or abandoned). */
function inflightAccount(opts: EdgeOptions, route: Route, res: ServerResponse): BodyAccount | undefined {
  if (!opts.breakers) return undefined;
  const acct = opts.breakers.account('inflight_requests');
  const breaker = opts.breakers.breaker('inflight_requests');
  res.once('close', () => acct.close());
  const action = route.authz.kind === 'cluster' || route.authz.kind === 'indices' ? route.authz.action : '';
  if (!NEVER_TRIP.has(action)) return { reserve: (n) => acct.reserve(n, HTTP_REQUEST) };
  let held = 0;
  res.once('close', () => breaker.addWithoutBreaking(-held));
  return {
    reserve: (n) => {
      breaker.addWithoutBreaking(n);
      held += n;
    },
  };
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
  let esReq: EsRequest | undefined;
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
    // Credentials first, from the headers alone (ES authenticates a request's headers before it
    // reads the body): a caller without them never gets a body read, let alone a gzip bomb inflated.
    let auth: EsRequest['auth'];
    if (opts.security && !route.anonymous) {
      // Awaited only when they are promises: a warm authentication is a value, and every needless
      // await is a trip through the microtask queue on each request.
      const who = opts.security.authenticate(makeRequest({ method, path, uri, params: m.params, query, headers: req.headers, body: undefined }), route.authz);
      auth = who instanceof Promise ? await who : who;
    }
    let body = await readBody(req, max, inflightAccount(opts, route, res));
    if (!body && query.source) body = Buffer.from(query.source); // ES's `source=` body-in-URL form
    esReq = makeRequest({ method, path, uri, params: m.params, query, headers: req.headers, body });
    if (opts.security && !route.anonymous) {
      esReq.auth = auth;
      const a = route.authz;
      const ok = a.kind === 'cluster' ? opts.security.authorize(esReq.auth, a.action) : a.kind === 'indices' ? opts.security.authorize(esReq.auth, a.action, a.indices(esReq)) : undefined;
      if (ok instanceof Promise) await ok;
    }
    const out = await route.handler(esReq);
    send(res, method, out.status ?? 200, out.body, out.headers, compat, responseShape(query, route.pattern));
  } catch (e) {
    if (e instanceof HttpBodyError) {
      // a plain-string error (no handler, wrong method) is never reshaped; a body like DELETE _pit's 404 is
      const b = e.body as { error?: unknown } | undefined;
      send(res, method, e.status, e.body, e.headers, compat, typeof b?.error === 'string' ? undefined : responseShape(query, route?.pattern));
      return;
    }
    // the client went away mid-request: nobody to answer, nothing went wrong here
    if ((e as NodeJS.ErrnoException).code === 'ECONNRESET' && req.destroyed) return;
    const err = natsUnavailable(e) ?? fromJetStream(e) ?? asEsError(e);
    if (!(e instanceof EsError) || err.status >= 500) {
      // never a raw scroll/PIT id or credential in a log line (issue 10 item 8)
      const secrets = [...secretsOf(uri), ...bodySecrets(esReq)].sort((a, b) => b.length - a.length);
      opts.log.error({ err: redactError(e, secrets), method, uri: redactUri(uri), route: route?.pattern }, 'request failed');
    }
    const headers: Record<string, string | string[]> = {};
    for (const [k, v] of Object.entries(err.extra.header ?? {})) headers[k] = v;
    // a body left unread (413, or a 429 of the in-flight breaker) must not be parsed as the next request
    if (err.status === 413 || !req.complete) headers.connection = 'close';
    send(res, method, err.status, toErrorBody(err), headers, compat, responseShape(query, route?.pattern), e instanceof Error ? e.stack ?? String(e) : String(e));
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
  shape: ResponseShape | undefined,
  /** An error's stack trace (`error_trace=true`); set only for error bodies, which filters never touch. */
  stack?: string,
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
  const ct = headers?.['content-type'];
  if (shape && body !== undefined && method !== 'HEAD' && (ct === undefined || String(ct).includes('json'))) {
    payload = Buffer.from(serialize(shapeBody(body, shape, stack !== undefined, stack), shape.pretty));
  } else if (body instanceof RawJson && body.chunks.length > 1 && method !== 'HEAD') {
    return sendChunks(res, status, body.chunks, headers, contentType);
  } else if (body instanceof RawJson) {
    const c = body.chunks;
    if (c.length > 1 && method !== 'HEAD' && c.every((x) => typeof x !== 'string')) {
      // a large body built in slices (a big bulk's items): written piece by piece, never copied into one
      const parts = c as Buffer[];
      res.writeHead(status, { ...PRODUCT, 'content-type': contentType, 'content-length': parts.reduce((a, b) => a + b.length, 0), ...(headers ?? {}) });
      for (const b of parts) res.write(b);
      res.end();
      return;
    }
    payload = c.length === 1 && typeof c[0] !== 'string' ? c[0] : Buffer.concat(c.map((x) => (typeof x === 'string' ? Buffer.from(x) : x)));
  } else if (body !== undefined) {
    payload = Buffer.from(stringify(body));
  }
  res.writeHead(status, {
    ...PRODUCT,
    'content-type': contentType,
    'content-length': payload ? payload.length : 0,
    ...(headers ?? {}),
  });
  res.end(method === 'HEAD' ? undefined : payload);
}

/**
 * A body in several chunks (a search response whose hits are byte ranges of the shards' pages):
 * written as they are, corked, so the headers and every chunk leave in one `writev` (no copy into
 * one buffer first).
 */
function sendChunks(res: ServerResponse, status: number, chunks: Array<Buffer | string>, headers: Record<string, string | string[]> | undefined, contentType: string): void {
  const bufs = chunks.map((x) => (typeof x === 'string' ? Buffer.from(x) : x));
  let length = 0;
  for (const b of bufs) length += b.length;
  res.writeHead(status, { ...PRODUCT, 'content-type': contentType, 'content-length': length, ...(headers ?? {}) });
  res.cork();
  for (const b of bufs) res.write(b);
  res.end(); // uncorks: one writev
}

/** Ids a request body may carry (`scroll_id`, PIT `id`), so that an error echoing one is scrubbed. */
function bodySecrets(req: EsRequest | undefined): string[] {
  if (!req?.body || req.body.length > 1024 * 1024) return [];
  try {
    const b = req.json<Record<string, unknown>>();
    if (!b || typeof b !== 'object') return [];
    const pit = b.pit as { id?: unknown } | undefined;
    const ids = [b.scroll_id, b.id, pit?.id].flat();
    return ids.filter((x): x is string => typeof x === 'string' && x.length >= 4);
  } catch {
    return [];
  }
}

/** Node's HTTP parser errors in ES's shape (ES answers Netty decoder failures with 400). */
function answerClientError(err: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Socket): void {
  // as Node's own handler: nothing can be written while another response is under way on the socket
  const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === 'ECONNRESET' || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  let e: EsError;
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      e = new EsError('too_long_http_header_exception', 400, 'HTTP header is larger than 16384 bytes.');
      break;
    case 'HPE_INVALID_METHOD': {
      const method = (err.rawPacket?.toString('latin1') ?? '').split(/[\s/]/, 1)[0].replace(/[^\x21-\x7e]/g, '?').slice(0, 64);
      e = new EsError('illegal_argument_exception', 400, `Unexpected http method: ${method}`);
      break;
    }
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      e = new EsError('timeout_exception', 408, 'request timed out before it was received completely');
      break;
    default:
      e = new EsError('illegal_argument_exception', 400, `invalid HTTP request: ${err.message.replace(/[^\x20-\x7e]/g, '?')}`);
  }
  const body = Buffer.from(stringify(toErrorBody(e)));
  const reason = e.status === 408 ? 'Request Timeout' : 'Bad Request';
  socket.end(
    `HTTP/1.1 ${e.status} ${reason}\r\nx-elastic-product: Elasticsearch\r\ncontent-type: application/json\r\n` +
      `content-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`,
  );
}

/** Errors of the NATS client itself (a request or a JetStream append that got no answer, a closed connection). */
const NATS_ERRORS = new Set(['TimeoutError', 'ConnectionError', 'ClosedConnectionError', 'DrainingConnectionError', 'RequestError', 'NoResponders', 'NatsUnavailable', 'AppendUncertain']);

/**
 * The node lost its NATS connection (or JetStream did not answer): ES's 503 for a node cut off from
 * its cluster (the no-master block), instead of a 500 `exception`.
 */
function natsUnavailable(e: unknown): EsError | undefined {
  if (!(e instanceof Error) || e instanceof EsError) return undefined;
  const names = [e.name, (e.cause as Error | undefined)?.name];
  if (!names.some((n) => n !== undefined && NATS_ERRORS.has(n))) return undefined;
  return new EsError('cluster_block_exception', 503, 'blocked by: [SERVICE_UNAVAILABLE/2/no master];');
}
