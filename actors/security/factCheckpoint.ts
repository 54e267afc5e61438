import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Aggregate, EVENT_STREAM, subjects, type Envelope } from '../../streams';
import { readFactBatches } from '../../streams/factReader';
import { apiKeyRecord, evolveApiKey, type ApiKeyRecord, type ApiKeyStatus } from '../../machines/apiKey.machine';
import { evolveToken, tokenDocExpiresAt, type AccessTokenRecord } from '../../machines/accessToken.machine';
import { messageIdentity, notOfThisLog } from '../contexts/checkpoint';
import { canonicalJson } from './roleDescriptor';
import { writeFileAtomic } from '../checksummedFile';

/**
 * A compacted, binary copy of the credential state as of ES_EVT sequence `seq`, so start-up folds a
 * local file plus only the log after `seq`: its cost follows the live credentials, not the history.
 *
 * - API keys (the credential that comes by the hundred thousand) are stored **folded**, in columns:
 *   the strings of every key in one JSON array, numbers in a Float64Array, the status in a
 *   Uint8Array, and owners / role descriptors / `limited_by` / metadata as indexes into one table of
 *   distinct objects (100,000 keys of one owner share one `limited_by`). Loading builds each record
 *   directly, with no per-key JSON parse and no per-key interning.
 * - Users, roles, tokens and service tokens are kept as their facts (JSON lines) and folded at
 *   start-up as before; token pairs the log ended (expired, or invalidated with their document
 *   ended) drop out at the next checkpoint, decided by folding the facts, not by the node's memory.
 *
 * The file is built from the log (the previous checkpoint plus the log after it), never from the
 * node's memory, so a fact the node missed on core NATS is not baked in. Folds are idempotent by
 * per-aggregate `seq`, so facts both in the file and after `seq` are harmless.
 *
 * File: `<sha256 hex of the rest>\n<header JSON>\n<sections>`; the header names the sections and
 * their byte lengths (each padded to 8 bytes), the stream identity at `seq` (`notOfThisLog`) and the
 * byte order of the numeric columns. A damaged, foreign or unknown-format file is ignored (the node
 * folds the whole log); the first JSON-lines format (`security-checkpoint.jsonl`) is removed when a
 * new checkpoint is written.
 */
export interface FactCheckpoint {
  seq: number;
  /** Facts of the credentials kept as facts (users, roles, tokens, service tokens), in log order. */
  facts: Envelope[];
  /** Every API key of the log, folded, in the order the log created them. */
  apiKeys: ApiKeyRecord[];
}

/** Where a node keeps its credential checkpoint, under `DATA_DIR`. */
export const CHECKPOINT_FILE = 'security-checkpoint.bin';
/** The JSON-lines checkpoint of earlier builds (ignored; removed when a new one is written). */
const OLD_CHECKPOINT_FILE = 'security-checkpoint.jsonl';

const VERSION = 2;
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const STATUS: readonly ApiKeyStatus[] = ['active', 'invalidated', 'expired'];
/** Per key: seq, creation, expiration, invalidation (NaN = absent). */
const NUMS = 4;
/** Per key: owner, keyType, roleDescriptors, limitedBy, metadata (indexes into the object table). */
const REFS = 5;
/** Per key: keyId, name, hash. */
const STRS = 3;

interface Header {
  version: number;
  seq: number;
  stream: string;
  littleEndian: boolean;
  keys: number;
  sections: Array<[name: string, bytes: number]>;
}

const pad8 = (n: number) => (n + 7) & ~7;

