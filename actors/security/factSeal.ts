import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { Kvm, type KV } from '@nats-io/kv';
import type { Envelope } from '../../streams';

/**
 * Secret material of credential facts (password hashes, API key and token hashes, the sealed
 * superseding token pair) never goes onto the subscribable log in clear: before a fact is appended
 * its secret fields are moved into `data.sealed`, AES-256-GCM under a key only nodes can read (KV
 * bucket {@link SECRETS_BUCKET}: the subscriber role has no `$KV` or `$JS.API` access to it), bound
 * to the fact by the additional data `type|aggregateId|seq`. Nodes open facts as they fold them; a
 * subscriber sees every credential's lifecycle without the material (README "Security model of the
 * bus"), as Elasticsearch keeps hashes in its system index.
 */

/** The secret fields of each credential fact type. */
export const SECRET_FIELDS: Readonly<Record<string, readonly string[]>> = {
  'user.created': ['passwordHash'],
  'user.updated': ['passwordHash'],
  'user.password_changed': ['passwordHash'],
  'apikey.created': ['hash'],
  'servicetoken.created': ['hash'],
  'token.created': ['accessHash', 'refreshHash'],
  'token.refreshed': ['superseding'],
};

/** A node-only KV bucket: the fact key and the log's migration marker. */
export const SECRETS_BUCKET = 'ES_SECRETS';
const KEY_ENTRY = 'facts.key';

/** `data.sealed` of a fact. */
export interface Sealed {
  kid: number;
  iv: string;
  tag: string;
  data: string;
}

interface KeyFile {
  keys: Array<{ kid: number; key: string }>;
}

/** Whether a fact holds secret material in clear (a fact written before issue 18). */
export function hasClearSecrets(e: Envelope): boolean {
  const fields = SECRET_FIELDS[e.type];
  const d = e.data as Record<string, unknown> | undefined;
  return !!fields && !!d && fields.some((f) => d[f] !== undefined);
}

const aad = (e: Pick<Envelope, 'type' | 'aggregateId' | 'seq'>) => Buffer.from(`${e.type}|${e.aggregateId}|${e.seq}`);

/** Seals and opens credential facts with the cluster's fact key. */
export class FactSeal {
  private readonly keys = new Map<number, Buffer>();
  private readonly current: number;

  constructor(keys: Array<{ kid: number; key: Buffer }>) {
    for (const k of keys) this.keys.set(k.kid, k.key);
    this.current = Math.max(...keys.map((k) => k.kid));
  }

  /** The fact as it goes onto the log: its secret fields moved into `data.sealed`. */
  seal<E extends Envelope>(e: E): E {
    const fields = SECRET_FIELDS[e.type];
    if (!fields) return e;
    const data = { ...(e.data as Record<string, unknown>) };
    const secret: Record<string, unknown> = {};
    for (const f of fields) {
      if (data[f] === undefined) continue;
      secret[f] = data[f];
      delete data[f];
    }
    if (!Object.keys(secret).length) return e;
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.keys.get(this.current)!, iv);
    c.setAAD(aad(e));
    const body = Buffer.concat([c.update(JSON.stringify(secret)), c.final()]);
    const sealed: Sealed = { kid: this.current, iv: iv.toString('base64'), tag: c.getAuthTag().toString('base64'), data: body.toString('base64') };
    return { ...e, data: { ...data, sealed } };
  }

  /** The fact with its secret fields back in `data` (a fact without `sealed` is returned as is). */
  open<E extends Envelope>(e: E): E {
    const d = e.data as { sealed?: Sealed } | undefined;
    const s = d?.sealed;
    if (!s) return e;
    const key = this.keys.get(s.kid);
    if (!key) throw new Error(`fact ${e.type} [${e.aggregateId}] #${e.seq} is sealed with an unknown key [${s.kid}]`);
    const dc = createDecipheriv('aes-256-gcm', key, Buffer.from(s.iv, 'base64'));
    dc.setAAD(aad(e));
    dc.setAuthTag(Buffer.from(s.tag, 'base64'));
    const secret = JSON.parse(Buffer.concat([dc.update(Buffer.from(s.data, 'base64')), dc.final()]).toString('utf8')) as Record<string, unknown>;
    const { sealed: _sealed, ...rest } = d as Record<string, unknown>;
    return { ...e, data: { ...rest, ...secret } };
  }
}

/** The node-only bucket (created on first use, with the log's replicas). */
export function secretsBucket(nc: NatsConnection, replicas?: number): Promise<KV> {
  return new Kvm(nc).create(SECRETS_BUCKET, { history: 1, ...(replicas ? { replicas } : {}) });
}

/**
 * The cluster's fact key: read from {@link SECRETS_BUCKET}, or made by the first node (an atomic
 * create: two nodes starting together end up with the same key).
 */
export async function loadFactSeal(kv: KV): Promise<FactSeal> {
  const parse = (v: Uint8Array) => (JSON.parse(new TextDecoder().decode(v)) as KeyFile).keys.map((k) => ({ kid: k.kid, key: Buffer.from(k.key, 'base64') }));
  const e = await kv.get(KEY_ENTRY);
  if (e && e.operation === 'PUT') return new FactSeal(parse(e.value));
  const made: KeyFile = { keys: [{ kid: 1, key: randomBytes(32).toString('base64') }] };
  try {
    await kv.create(KEY_ENTRY, JSON.stringify(made));
    return new FactSeal(parse(new TextEncoder().encode(JSON.stringify(made))));
  } catch {
    const again = await kv.get(KEY_ENTRY); // another node made it first
    if (!again || again.operation !== 'PUT') throw new Error(`no fact key in ${SECRETS_BUCKET}`);
    return new FactSeal(parse(again.value));
  }
}
