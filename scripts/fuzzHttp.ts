/**
 * What a fuzz case is and how generators build one (shared by fuzzCases.ts and fuzzAdminCases.ts).
 */
import type { Rng } from './fuzzValues';

export interface Fixtures {
  /** `Authorization` value that passes (the superuser). */
  auth: string;
  /** Indices with data: `fz1` (2 shards, explicit mapping), `fz2` (1 shard, strict). */
  indices: string[];
  scrollId: string;
  clearedScrollId: string;
  pitId: string;
  /** base64 `id:key` of a live API key. */
  apiKey: string;
}

/**
 * One request. `expect`: the only statuses Elasticsearch gives it (another is a finding); raw cases
 * with `keepOpen` keep the socket open for the answer (a client that half-closes may get none).
 */
export type FuzzCase =
  | { kind: 'http'; label: string; method: string; path: string; headers: Record<string, string>; body?: Buffer; expect?: number[] }
  | { kind: 'raw'; label: string; bytes: Buffer; expect?: number[]; keepOpen?: boolean };

export type Gen = (r: Rng, f: Fixtures) => FuzzCase;

const JSON_HEADERS = { 'content-type': 'application/json' };

export function http(label: string, f: Fixtures, method: string, path: string, body?: string | Buffer, headers: Record<string, string> = {}): FuzzCase {
  const b = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  return { kind: 'http', label, method, path, headers: { authorization: f.auth, ...(b ? JSON_HEADERS : {}), ...headers }, body: b };
}

export const scratch = (r: Rng) => `fzx-${r.int(5)}`;
export const anyIndex = (r: Rng, f: Fixtures) => r.pick([...f.indices, ...f.indices, scratch(r), 'missing', '_all', '*', 'fz*', 'fz1,fz2', '-fz1', 'UPPER', '.hidden', 'a b', '%2Fx', '_search']);
