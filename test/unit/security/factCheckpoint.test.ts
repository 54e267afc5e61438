import { evolveApiKey, type ApiKeyRecord } from '../../../machines/apiKey.machine';
import { CheckpointUnusable, decodeFactCheckpoint, encodeFactCheckpoint, type FactCheckpoint } from '../../../actors/security/factCheckpoint';
import { makeEnvelope } from '../../../streams';
import { apiKeyHistory } from '../../support/apiKeyFacts';

/** The records a fold of `facts` leaves, in creation order (as ApiKeyService.records holds them). */
function fold(facts: ReturnType<typeof apiKeyHistory>): ApiKeyRecord[] {
  const m = new Map<string, ApiKeyRecord>();
  for (const e of facts) {
    const next = evolveApiKey(m.get(e.aggregateId), JSON.parse(JSON.stringify(e)));
    if (next) m.set(next.keyId, next);
  }
  return [...m.values()];
}

const userFact = makeEnvelope({ type: 'user.created', aggregateId: 'u1', seq: 1, data: { username: 'bob', roles: ['r1'], passwordHash: '{PBKDF2}…' }, time: 0 });

describe('the binary credential checkpoint', () => {
  it.each([1, 2, 3, 4, 5])('gives back exactly the folded API keys it was given (random corpus %i)', (seed) => {
    const keys = fold(apiKeyHistory(300, seed));
    expect(keys.some((k) => k.status === 'invalidated') && keys.some((k) => k.status === 'expired') && keys.some((k) => k.expiration !== undefined)).toBe(true);
    const cp: FactCheckpoint = { seq: 1234, facts: [userFact], apiKeys: keys };
    const back = decodeFactCheckpoint(encodeFactCheckpoint(cp, 'es.v1.evt.user.u1.created@2026'));
    expect(back.seq).toBe(1234);
    expect(back.stream).toBe('es.v1.evt.user.u1.created@2026');
    expect(back.facts).toEqual([userFact]);
    expect(back.apiKeys).toStrictEqual(keys);
  });

  it('stores each distinct shared value once and gives equal values one object back', () => {
    const keys = fold(apiKeyHistory(500, 7));
    const back = decodeFactCheckpoint(encodeFactCheckpoint({ seq: 1, facts: [], apiKeys: keys }, 'empty'));
    const distinct = new Set(back.apiKeys.flatMap((k) => [k.owner, k.roleDescriptors, k.limitedBy, k.metadata]));
    expect(distinct.size).toBeLessThanOrEqual(3 + 3 + 3); // owners, descriptors (two orders of one are one), metadata
  });

  it('refuses a damaged, truncated or foreign file with the reason', () => {
    const bytes = encodeFactCheckpoint({ seq: 9, facts: [userFact], apiKeys: fold(apiKeyHistory(50, 3)) }, 'empty');
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 3] ^= 1;
    expect(() => decodeFactCheckpoint(flipped)).toThrow(new CheckpointUnusable('checksum mismatch'));
    expect(() => decodeFactCheckpoint(bytes.subarray(0, bytes.length - 8))).toThrow(CheckpointUnusable);
    expect(() => decodeFactCheckpoint(Buffer.from('{"version":1,"seq":3}\n{}\n'))).toThrow(new CheckpointUnusable('not a checkpoint'));
    expect(() => decodeFactCheckpoint(Buffer.alloc(0))).toThrow(CheckpointUnusable);
  });
});