/** The file bytes of a checkpoint of stream identity `stream` (see the file comment). */
export function encodeFactCheckpoint(cp: FactCheckpoint, stream: string): Buffer {
  const n = cp.apiKeys.length;
  const objects: unknown[] = [];
  const byIdentity = new Map<unknown, number>();
  const byText = new Map<string, number>();
  const byCanonical = new Map<string, number>();
  // Objects shared by identity (decoded from the previous file) cost one Map lookup; others are found
  // by their JSON text (facts of one owner repeat it byte for byte), and only a new text is written
  // out canonically (key order aside) to find its equal.
  const ref = (v: unknown): number => {
    let i = byIdentity.get(v);
    if (i !== undefined) return i;
    const text = JSON.stringify(v);
    i = byText.get(text);
    if (i === undefined) {
      const key = canonicalJson(v);
      i = byCanonical.get(key);
      if (i === undefined) {
        i = objects.push(v) - 1;
        byCanonical.set(key, i);
      }
      byText.set(text, i);
    }
    byIdentity.set(v, i);
    return i;
  };
  const strs: string[] = new Array(n * STRS);
  const nums = new Float64Array(n * NUMS);
  const refs = new Uint32Array(n * REFS);
  const status = new Uint8Array(n);
  cp.apiKeys.forEach((r, i) => {
    strs[i * STRS] = r.keyId;
    strs[i * STRS + 1] = r.name;
    strs[i * STRS + 2] = r.hash;
    nums[i * NUMS] = r.seq;
    nums[i * NUMS + 1] = r.creation;
    nums[i * NUMS + 2] = r.expiration ?? NaN;
    nums[i * NUMS + 3] = r.invalidation ?? NaN;
    refs[i * REFS] = ref(r.owner);
    refs[i * REFS + 1] = ref(r.keyType);
    refs[i * REFS + 2] = ref(r.roleDescriptors);
    refs[i * REFS + 3] = ref(r.limitedBy);
    refs[i * REFS + 4] = ref(r.metadata);
    status[i] = STATUS.indexOf(r.status);
  });
  // Derived keys' parents (rare): a sparse section, absent when there are none; older files lack it.
  const parents: Record<string, string> = {};
  for (const r of cp.apiKeys) if (r.parentId !== undefined) parents[r.keyId] = r.parentId;
  const sections: Array<[string, Buffer]> = [
    ['facts', Buffer.from(cp.facts.map((f) => JSON.stringify(f)).join('\n'))],
    ['objects', Buffer.from(JSON.stringify(objects))],
    ['keyStrings', Buffer.from(JSON.stringify(strs))],
    ['keyNums', Buffer.from(nums.buffer)],
    ['keyRefs', Buffer.from(refs.buffer)],
    ['keyStatus', Buffer.from(status.buffer)],
    ...(Object.keys(parents).length ? [['keyParents', Buffer.from(JSON.stringify(parents))] as [string, Buffer]] : []),
  ];
  const header: Header = { version: VERSION, seq: cp.seq, stream, littleEndian: LITTLE_ENDIAN, keys: n, sections: sections.map(([k, b]) => [k, b.length]) };
  const parts: Buffer[] = [Buffer.from(JSON.stringify(header) + '\n')];
  for (const [, b] of sections) parts.push(b, Buffer.alloc(pad8(b.length) - b.length));
  const body = Buffer.concat(parts);
  return Buffer.concat([Buffer.from(createHash('sha256').update(body).digest('hex') + '\n'), body]);
}

/** Why a checkpoint file cannot be used (damaged, other format), as {@link decodeFactCheckpoint} throws it. */
export class CheckpointUnusable extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CheckpointUnusable';
  }
}

