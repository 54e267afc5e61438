/**
 * Elasticsearch-shaped errors, mapped to REST bodies in one place.
 * A leaf module: engine, shard, contexts and security all throw these.
 */
export interface EsErrorExtra {
  /** Response headers echoed into the body's `header` (e.g. WWW-Authenticate). One value -> string. */
  header?: Record<string, string[]>;
  /** root_cause entries; defaults to [this]. */
  causes?: EsError[];
  /** caused_by chain. */
  causedBy?: EsError;
  /** Metadata printed beside `reason` (ES `es.*` metadata, e.g. `resource.type`, `line`, `col`). */
  meta?: Record<string, unknown>;
}

export class EsError extends Error {
  constructor(
    /** ES exception class, underscore-cased. */
    readonly type: string,
    readonly status: number,
    reason: string,
    readonly extra: EsErrorExtra = {},
  ) {
    super(reason);
    this.name = 'EsError';
  }
}

/** A body sent as-is with a status (plain-string 400/405 route errors, OAuth2 token errors, 404 clear bodies). */
export class HttpBodyError extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string | string[]> = {}) {
    super(`HTTP ${status}`);
    this.name = 'HttpBodyError';
  }
}

type ErrorObject = Record<string, unknown>;

function headerBody(h: Record<string, string[]>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(h)) out[k] = v.length === 1 ? v[0] : v;
  return out;
}

function short(e: EsError): ErrorObject {
  return {
    type: e.type,
    reason: e.message,
    ...(e.extra.meta ?? {}),
    ...(e.extra.header ? { header: headerBody(e.extra.header) } : {}),
  };
}

function full(e: EsError): ErrorObject {
  return { ...short(e), ...(e.extra.causedBy ? { caused_by: full(e.extra.causedBy) } : {}) };
}

/** `{error:{root_cause,type,reason,...},status}` */
export function toErrorBody(e: EsError): { error: ErrorObject; status: number } {
  const rootCause = (e.extra.causes ?? [e]).map(short);
  const { type, reason, ...rest } = full(e);
  return { error: { root_cause: rootCause, type, reason, ...rest }, status: e.status };
}

// ---- common constructors (ES reason wording) ----

export const illegalArgument = (reason: string, extra?: EsErrorExtra) => new EsError('illegal_argument_exception', 400, reason, extra);

export const parsingException = (reason: string, line?: number, col?: number) =>
  new EsError('parsing_exception', 400, reason, line !== undefined ? { meta: { line, col } } : {});

/** `Validation Failed: 1: a;2: b;` */
export const validationFailed = (messages: string[]) =>
  new EsError('action_request_validation_exception', 400, `Validation Failed: ${messages.map((m, i) => `${i + 1}: ${m};`).join('')}`);

export const indexNotFound = (index: string) =>
  new EsError('index_not_found_exception', 404, `no such index [${index}]`, {
    meta: { 'resource.type': 'index_or_alias', 'resource.id': index, index_uuid: '_na_', index },
  });

/** A write with `require_alias=true` to a name that is no alias (IndexNotFoundException(message, index)). */
export const requireAliasMissing = (index: string) =>
  new EsError('index_not_found_exception', 404, `no such index [${index}] and [require_alias] request flag is [true] and [${index}] is not an alias`, {
    meta: { 'resource.type': 'index_or_alias', 'resource.id': index, index_uuid: '_na_', index },
  });

/** IndexRequest.validate: an `_id` longer than 512 UTF-8 bytes (null when it is fine). */
export function idTooLong(id: string | undefined): string | null {
  if (id === undefined) return null;
  const bytes = Buffer.byteLength(id, 'utf8');
  return bytes > 512 ? `id [${id}] is too long, must be no longer than 512 bytes but was: ${bytes}` : null;
}

export const searchContextMissing = (id: string | number, why?: string) =>
  new EsError('search_context_missing_exception', 404, `No search context found for id [${id}]${why ? ` (${why})` : ''}`);

export const parseException = (reason: string) => new EsError('parse_exception', 400, reason);

/** Wraps shard failures as ES does when every shard failed. Status: any >= 500 wins, else the first. */
export function allShardsFailed(failures: EsError[], phase = 'query', failedShards: ErrorObject[] = []): EsError {
  const status = failures.find((f) => f.status >= 500)?.status ?? failures[0]?.status ?? 500;
  return new EsError('search_phase_execution_exception', status, 'all shards failed', {
    causes: dedupeCauses(failures),
    causedBy: failures[0],
    meta: { phase, grouped: true, failed_shards: failedShards },
  });
}

