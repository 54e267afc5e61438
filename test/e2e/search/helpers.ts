/**
 * Helpers shared by the search end-to-end and integration suites: raw HTTP (for statuses, headers
 * and exact long values the official client hides or rounds), bulk loading, polling, and reading
 * lifecycle facts from the event log. Expected results are always computed by the tests themselves.
 */
import { parse as losslessParse, stringify as losslessStringify, isLosslessNumber, type LosslessNumber } from 'lossless-json';
import { request } from 'node:http';
import type { NatsConnection } from '@nats-io/transport-node';
import { readFacts, type Envelope } from '../../../streams';
import type { TestNode } from '../../support/node';
import { poll } from '../../support/poll';

export interface RawResponse<T = any> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body (plain JSON.parse; undefined when the body is not JSON). */
  json: T;
}

/**
 * One HTTP request to the node (node:http, so GET may carry a body, as ES allows). `body` objects
 * are sent as JSON (lossless-json, so LosslessNumber values keep every digit); strings as they are.
 */
export function raw<T = any>(
  t: Pick<TestNode, 'url'>,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse<T>> {
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : (losslessStringify(body) as string));
  const type = typeof body === 'string' && path.includes('_bulk') ? 'application/x-ndjson' : 'application/json';
  return new Promise((resolve, reject) => {
    const req = request(
      `${t.url}${path}`,
      { method, headers: { ...(payload ? { 'content-type': type, 'content-length': String(payload.length) } : {}), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let json: any;
          try {
            json = text ? JSON.parse(text) : undefined;
          } catch {
            json = undefined;
          }
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
          resolve({ status: res.statusCode ?? 0, headers: h, text, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** Parses JSON keeping every number as a LosslessNumber (exact digits). */
export const parseExact = (text: string): any => losslessParse(text);
/** The exact digits of a number parsed by parseExact (or String(x) for anything else). */
export const digits = (x: unknown): string => (isLosslessNumber(x) ? (x as LosslessNumber).value : String(x));

/** Bulk-indexes docs (`_id` taken from `id`), refresh=true; fails the test on any item error. */
export async function bulkIndex<T extends object>(
  t: TestNode,
  index: string,
  docs: T[],
  idOf: (d: T) => string = (d) => String((d as { id?: unknown }).id),
): Promise<void> {
  const chunk = 2000;
  for (let i = 0; i < docs.length; i += chunk) {
    const part = docs.slice(i, i + chunk);
    const body = part.map((d) => `${JSON.stringify({ index: { _index: index, _id: idOf(d) } })}\n${JSON.stringify(d)}\n`).join('');
    const res = await raw(t, 'POST', `/_bulk?refresh=true`, body);
    if (res.status !== 200 || res.json?.errors !== false) throw new Error(`bulk failed: ${res.status} ${res.text.slice(0, 500)}`);
  }
}

/** Polls `check` until it returns a value (not undefined/false), or fails after `timeoutMs`. */
export const eventually = <T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 5000, what = 'condition'): Promise<T> =>
  poll(check, timeoutMs, what, 50);

/** All lifecycle facts currently on ES_EVT. */
export async function allFacts(nc: NatsConnection): Promise<Array<Envelope & { streamSeq: number }>> {
  const out: Array<Envelope & { streamSeq: number }> = [];
  for await (const f of readFacts(nc)) out.push(f);
  return out;
}

/** Waits until a fact matching `pred` is on the log and returns it. */
export function waitForFact(nc: NatsConnection, pred: (f: Envelope) => boolean, timeoutMs = 5000, what = 'fact'): Promise<Envelope & { streamSeq: number }> {
  return eventually(async () => (await allFacts(nc)).find(pred), timeoutMs, what);
}

/** The types of all facts of one aggregate instance, in log order. */
export async function factTypesOf(nc: NatsConnection, aggregateId: string): Promise<string[]> {
  return (await allFacts(nc)).filter((f) => f.aggregateId === aggregateId).map((f) => f.type);
}

/** Status and body of a call through the official client that is expected to fail. */
export async function failure(p: Promise<unknown>): Promise<{ status: number; body: any }> {
  try {
    await p;
  } catch (e) {
    const meta = (e as { meta?: { statusCode?: number; body?: unknown } }).meta;
    if (meta?.statusCode !== undefined) return { status: meta.statusCode, body: meta.body };
    throw e;
  }
  throw new Error('expected the request to fail, it succeeded');
}

/** Java's String.hashCode (UTF-16 code units, 32-bit wrap). */
export function javaHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}
export const floorMod = (a: number, n: number) => ((a % n) + n) % n;

/** Byte-wise (UTF-8) comparison, as ES compares keyword terms. ASCII corpora make this plain `<`. */
export const cmp = (a: string | number, b: string | number) => (a < b ? -1 : a > b ? 1 : 0);

/** `_nodes/stats/indices/search` of the single node. */
export async function searchStats(t: TestNode): Promise<Record<string, number>> {
  const r = await raw(t, 'GET', '/_nodes/stats/indices/search');
  const nodes = Object.values(r.json.nodes) as Array<{ indices: { search: Record<string, number> } }>;
  return nodes[0].indices.search;
}