/** Reads the bytes {@link encodeFactCheckpoint} wrote; throws {@link CheckpointUnusable}. */
export function decodeFactCheckpoint(file: Buffer): FactCheckpoint & { stream: string } {
  const nl = file.indexOf(0x0a);
  if (nl !== 64) throw new CheckpointUnusable('not a checkpoint');
  const body = file.subarray(nl + 1);
  if (createHash('sha256').update(body).digest('hex') !== file.toString('latin1', 0, nl)) throw new CheckpointUnusable('checksum mismatch');
  const hl = body.indexOf(0x0a);
  let head: Header;
  try {
    head = JSON.parse(body.toString('utf8', 0, hl)) as Header;
  } catch {
    throw new CheckpointUnusable('unreadable');
  }
  if (head.version !== VERSION) throw new CheckpointUnusable(`format version ${head.version}`);
  if (head.littleEndian !== LITTLE_ENDIAN) throw new CheckpointUnusable('written on a machine of another byte order');
  const at = new Map<string, Buffer>();
  let off = hl + 1;
  for (const [name, bytes] of head.sections) {
    if (off + bytes > body.length) throw new CheckpointUnusable('truncated');
    at.set(name, body.subarray(off, off + bytes));
    off += pad8(bytes);
  }
  const section = (name: string) => {
    const b = at.get(name);
    if (!b) throw new CheckpointUnusable(`no ${name} section`);
    return b;
  };
  // Typed arrays need aligned offsets: copy the numeric columns into their own buffers.
  const copy = (b: Buffer) => new Uint8Array(b).buffer;
  const n = head.keys;
  try {
    const factsText = section('facts').toString('utf8');
    const facts = factsText ? factsText.split('\n').map((l) => JSON.parse(l) as Envelope) : [];
    const objects = JSON.parse(section('objects').toString('utf8')) as unknown[];
    const strs = JSON.parse(section('keyStrings').toString('utf8')) as string[];
    const nums = new Float64Array(copy(section('keyNums')));
    const refs = new Uint32Array(copy(section('keyRefs')));
    const status = section('keyStatus');
    const parentsText = at.get('keyParents');
    const parents = parentsText ? (JSON.parse(parentsText.toString('utf8')) as Record<string, string>) : {};
    if (strs.length !== n * STRS || nums.length !== n * NUMS || refs.length !== n * REFS || status.length !== n) throw new CheckpointUnusable('columns of unequal length');
    const obj = (i: number) => {
      if (i >= objects.length) throw new CheckpointUnusable('object reference out of range');
      return objects[i] as never;
    };
    const num = (v: number) => (Number.isNaN(v) ? undefined : v);
    const apiKeys: ApiKeyRecord[] = new Array(n);
    for (let i = 0; i < n; i++) {
      const st = STATUS[status[i]];
      if (!st) throw new CheckpointUnusable('unknown key status');
      apiKeys[i] = apiKeyRecord({
        keyId: strs[i * STRS],
        seq: nums[i * NUMS],
        status: st,
        name: strs[i * STRS + 1],
        keyType: obj(refs[i * REFS + 1]),
        creation: nums[i * NUMS + 1],
        expiration: num(nums[i * NUMS + 2]),
        invalidation: num(nums[i * NUMS + 3]),
        owner: obj(refs[i * REFS]),
        hash: strs[i * STRS + 2],
        roleDescriptors: obj(refs[i * REFS + 2]),
        limitedBy: obj(refs[i * REFS + 3]),
        metadata: obj(refs[i * REFS + 4]),
        parentId: Object.hasOwn(parents, strs[i * STRS]) ? parents[strs[i * STRS]] : undefined,
      });
    }
    return { seq: head.seq, stream: head.stream, facts, apiKeys };
  } catch (e) {
    if (e instanceof CheckpointUnusable) throw e;
    throw new CheckpointUnusable('unreadable');
  }
}

/** Reads a checkpoint of the current ES_EVT, or why none can be used. */
export async function readFactCheckpoint(nc: NatsConnection, path: string): Promise<{ cp?: FactCheckpoint; why?: string }> {
  let file: Buffer;
  try {
    file = readFileSync(path);
  } catch {
    return { why: 'no checkpoint' };
  }
  let cp: FactCheckpoint & { stream: string };
  try {
    cp = decodeFactCheckpoint(file);
  } catch (e) {
    if (e instanceof CheckpointUnusable) return { why: e.message };
    throw e;
  }
  const foreign = await notOfThisLog(nc, cp.seq, cp.stream);
  return foreign ? { why: foreign } : { cp: { seq: cp.seq, facts: cp.facts, apiKeys: cp.apiKeys } };
}

/**
 * Which token pairs of `facts` a checkpoint keeps, decided by folding those facts (never by what a
 * node holds in memory, which may lag the log): every pair except those the log ended, a
 * `token.expired` one, or an invalidated one whose document ended by `asOf` (the log's time at the
 * checkpoint's sequence), as the expiry sweep forgets them.
 */