function dedupeCauses(fs: EsError[]): EsError[] {
  const seen = new Set<string>();
  return fs.filter((f) => {
    const k = `${f.type}\u0000${f.message}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

/** Anything unexpected becomes a 500 `exception` (logged by the edge). */
export function asEsError(e: unknown): EsError {
  if (e instanceof EsError) return e;
  return new EsError('exception', 500, e instanceof Error ? e.message : String(e));
}

/** Plain JSON body of an EsError, for replies that travel over NATS. */
export interface EsErrorBody {
  type: string;
  status: number;
  reason: string;
  extra?: EsErrorExtra;
}
export const errorToWire = (e: EsError): EsErrorBody => ({
  type: e.type,
  status: e.status,
  reason: e.message,
  extra: serializeExtra(e.extra),
});
function serializeExtra(x: EsErrorExtra): EsErrorExtra | undefined {
  if (!x.header && !x.causes && !x.causedBy && !x.meta) return undefined;
  return x.causes || x.causedBy
    ? ({ ...x, causes: x.causes?.map(errorToWire), causedBy: x.causedBy && errorToWire(x.causedBy) } as unknown as EsErrorExtra)
    : x;
}
export const errorFromWire = (b: EsErrorBody): EsError => {
  const x = (b.extra ?? {}) as EsErrorExtra & { causes?: EsErrorBody[]; causedBy?: EsErrorBody };
  return new EsError(b.type, b.status, b.reason, {
    ...x,
    causes: x.causes?.map((c) => errorFromWire(c as unknown as EsErrorBody)),
    causedBy: x.causedBy && errorFromWire(x.causedBy as unknown as EsErrorBody),
  });
};

// ---- a full store (flood stage) and JetStream's own refusals ----

/** ES's flood-stage block (IndexMetadata.INDEX_READ_ONLY_ALLOW_DELETE_BLOCK), as ClusterBlockException prints it. */
export const FLOOD_STAGE_BLOCK = 'TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block';

/**
 * ES's 429 `cluster_block_exception` for writes to indices under the flood-stage block:
 * `index [a] blocked by: [TOO_MANY_REQUESTS/12/…];` per index, or the global form without indices.
 */
export function floodStageBlocked(indices: string[]): EsError {
  const reason = indices.length ? indices.map((i) => `index [${i}] blocked by: [${FLOOD_STAGE_BLOCK}];`).join('') : `blocked by: [${FLOOD_STAGE_BLOCK}];`;
  return new EsError('cluster_block_exception', 429, reason);
}

/** JetStream's API error code of `e` (a `JetStreamApiError` of the NATS client), matched by shape. */
export function jetStreamApiCode(e: unknown): number | undefined {
  const err = e as { name?: unknown; code?: unknown } | undefined;
  return err?.name === 'JetStreamApiError' && typeof err.code === 'number' ? err.code : undefined;
}

/** The store refused the append for lack of room (server, account or stream limits). */
export function isJetStreamFull(e: unknown): boolean {
  const code = jetStreamApiCode(e);
  if (code === 10002 /* account resource limits */ || code === 10023 /* insufficient resources */) return true;
  // 10077 (stream store failed) carries the store's reason: a limit reached, or something else
  return code === 10077 && /maximum (bytes|messages)|insufficient|resource/i.test((e as Error).message);
}

/**
 * What a JetStream refusal means to a client, as ES would say it: no room left is the flood-stage
 * 429 (naming `indices` when the append was for them), a message over the stream's size 413,
 * anything else from the store a 503 (never a 500: the store, not the request, failed).
 * Undefined when `e` is not a JetStream API error.
 */
export function fromJetStream(e: unknown, indices: string[] = []): EsError | undefined {
  const code = jetStreamApiCode(e);
  if (code === undefined) return undefined;
  if (isJetStreamFull(e)) return floodStageBlocked(indices);
  if (code === 10054) return new EsError('content_too_long_exception', 413, `the message is larger than the log accepts: ${(e as Error).message}`);
  return new EsError('unavailable_shards_exception', 503, `the log refused the append: ${(e as Error).message} (JetStream error ${code})`);
}
