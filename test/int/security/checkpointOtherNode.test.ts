import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHECKPOINT_FILE, decodeFactCheckpoint } from '../../../actors/security/factCheckpoint';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

/**
 * The credential checkpoint holds what the log says is live as of its sequence, whatever the node
 * writing it happens to hold in memory: a token created on another node that this node has not
 * folded yet (its follow over core NATS lags the log, or lost the fact) must not be dropped.
 */
describe('credential checkpoint and tokens created on another node', () => {
  let a: SecurityHarness;
  let b: SecurityHarness;
  const elastic = basic('elastic', ELASTIC_PASSWORD);
  const status = async (h: SecurityHarness, auth: string) => (await call(h.url, 'GET', '/_security/_authenticate', { auth })).status;
  /** A password grant through `h`, with the token id `h` gave it (ids never leave the node otherwise). */
  const grant = async (h: SecurityHarness) => {
    const had = new Set(h.security.services!.tokens.activeFor().map((r) => r.tokenId));
    const body = (await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'password', username: 'elastic', password: ELASTIC_PASSWORD } })).body;
    const ids = h.security.services!.tokens.activeFor().map((r) => r.tokenId).filter((id) => !had.has(id));
    expect(ids).toHaveLength(1);
    return { ...body, id: ids[0] } as { access_token: string; refresh_token: string; id: string };
  };
  const tokenIds = (h: SecurityHarness) => {
    const cp = decodeFactCheckpoint(readFileSync(join(h.dataDir, CHECKPOINT_FILE)));
    return { seq: cp.seq, ids: new Set(cp.facts.filter((f) => f.type === 'token.created').map((f) => f.aggregateId)) };
  };

  beforeAll(async () => {
    a = await startSecurityHarness({ nodeName: 'a' });
    b = await startSecurityHarness({ nats: a.nats, nodeName: 'b' });
  });
  afterAll(async () => {
    await b?.stop();
    await a?.stop();
  });

  it('keeps a token node B has not folded yet in the checkpoint B writes, so it authenticates on B after a restart', async () => {
    const before = await grant(a);
    for (let i = 0; i < 100 && (await status(b, `Bearer ${before.access_token}`)) !== 200; i++) await new Promise((r) => setTimeout(r, 10));
    expect(await status(b, `Bearer ${before.access_token}`)).toBe(200); // B follows A

    // B's follow lags the log from here on: it has not folded what A writes next
    await b.security.services!.facts.stop();
    const t = await grant(a);
    expect(await status(a, `Bearer ${t.access_token}`)).toBe(200);
    const tokenId = t.id;
    expect(b.security.services!.tokens.get(tokenId)).toBeUndefined(); // A has it, B does not

    await b.restart(); // B's stop writes its checkpoint (the token's facts are below its sequence), then B starts from it
    const cp = tokenIds(b);
    expect(cp.ids.has(tokenId)).toBe(true);
    expect(await status(b, `Bearer ${t.access_token}`)).toBe(200);
    expect(await status(b, `Bearer ${before.access_token}`)).toBe(200);

    // and the next checkpoint (the previous one plus the log after it) still has it
    await b.restart();
    expect(tokenIds(b).ids.has(tokenId)).toBe(true);
    expect(await status(b, `Bearer ${t.access_token}`)).toBe(200);
    const refreshed = await call(b.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'refresh_token', refresh_token: t.refresh_token } });
    expect(refreshed.status).toBe(200);
  });

  it('drops from the checkpoint a token the log says has expired, and keeps an invalidated one until its document ends', async () => {
    const gone = await grant(a);
    const dead = await grant(a);
    await call(a.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { token: dead.access_token } });
    await call(a.url, 'DELETE', '/_security/oauth2/token', { auth: elastic, body: { refresh_token: dead.refresh_token } });
    const goneId = gone.id;
    // past the refresh token's 24 h: A's sweep writes `token.expired` for `gone` (and forgets both tokens)
    a.advance(25 * 3_600_000);
    await a.security.services!.tokens.sweep();
    expect(a.security.services!.tokens.get(goneId)).toBeUndefined();
    expect(a.security.services!.tokens.get(dead.id)).toBeUndefined(); // A forgot both
    await b.restart();
    const { ids } = tokenIds(b);
    expect(ids.has(goneId)).toBe(false);
    // `dead` was invalidated, not expired: the log's own time has not reached the end of its document
    expect(ids.has(dead.id)).toBe(true);
    expect((await call(b.url, 'GET', '/_security/_authenticate', { auth: `Bearer ${dead.access_token}` })).body.error.reason).toBe('token expired');
  });
});
