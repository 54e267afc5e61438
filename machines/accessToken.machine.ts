import { assign, emit, getInitialSnapshot, setup } from 'xstate';
import type { Envelope } from '../actors/wire/envelope';
import { isLastStep, MAX_DELAY_MS, nextStep } from './longDelay';

/**
 * One OAuth2 token pair (ES's token document): an access token and, except for `client_credentials`,
 * a refresh token. Facts carry ids and hashes only, never a token value.
 *
 * `live.active` → refresh → `live.refreshed.window` (the refresh token is spent; for 30 s a retry gets
 * the same new pair) → `live.refreshed.closed`; the old access token lives on until its own expiry, as in
 * ES → `invalidated` once both halves are invalidated, or `expired` when the
 * document ends (refresh token's 24h, or the access token's life when there is no refresh token).
 */

/** Who the token speaks for: the owner's authentication at grant time (never a secret). */
export interface TokenSubject {
  username: string;
  roles: string[];
  full_name: string | null;
  email: string | null;
  metadata: Record<string, unknown>;
  realm: { name: string; type: string };
  /** `authentication_type` of the grant's authentication (`realm`, `api_key`, `token`). */
  authenticationType: string;
  /** Set when the token was created by an API key (client_credentials). */
  apiKey?: { id: string; name: string | null };
  /** Set when a service account's token minted it (client_credentials): the service token's name and type. */
  serviceToken?: { name: string; type: string };
}

/** The principal that created the pair; only it may refresh (ES `canAccessResourcesOf`). */
export interface TokenClient {
  username: string;
  realm: string;
  apiKeyId?: string;
}

/** The superseding pair, encrypted with a key derived from the spent refresh token (as ES stores it). */
export interface SealedPair {
  salt: string;
  iv: string;
  tag: string;
  data: string;
}

export interface TokenCreated {
  /** base64url SHA-256 of the access token value (the lookup key). */
  accessHash: string;
  refreshHash?: string;
  createdAt: number;
  accessExpiresAt: number;
  refreshExpiresAt?: number;
  grantType: 'password' | 'client_credentials' | 'refresh_token';
  subject: TokenSubject;
  client: TokenClient;
  /** tokenId of the pair whose refresh produced this one. */
  supersedes?: string;
}
export interface TokenRefreshed {
  refreshedAt: number;
  supersededBy: string;
  superseding: SealedPair;
}
export interface TokenInvalidated {
  access: boolean;
  refresh: boolean;
  at: number;
  /** Set when the pair was revoked with its family after a spent refresh token was presented again. */
  reason?: 'reuse_detected';
}
/**
 * A spent refresh token was presented after its 30 s window (OAuth 2.0 Security BCP, with
 * `xpack.security.authc.token.reuse_detection: revoke_family`): every pair of its family is revoked.
 */
export interface TokenReuseDetected {
  at: number;
  /** tokenId of the family's first pair (the grant every pair of it descends from). */
  family: string;
}

export type TokenFactBody =
  | ({ type: 'token.created' } & TokenCreated)
  | ({ type: 'token.refreshed' } & TokenRefreshed)
  | ({ type: 'token.invalidated' } & TokenInvalidated)
  | ({ type: 'token.reuse_detected' } & TokenReuseDetected)
  | { type: 'token.expired' };

export type TokenFact =
  | Envelope<'token.created', TokenCreated>
  | Envelope<'token.refreshed', TokenRefreshed>
  | Envelope<'token.invalidated', TokenInvalidated>
  | Envelope<'token.reuse_detected', TokenReuseDetected>
  | Envelope<'token.expired', Record<string, never>>;

export type TokenStatus = 'active' | 'refreshed' | 'invalidated' | 'expired';

/** The folded state of a token pair: what the node keeps at rest (no live actor). */
export interface AccessTokenRecord extends TokenCreated {
  tokenId: string;
  seq: number;
  status: TokenStatus;
  accessInvalidated: boolean;
  refreshInvalidated: boolean;
  refreshedAt?: number;
  supersededBy?: string;
  superseding?: SealedPair;
  /** When a re-use of the spent refresh token was detected (the family was revoked). */
  reuseDetectedAt?: number;
}

/** A spent refresh token may be re-used this long and yields the same new pair (ES TokenService). */
export const REFRESH_WINDOW_MS = 30_000;

/** End of the token document: the refresh token's life, else the access token's. */
export const tokenDocExpiresAt = (t: Pick<TokenCreated, 'refreshExpiresAt' | 'accessExpiresAt'>) =>
  t.refreshExpiresAt ?? t.accessExpiresAt;