export function liveTokens(facts: Iterable<Envelope>, asOf: number): Set<string> {
  const recs = new Map<string, AccessTokenRecord>();
  for (const e of facts) {
    const next = evolveToken(recs.get(e.aggregateId), e);
    if (next) recs.set(e.aggregateId, next);
  }
  const live = new Set<string>();
  for (const [id, r] of recs) {
    if (r.status === 'expired' || (r.status === 'invalidated' && asOf >= tokenDocExpiresAt(r))) continue;
    live.add(id);
  }
  return live;
}

/**
 * Writes a new checkpoint: the previous one plus the log after it. API keys are folded (all of
 * them: a key is never forgotten); users, roles and service tokens keep all their facts; token
 * pairs keep theirs unless the fold of those facts says the pair is gone ({@link liveTokens}).
 */
export async function writeFactCheckpoint(
  nc: NatsConnection,
  path: string,
  aggregates: Aggregate[],
  /** Opens a fact's sealed secret fields (API keys are folded here, with their hashes). */
  open: (e: Envelope) => Envelope = (e) => e,
  /**
   * The compacted credential facts (ES_STATE) and the ES_EVT sequence they cover: the base when the
   * log no longer starts at 1 (retention removed compacted facts) and no usable checkpoint precedes it.
   */
  compacted?: () => Promise<{ seq: number; facts: Envelope[] }>,
): Promise<FactCheckpoint> {
  const jsm = await jetstreamManager(nc);
  const { last_seq: seq, last_ts: lastTs, first_seq: firstSeq } = (await jsm.streams.info(EVENT_STREAM)).state;
  const asOf = Date.parse(lastTs);
  let prev = (await readFactCheckpoint(nc, path)).cp;
  if (prev && prev.seq + 1 < firstSeq) prev = undefined; // facts after it are gone: never build on a hole
  if (!prev && firstSeq > 1) {
    if (!compacted) throw new Error('the lifecycle log no longer starts at its first fact and no compacted state was given');
    const base = await compacted();
    const keysOf = new Map<string, ApiKeyRecord>();
    for (const e of base.facts) {
      if (!e.type.startsWith(`${Aggregate.ApiKey}.`)) continue;
      const next = evolveApiKey(keysOf.get(e.aggregateId), open(e));
      if (next) keysOf.set(next.keyId, next);
    }
    prev = { seq: base.seq, facts: base.facts.filter((e) => !e.type.startsWith(`${Aggregate.ApiKey}.`)), apiKeys: [...keysOf.values()] };
  }
  const from = prev ? { startSeq: prev.seq + 1 } : {};
  const seen = new Set<string>();
  const facts: Envelope[] = [];
  const keys = new Map<string, ApiKeyRecord>(prev?.apiKeys.map((r) => [r.keyId, r]));
  const keep = (e: Envelope) => {
    if (seen.has(e.id)) return;
    seen.add(e.id);
    facts.push(e);
  };
  for (const a of aggregates) {
    if (a === Aggregate.ApiKey) {
      for await (const batch of readFactBatches(nc, { filterSubject: subjects.factsOfType(a), ...from })) {
        for (const e of batch) {
          const next = evolveApiKey(keys.get(e.aggregateId), open(e));
          if (next) keys.set(next.keyId, next);
        }
      }
      continue;
    }
    for (const e of prev?.facts ?? []) if (e.type.startsWith(`${a}.`)) keep(e);
    for await (const batch of readFactBatches(nc, { filterSubject: subjects.factsOfType(a), ...from })) for (const e of batch) keep(e);
  }
  const tokens = liveTokens(facts.filter((e) => e.type.startsWith(`${Aggregate.Token}.`)), Number.isNaN(asOf) ? 0 : asOf);
  const kept = facts.filter((e) => !e.type.startsWith(`${Aggregate.Token}.`) || tokens.has(e.aggregateId));
  const cp: FactCheckpoint = { seq, facts: kept, apiKeys: [...keys.values()] };
  writeFileAtomic(path, encodeFactCheckpoint(cp, await messageIdentity(jsm, seq)));
  rmSync(join(dirname(path), OLD_CHECKPOINT_FILE), { force: true });
  return cp;
}
