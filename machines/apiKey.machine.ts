import { assign, emit, setup } from 'xstate';
import type { Envelope } from '../actors/wire/envelope';
import type { RoleDescriptor } from '../actors/wire/security';
import { isLastStep, MAX_DELAY_MS, nextStep } from './longDelay';

/**
 * One API key: `active` → `invalidated` | `expired` (only when created with an `expiration`); `update`
 * replaces descriptors/metadata/expiration and re-snapshots `limited_by`. Facts carry the key id and the
 * salted hash of the secret ({SSHA256}…, not a secret), never the secret itself.
 */

/** The key's creator (ES `creator`): who it acts as. */
export interface ApiKeyOwner {
  username: string;
  realm: string;
  realmType: string;
  full_name?: string | null;
  email?: string | null;
  metadata?: Record<string, unknown>;
}

export interface ApiKeyCreated {
  name: string;
  /** ES's key `type` (`rest`); not named `type`, which is the fact's own type. */
  keyType: 'rest';
  creation: number;
  expiration?: number;
  owner: ApiKeyOwner;
  /** `{SSHA256}` salt+hash of the secret. */
  hash: string;
  /** The key's own role descriptors ({} = the owner's snapshot applies alone). */
  roleDescriptors: Record<string, RoleDescriptor>;
  /** The owner's role descriptors at creation/update (ES `limited_by`). */
  limitedBy: Record<string, RoleDescriptor>;
  metadata: Record<string, unknown>;
  /**
   * Ours (`xpack.security.authc.api_key.derived_keys.enabled`): the API key that created this one. Its
   * privileges are a subset of the parent's, it expires no later, and it is invalidated with it.
   */
  parentId?: string;
}
export interface ApiKeyUpdated {
  at: number;
  roleDescriptors?: Record<string, RoleDescriptor>;
  limitedBy: Record<string, RoleDescriptor>;
  metadata?: Record<string, unknown>;
  /** New expiration (epoch ms); null removes it; absent keeps it. */
  expiration?: number | null;
}
export interface ApiKeyInvalidated {
  invalidation: number;
  /** Invalidated because this ancestor was (derived keys: one fact per descendant). */
  cascadeOf?: string;
}

export type ApiKeyFactBody =
  | ({ type: 'apikey.created' } & ApiKeyCreated)
  | ({ type: 'apikey.updated' } & ApiKeyUpdated)
  | ({ type: 'apikey.invalidated' } & ApiKeyInvalidated)
  | { type: 'apikey.expired' };

export type ApiKeyFact =
  | Envelope<'apikey.created', ApiKeyCreated>
  | Envelope<'apikey.updated', ApiKeyUpdated>
  | Envelope<'apikey.invalidated', ApiKeyInvalidated>
  | Envelope<'apikey.expired', Record<string, never>>;

export type ApiKeyStatus = 'active' | 'invalidated' | 'expired';

/** The folded state of a key at rest (no live actor). */
export interface ApiKeyRecord extends ApiKeyCreated {
  keyId: string;
  seq: number;
  status: ApiKeyStatus;
  invalidation?: number;
}

/**
 * A record with one fixed shape (every field present, in one order): V8 keeps such objects compact,
 * which matters at 100k keys at rest (a spread of parsed JSON costs about twice the memory).
 */
export function apiKeyRecord(r: Omit<ApiKeyRecord, 'expiration' | 'invalidation' | 'parentId'> & { expiration?: number; invalidation?: number; parentId?: string }): ApiKeyRecord {
  return {
    keyId: r.keyId,
    seq: r.seq,
    status: r.status,
    name: r.name,
    keyType: r.keyType,
    creation: r.creation,
    expiration: r.expiration,
    invalidation: r.invalidation,
    owner: r.owner,
    hash: r.hash,
    roleDescriptors: r.roleDescriptors,
    limitedBy: r.limitedBy,
    metadata: r.metadata,
    parentId: r.parentId,
  };
}

