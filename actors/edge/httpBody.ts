import type { IncomingMessage } from 'node:http';
import { gunzip, inflate, inflateRaw, type ZlibOptions } from 'node:zlib';
import { promisify } from 'node:util';
import { EsError } from '../wire/esErrors';

const gunzipAsync = promisify<Buffer, ZlibOptions, Buffer>(gunzip);
const inflateAsync = promisify<Buffer, ZlibOptions, Buffer>(inflate);
const inflateRawAsync = promisify<Buffer, ZlibOptions, Buffer>(inflateRaw);

/** `http.max_content_length` default. */
export const DEFAULT_MAX_CONTENT_LENGTH = 100 * 1024 * 1024;

/**
 * ES's 413 for a body over `http.max_content_length` (before or after inflation), ES-shaped.
 * The connection is closed after it: the rest of the body is never read.
 */
export function contentTooLong(size: number, max: number): EsError {
  return new EsError('content_too_long_exception', 413, `entity content is too long [${size}] for the configured buffer limit [${max}]`);
}

/** Where a body's bytes are accounted before they are buffered (the in-flight requests breaker). */
export interface BodyAccount {
  /** Adds bytes; throws ES's 429 `circuit_breaking_exception` when the breaker would trip. */
  reserve(bytes: number): void;
}

/**
 * Reads a request body, at most `max` bytes, inflating `Content-Encoding: gzip|deflate` with the
 * same cap on the inflated size (zlib `maxOutputLength`, so a small bomb never grows past it).
 * Bytes are reserved on `account` before they are kept: the declared `Content-Length` at once,
 * chunks beyond it as they arrive, and what inflation adds (ES accounts the decoded body).
 * Throws ES's 413 `content_too_long_exception`, a 429 from the account, or a 400
 * `decompression_exception` (Netty's HttpContentDecompressor wording) for a body that does not inflate.
 */
export async function readBody(req: IncomingMessage, max: number, account?: BodyAccount): Promise<Buffer | undefined> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) throw contentTooLong(declared, max);
  let reserved = Number.isFinite(declared) && declared > 0 ? declared : 0;
  account?.reserve(reserved); // also for an empty body: the parent breaker is asked on every request, as ES does
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > max) throw contentTooLong(size, max);
    if (account && size > reserved) {
      account.reserve(size - reserved);
      reserved = size;
    }
    chunks.push(c as Buffer);
  }
  if (!chunks.length) return undefined;
  const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
  const enc = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
  let out = body;
  if (enc === 'gzip' || enc === 'x-gzip') out = await inflateBody(body, 'gzip', max);
  else if (enc === 'deflate' || enc === 'x-deflate') out = await inflateBody(body, isZlibHeader(body) ? 'zlib' : 'raw', max);
  if (account && out.length > reserved) account.reserve(out.length - reserved);
  return out;
}

/** Netty decodes `deflate` as ZLIB_OR_NONE: a zlib stream when the first two bytes are a zlib header, raw deflate otherwise. */
function isZlibHeader(b: Buffer): boolean {
  return b.length >= 2 && (b[0] & 0x0f) === 8 && ((b[0] << 8) | b[1]) % 31 === 0;
}

/**
 * zlib's output chunk for a compressed body: each chunk is one trip from the thread pool back to the
 * event loop, so the default 16 KB made a 100 MB bomb 6,400 turns of a loop other requests keep busy
 * (32 s measured with 4 ms of other work per turn, 0.6 s with 1 MB chunks; 260 vs 72 ms idle). Sized
 * on the body (a small one does not get a 1 MB buffer): 16× its length, between 64 KB and 1 MB.
 */
export const inflateChunk = (compressed: number) => Math.min(1024 * 1024, Math.max(64 * 1024, compressed * 16));

async function inflateBody(body: Buffer, kind: 'gzip' | 'zlib' | 'raw', max: number): Promise<Buffer> {
  if (kind === 'gzip' && !(body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b)) {
    throw new EsError('decompression_exception', 400, 'Input is not in the GZIP format');
  }
  const opts: ZlibOptions = { maxOutputLength: max, chunkSize: inflateChunk(body.length) };
  try {
    return await (kind === 'gzip' ? gunzipAsync : kind === 'zlib' ? inflateAsync : inflateRawAsync)(body, opts);
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_BUFFER_TOO_LARGE') throw contentTooLong(max + 1, max);
    throw new EsError('decompression_exception', 400, 'decompression failure', {
      causedBy: new EsError('data_format_exception', 400, err.message),
    });
  }
}

const UNITS: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3, tb: 1024 ** 4, pb: 1024 ** 5 };

/**
 * A byte-size setting as ES writes it (`100mb`, `512kb`, `1048576b`); numbers need a unit, as in ES
 * (ByteSizeValue.parseBytesSizeValue).
 * @throws Error naming the setting for anything else.
 */
export function parseByteSize(value: unknown, setting: string): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value; // from code, already bytes
  const s = String(value).trim().toLowerCase();
  const m = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb|tb|pb)$/.exec(s);
  if (!m) throw new Error(`failed to parse setting [${setting}] with value [${String(value)}] as a size in bytes: unit is missing or unrecognized`);
  return Math.floor(Number(m[1]) * UNITS[m[2]]);
}
