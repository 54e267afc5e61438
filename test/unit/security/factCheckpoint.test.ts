import { evolveApiKey, type ApiKeyRecord } from '../../../machines/apiKey.machine';
import { CheckpointUnusable, decodeFactCheckpoint, encodeFactCheckpoint, liveTokens, type FactCheckpoint } from '../../../actors/security/factCheckpoint';
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

  it('keeps the parent of derived keys (a sparse section), and reads files without one', () => {
    const keys = fold(apiKeyHistory(40, 11));
    const derived = keys.map((k, i) => (i % 3 === 1 ? { ...k, parentId: keys[i - 1].keyId } : k));
    expect(decodeFactCheckpoint(encodeFactCheckpoint({ seq: 2, facts: [], apiKeys: derived }, 'x')).apiKeys).toStrictEqual(derived);
    const plain = encodeFactCheckpoint({ seq: 2, facts: [], apiKeys: keys }, 'x');
    expect(plain.includes('keyParents')).toBe(false);
    expect(decodeFactCheckpoint(plain).apiKeys.every((k) => k.parentId === undefined)).toBe(true);
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

describe('which token pairs a checkpoint keeps (a fold of its facts)', () => {
  const HOUR = 3_600_000;
  const created = (id: string, refreshExpiresAt?: number) =>
    makeEnvelope({
      type: 'token.created',
      aggregateId: id,
      seq: 1,
      time: 0,
      data: { accessHash: `h-${id}`, ...(refreshExpiresAt ? { refreshHash: `r-${id}`, refreshExpiresAt } : {}), createdAt: 0, accessExpiresAt: HOUR, grantType: 'password', subject: {}, client: {} },
    });
  const fact = (id: string, seq: number, type: string, data: object = {}) => makeEnvelope({ type, aggregateId: id, seq, time: 0, data });
  const facts = [
    created('live', 24 * HOUR),
    created('expired'),
    fact('expired', 2, 'token.expired'),
    created('invalidated-ended'),
    fact('invalidated-ended', 2, 'token.invalidated', { access: true, refresh: false }),
    created('invalidated-running', 24 * HOUR),
    fact('invalidated-running', 2, 'token.invalidated', { access: true, refresh: true }),
    created('half-invalidated', 24 * HOUR),
    fact('half-invalidated', 2, 'token.invalidated', { access: true, refresh: false }),
    fact('no-created-fact', 2, 'token.invalidated', { access: true, refresh: true }),
  ];

  it.each([
    ['keeps pairs the log has not ended, drops expired ones and invalidated ones whose document ended', 2 * HOUR, ['live', 'invalidated-running', 'half-invalidated']],
    ['keeps an invalidated pair until its document ends at the log time', 0, ['live', 'invalidated-ended', 'invalidated-running', 'half-invalidated']],
    ['drops every invalidated pair once the log is past the refresh lifetime', 25 * HOUR, ['live', 'half-invalidated']],
  ])('%s', (_what, asOf, expected) => {
    expect([...liveTokens(facts, asOf)]).toEqual(expected);
  });
});