/** Folds one fact into the record (idempotent by per-aggregate seq). */
export function evolveApiKey(rec: ApiKeyRecord | undefined, e: Pick<Envelope, 'type' | 'aggregateId' | 'seq' | 'data'>): ApiKeyRecord | undefined {
  if (rec && e.seq <= rec.seq) return rec;
  if (e.type === 'apikey.created') return rec ?? apiKeyRecord({ ...(e.data as ApiKeyCreated), keyId: e.aggregateId, seq: e.seq, status: 'active' });
  if (!rec) return rec;
  switch (e.type) {
    case 'apikey.updated': {
      const d = e.data as ApiKeyUpdated;
      return apiKeyRecord({
        ...rec,
        seq: e.seq,
        limitedBy: d.limitedBy,
        roleDescriptors: d.roleDescriptors ?? rec.roleDescriptors,
        metadata: d.metadata ?? rec.metadata,
        expiration: d.expiration === null ? undefined : (d.expiration ?? rec.expiration),
      });
    }
    case 'apikey.invalidated':
      return apiKeyRecord({ ...rec, seq: e.seq, status: 'invalidated', invalidation: (e.data as ApiKeyInvalidated).invalidation });
    case 'apikey.expired':
      return apiKeyRecord({ ...rec, seq: e.seq, status: rec.status === 'invalidated' ? rec.status : 'expired' });
    default:
      return rec;
  }
}

interface Ctx {
  keyId: string;
  /** Time left until expiry; null = never expires. */
  remainingMs: number | null;
  resume?: ApiKeyStatus;
  created?: ApiKeyCreated;
}

export interface ApiKeyInput {
  keyId: string;
  now: number;
  created?: ApiKeyCreated;
  record?: ApiKeyRecord;
}

export type ApiKeyEvent = ({ type: 'update' } & ApiKeyUpdated) | { type: 'invalidate'; at: number; cascadeOf?: string };

function toContext(input: ApiKeyInput): Ctx {
  const src = input.created ?? input.record;
  if (!src) throw new Error('apiKey: created or record required');
  return {
    keyId: input.keyId,
    remainingMs: src.expiration === undefined ? null : src.expiration - input.now,
    resume: input.record?.status,
    created: input.created,
  };
}

/** The API key machine (see the file comment). */
export const apiKeyMachine = setup({
  types: {
    input: {} as ApiKeyInput,
    context: {} as Ctx,
    events: {} as ApiKeyEvent,
    emitted: {} as ApiKeyFactBody,
  },
  delays: { untilExpiry: ({ context }) => nextStep(context.remainingMs ?? 0) },
  guards: {
    isNew: ({ context }) => context.created !== undefined,
    wasInvalidated: ({ context }) => context.resume === 'invalidated',
    wasExpired: ({ context }) => context.resume === 'expired',
    isPastExpiry: ({ context }) => context.remainingMs !== null && context.remainingMs <= 0,
    expires: ({ context }) => context.remainingMs !== null,
    lastStep: ({ context }) => isLastStep(context.remainingMs ?? 0),
  },
  actions: {
    emitCreated: emit(({ context }) => ({ type: 'apikey.created' as const, ...context.created! })),
    emitExpired: emit({ type: 'apikey.expired' as const }),
    countDown: assign({ remainingMs: ({ context }) => (context.remainingMs ?? 0) - MAX_DELAY_MS }),
  },
}).createMachine({
  id: 'apiKey',
  context: ({ input }) => toContext(input),
  initial: 'init',
  states: {
    init: {
      always: [
        { guard: 'wasInvalidated', target: 'invalidated' },
        { guard: 'wasExpired', target: 'expired' },
        { guard: 'isNew', target: 'active', actions: 'emitCreated' },
        { guard: 'isPastExpiry', target: 'expired', actions: 'emitExpired' },
        { target: 'active' },
      ],
    },
    active: {
      initial: 'route',
      on: {
        update: {
          target: 'active',
          reenter: true, // a new expiration restarts the timer
          actions: [
            assign({
              remainingMs: ({ context, event }) =>
                event.expiration === undefined ? context.remainingMs : event.expiration === null ? null : event.expiration - event.at,
            }),
            emit(({ event }) => {
              const { type: _t, ...data } = event;
              return { type: 'apikey.updated' as const, ...data };
            }),
          ],
        },
        invalidate: {
          target: 'invalidated',
          actions: emit(({ event }) => ({ type: 'apikey.invalidated' as const, invalidation: event.at, ...(event.cascadeOf ? { cascadeOf: event.cascadeOf } : {}) })),
        },
      },
      states: {
        route: { always: [{ guard: 'expires', target: 'expiring' }, { target: 'forever' }] },
        expiring: {
          after: {
            untilExpiry: [
              { guard: 'lastStep', target: '#apiKey.expired', actions: 'emitExpired' },
              { target: 'expiring', reenter: true, actions: 'countDown' },
            ],
          },
        },
        forever: {},
      },
    },
    invalidated: { type: 'final' },
    expired: { type: 'final' },
  },
});