/** Folds one fact into the record (idempotent: facts at or below the record's seq are ignored). */
export function evolveToken(rec: AccessTokenRecord | undefined, e: Pick<Envelope, 'type' | 'aggregateId' | 'seq' | 'data'>): AccessTokenRecord | undefined {
  if (rec && e.seq <= rec.seq) return rec;
  if (e.type === 'token.created') {
    if (rec) return rec;
    const d = e.data as TokenCreated;
    return { ...d, tokenId: e.aggregateId, seq: e.seq, status: 'active', accessInvalidated: false, refreshInvalidated: false };
  }
  if (!rec) return rec;
  switch (e.type) {
    case 'token.refreshed': {
      const d = e.data as TokenRefreshed;
      return { ...rec, seq: e.seq, status: rec.status === 'active' ? 'refreshed' : rec.status, ...d };
    }
    case 'token.invalidated': {
      const d = e.data as TokenInvalidated;
      const accessInvalidated = rec.accessInvalidated || d.access;
      const refreshInvalidated = rec.refreshInvalidated || d.refresh;
      const all = accessInvalidated && (refreshInvalidated || !rec.refreshHash);
      return { ...rec, seq: e.seq, accessInvalidated, refreshInvalidated, status: all ? 'invalidated' : rec.status };
    }
    case 'token.reuse_detected':
      return { ...rec, seq: e.seq, reuseDetectedAt: (e.data as TokenReuseDetected).at };
    case 'token.expired':
      return { ...rec, seq: e.seq, status: rec.status === 'invalidated' ? rec.status : 'expired' };
    default:
      return rec;
  }
}

interface Ctx {
  tokenId: string;
  hasRefresh: boolean;
  accessInvalidated: boolean;
  refreshInvalidated: boolean;
  /** Time left until the document ends, counted down in steps (longDelay.ts). */
  remainingMs: number;
  /** Where a hydrated actor resumes; absent for a new pair. */
  resume?: TokenStatus;
  /** Time left in the re-use window of a spent refresh token. */
  windowMs: number;
  created?: TokenCreated;
}

export interface AccessTokenInput {
  tokenId: string;
  /** The node clock when the actor starts. */
  now: number;
  /** A new pair (emits `token.created`)... */
  created?: TokenCreated;
  /** ...or the record to resume from. */
  record?: AccessTokenRecord;
}

export type AccessTokenEvent =
  | { type: 'refresh'; refreshedAt: number; supersededBy: string; superseding: SealedPair }
  | { type: 'invalidate'; access: boolean; refresh: boolean; at: number; reason?: 'reuse_detected' }
  /** The spent refresh token was presented again: a fact only once its re-use window is closed. */
  | { type: 'reuse'; at: number; family: string };

/** Actor input for a new pair or for a record at rest. */
export function accessTokenInput(input: AccessTokenInput): Ctx {
  const src = input.created ?? input.record;
  if (!src) throw new Error('accessToken: created or record required');
  return {
    tokenId: input.tokenId,
    // A sealed fact (replay without the node's key) has no refreshHash, but a refresh token always has its expiry.
    hasRefresh: src.refreshHash !== undefined || src.refreshExpiresAt !== undefined,
    accessInvalidated: input.record?.accessInvalidated ?? false,
    refreshInvalidated: input.record?.refreshInvalidated ?? false,
    remainingMs: tokenDocExpiresAt(src) - input.now,
    resume: input.record?.status,
    windowMs: input.record?.refreshedAt === undefined ? 0 : Math.max(0, input.record.refreshedAt + REFRESH_WINDOW_MS - input.now),
    created: input.created,
  };
}

const afterInvalidate = (c: Ctx, e: { access: boolean; refresh: boolean }) => {
  const access = c.accessInvalidated || e.access;
  const refresh = c.refreshInvalidated || e.refresh;
  return { access, refresh, all: access && (refresh || !c.hasRefresh) };
};

