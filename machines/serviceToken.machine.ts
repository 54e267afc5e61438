import { emit, setup } from 'xstate';
import type { Envelope } from '../actors/wire/envelope';

/**
 * One service account token created over REST (ES's `_service_account_index` tokens): `active` →
 * `invalidated` when deleted. Service tokens never expire. File-backed tokens (`config/service_tokens`)
 * are node-local configuration and have no lifecycle facts.
 */

export interface ServiceTokenCreated {
  /** `elastic/fleet-server` */
  account: string;
  name: string;
  /** `{PBKDF2_STRETCH}` hash of the secret. */
  hash: string;
  creation: number;
  /** Who created it (username, realm). */
  creator: { username: string; realm: string };
}
export interface ServiceTokenInvalidated {
  at: number;
}

export type ServiceTokenFactBody =
  | ({ type: 'servicetoken.created' } & ServiceTokenCreated)
  | ({ type: 'servicetoken.invalidated' } & ServiceTokenInvalidated);

export type ServiceTokenFact =
  | Envelope<'servicetoken.created', ServiceTokenCreated>
  | Envelope<'servicetoken.invalidated', ServiceTokenInvalidated>;

export type ServiceTokenStatus = 'active' | 'invalidated';

export interface ServiceTokenRecord extends ServiceTokenCreated {
  tokenId: string;
  seq: number;
  status: ServiceTokenStatus;
}

/** Folds one fact into the record (idempotent by per-aggregate seq). */
export function evolveServiceToken(
  rec: ServiceTokenRecord | undefined,
  e: Pick<Envelope, 'type' | 'aggregateId' | 'seq' | 'data'>,
): ServiceTokenRecord | undefined {
  if (rec && e.seq <= rec.seq) return rec;
  if (e.type === 'servicetoken.created') return rec ?? { ...(e.data as ServiceTokenCreated), tokenId: e.aggregateId, seq: e.seq, status: 'active' };
  if (rec && e.type === 'servicetoken.invalidated') return { ...rec, seq: e.seq, status: 'invalidated' };
  return rec;
}

export interface ServiceTokenInput {
  tokenId: string;
  created?: ServiceTokenCreated;
  record?: ServiceTokenRecord;
}

interface Ctx {
  tokenId: string;
  resume?: ServiceTokenStatus;
  created?: ServiceTokenCreated;
}

/** The service token machine (see the file comment). */
export const serviceTokenMachine = setup({
  types: {
    input: {} as ServiceTokenInput,
    context: {} as Ctx,
    events: {} as { type: 'invalidate'; at: number },
    emitted: {} as ServiceTokenFactBody,
  },
  guards: {
    isNew: ({ context }) => context.created !== undefined,
    wasInvalidated: ({ context }) => context.resume === 'invalidated',
  },
}).createMachine({
  id: 'serviceToken',
  context: ({ input }) => ({ tokenId: input.tokenId, resume: input.record?.status, created: input.created }),
  initial: 'init',
  states: {
    init: {
      always: [
        { guard: 'wasInvalidated', target: 'invalidated' },
        {
          guard: 'isNew',
          target: 'active',
          actions: emit(({ context }) => ({ type: 'servicetoken.created' as const, ...context.created! })),
        },
        { target: 'active' },
      ],
    },
    active: {
      on: {
        invalidate: {
          target: 'invalidated',
          actions: emit(({ event }) => ({ type: 'servicetoken.invalidated' as const, at: event.at })),
        },
      },
    },
    invalidated: { type: 'final' },
  },
});
