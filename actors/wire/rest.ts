import type { IncomingHttpHeaders } from 'node:http';
import type { Authentication } from './security';
import { illegalArgument } from './esErrors';

/**
 * The REST shapes every room shares: what a handler sees of a request, what it answers, and the
 * route table it registers on (actors/edge/router.ts implements it). The ground floor, so
 * security, search and the node context can speak of requests without importing the edge.
 */

/** What a route handler sees of a REST request. */
export interface EsRequest {
  readonly method: string;
  /** Decoded path without the query string. */
  readonly path: string;
  /** Path and query string as received (for error messages: `for REST request [<uri>]`). */
  readonly uri: string;
  /** Path parameters from the route pattern (`{index}` -> params.index), URL-decoded. */
  readonly params: Record<string, string>;
  /** Query-string parameters (last value wins, as ES). */
  readonly query: Record<string, string>;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer | undefined;
  /** Parsed JSON body (lossless longs); undefined when there is no body. Throws ES's parse error. */
  json<T = unknown>(): T | undefined;
  /** Who is calling; set by the security gate (undefined when security is disabled). */
  auth?: Authentication;
  /** X-Opaque-Id header, used as correlationId of lifecycle facts. */
  readonly opaqueId?: string;
}

/** A pre-serialized JSON body: chunks are written as they are (spliced `_source` bytes). */
export class RawJson {
  constructor(readonly chunks: Array<Buffer | string>) {}
}

export interface EsResponse {
  status?: number;
  /** A JSON value (serialized losslessly), a RawJson, or undefined (no body, e.g. HEAD). */
  body?: unknown;
  headers?: Record<string, string | string[]>;
}

export type Handler = (req: EsRequest) => Promise<EsResponse> | EsResponse;

/**
 * How the security gate authorizes a route before its handler runs (ES action names, e.g.
 * `indices:data/read/search`, `cluster:monitor/nodes/stats`). `none`: any authenticated caller;
 * `handler`: the handler authorizes itself (PIT search, scroll, security APIs with owner rules).
 */
export type Authz =
  | { kind: 'none' }
  | { kind: 'cluster'; action: string }
  | { kind: 'indices'; action: string; indices: (req: EsRequest) => string[] }
  | { kind: 'handler' };

/** Where route modules register their handlers (the edge's Router). */
export interface Routes {
  add(methods: string | string[], pattern: string, handler: Handler, authz?: Authz): this;
}

/** The security gate the edge consults (actors/security implements it). */
export interface SecurityGate {
  /**
   * Who is calling (a value when known at once, else a promise of it; undefined with security off),
   * or throws a 401 EsError (a 403 for a refused run-as; `authz` names the route's action for it).
   */
  authenticate(req: EsRequest, authz?: Authz): Authentication | undefined | Promise<Authentication | undefined>;
  /** Throws a 403 EsError when `auth` may not run `action` (on `indices`). */
  authorize(auth: Authentication | undefined, action: string, indices?: string[]): void | Promise<void>;
}

/** A boolean URL parameter as ES's Booleans.parseBoolean reads it (`''` is true; anything else but true/false is a 400). */
export function parseBool(v: string | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw illegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`);
}