/** The token pair machine (see the file comment). */
export const accessTokenMachine = setup({
  types: {
    input: {} as AccessTokenInput,
    context: {} as Ctx,
    events: {} as AccessTokenEvent,
    emitted: {} as TokenFactBody,
  },
  delays: {
    untilExpiry: ({ context }) => nextStep(context.remainingMs),
    refreshWindow: ({ context }) => context.windowMs,
  },
  guards: {
    isNew: ({ context }) => context.created !== undefined,
    wasInvalidated: ({ context }) => context.resume === 'invalidated',
    wasExpired: ({ context }) => context.resume === 'expired',
    isPastExpiry: ({ context }) => context.remainingMs <= 0,
    wasRefreshed: ({ context }) => context.resume === 'refreshed',
    windowOpen: ({ context }) => context.windowMs > 0,
    lastStep: ({ context }) => isLastStep(context.remainingMs),
    refreshUsable: ({ context }) => context.hasRefresh && !context.refreshInvalidated,
    invalidatesAll: ({ context, event }) => event.type === 'invalidate' && afterInvalidate(context, event).all,
    changesSomething: ({ context, event }) => {
      if (event.type !== 'invalidate') return false;
      const n = afterInvalidate(context, event);
      return n.access !== context.accessInvalidated || n.refresh !== context.refreshInvalidated;
    },
  },
  actions: {
    emitCreated: emit(({ context }) => ({ type: 'token.created' as const, ...context.created! })),
    emitExpired: emit({ type: 'token.expired' as const }),
    applyInvalidate: assign(({ context, event }) => {
      if (event.type !== 'invalidate') return {};
      const n = afterInvalidate(context, event);
      return { accessInvalidated: n.access, refreshInvalidated: n.refresh };
    }),
    emitInvalidated: emit(({ event }) => {
      const e = event as Extract<AccessTokenEvent, { type: 'invalidate' }>;
      return { type: 'token.invalidated' as const, access: e.access, refresh: e.refresh, at: e.at, ...(e.reason ? { reason: e.reason } : {}) };
    }),
    countDown: assign({ remainingMs: ({ context }) => context.remainingMs - MAX_DELAY_MS }),
  },
}).createMachine({
  id: 'accessToken',
  context: ({ input }) => accessTokenInput(input),
  initial: 'init',
  states: {
    init: {
      always: [
        { guard: 'isNew', target: 'live', actions: 'emitCreated' },
        { guard: 'wasInvalidated', target: 'invalidated' },
        { guard: 'wasExpired', target: 'expired' },
        { guard: 'isPastExpiry', target: 'expired', actions: 'emitExpired' },
        { target: 'live' },
      ],
    },
    live: {
      initial: 'resume',
      on: {
        invalidate: [
          { guard: 'invalidatesAll', target: 'invalidated', actions: ['applyInvalidate', 'emitInvalidated'] },
          { guard: 'changesSomething', actions: ['applyInvalidate', 'emitInvalidated'] },
        ],
      },
      states: {
        resume: { always: [{ guard: 'wasRefreshed', target: 'refreshed' }, { target: 'active' }] },
        active: {
          on: {
            refresh: {
              guard: 'refreshUsable',
              target: 'refreshed',
              actions: [
                // a later re-entry of `live` (long countdown) must resume here, not in `active`
                assign({ resume: 'refreshed' as const, windowMs: REFRESH_WINDOW_MS }),
                emit(({ event }) => ({
                  type: 'token.refreshed' as const,
                  refreshedAt: event.refreshedAt,
                  supersededBy: event.supersededBy,
                  superseding: event.superseding,
                })),
              ],
            },
          },
        },
        refreshed: {
          initial: 'resume',
          states: {
            resume: { always: [{ guard: 'windowOpen', target: 'window' }, { target: 'closed' }] },
            // Re-using the spent refresh token returns the same pair; no fact: the window follows from refreshedAt.
            window: { after: { refreshWindow: 'closed' } },
            // After the window a re-use is an attack signal (OAuth 2.0 Security BCP §4.14): told once.
            closed: {
              on: {
                reuse: {
                  actions: emit(({ event }) => ({ type: 'token.reuse_detected' as const, at: event.at, family: event.family })),
                },
              },
            },
          },
        },
      },
      after: {
        untilExpiry: [
          { guard: 'lastStep', target: 'expired', actions: 'emitExpired' },
          { target: 'live', reenter: true, actions: 'countDown' },
        ],
      },
    },
    invalidated: { type: 'final' },
    expired: { type: 'final' },
  },
});

/**
 * Whether a spent refresh token may still be re-used (the machine's `live.refreshed.window`), computed
 * from the record without starting an actor.
 */
export function inRefreshWindow(record: AccessTokenRecord, now: number): boolean {
  return getInitialSnapshot(accessTokenMachine, { tokenId: record.tokenId, now, record }).matches({ live: { refreshed: 'window' } });
}
