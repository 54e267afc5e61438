import { copyFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Bus } from '../../../streams';
import { evolveApiKey, type ApiKeyRecord } from '../../../machines/apiKey.machine';
import { CHECKPOINT_FILE } from '../../../actors/security/factCheckpoint';
import { canonicalJson } from '../../../actors/security/roleDescriptor';
import { basic, call, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';
import { apiKeyHistory } from '../../support/apiKeyFacts';

/**
 * The credential state a node starts with must not depend on where it comes from: the whole log,
 * the newest checkpoint, or an older checkpoint plus the log after it.
 */
describe('credential state from the checkpoint vs from the log (random API key histories)', () => {
  let h: SecurityHarness;
  const facts = apiKeyHistory(400, 11);
  const half = Math.floor(facts.length / 2);
  const path = () => join(h.dataDir, CHECKPOINT_FILE);
  const older = () => `${path()}.older`;

  /** What a fold of the log gives, computed here on its own. */
  const expected = new Map<string, ApiKeyRecord>();
  for (const e of facts) {
    const next = evolveApiKey(expected.get(e.aggregateId), JSON.parse(JSON.stringify(e)));
    if (next) expected.set(next.keyId, next);
  }
  /** The node's keys that came from the corpus (not the ones the harness made), in its order. */
  const keys = () => [...h.security.services!.apiKeys.records.values()].filter((r) => expected.has(r.keyId));
  const others = async () => {
    const s = h.security.services!;
    return {
      users: s.users.native(),
      roles: s.roles.all(),
      tokens: s.tokens.activeFor().map((t) => t.tokenId),
      service: s.serviceAccounts.indexTokenNames('elastic/fleet-server'),
      me: (await call(h.url, 'GET', '/_security/_authenticate', { auth: basic('bob', 'bob-password') })).body,
    };
  };

  beforeAll(async () => {
    h = await startSecurityHarness();
    const elastic = basic('elastic', ELASTIC_PASSWORD);
    await call(h.url, 'PUT', '/_security/user/bob', { auth: elastic, body: { password: 'bob-password', roles: ['viewer'] } });
    await call(h.url, 'POST', '/_security/oauth2/token', { auth: elastic, body: { grant_type: 'client_credentials' } });
    await call(h.url, 'POST', '/_security/service/elastic/fleet-server/credential/token/t1', { auth: elastic });
    const bus1 = new Bus(h.nc);
    await Promise.all(facts.slice(0, half).map((e) => bus1.append(e)));
    await h.restart(); // the stop writes a checkpoint holding the first half
    copyFileSync(path(), older());
    const bus2 = new Bus(h.nc); // the restarted node's connection
    await Promise.all(facts.slice(half).map((e) => bus2.append(e)));
  });
  afterAll(async () => {
    await h.stop();
  });

  it('folds the same API keys from the whole log as a fold of the facts does', async () => {
    await h.restart(() => rmSync(path()));
    expect(keys()).toStrictEqual([...expected.values()]);
  });

  it('starts with the same state from the newest checkpoint as from the whole log', async () => {
    await h.restart(() => rmSync(path()));
    const fromLog = { keys: keys(), ...(await others()) };
    await h.restart(); // this stop wrote a checkpoint of the whole log
    expect(existsSync(path())).toBe(true);
    await h.restart();
    expect({ keys: keys(), ...(await others()) }).toStrictEqual(fromLog);
  });

  it('starts with the same state from an older checkpoint plus the log after it', async () => {
    await h.restart(() => rmSync(path()));
    const fromLog = { keys: keys(), ...(await others()) };
    await h.restart(() => copyFileSync(older(), path()));
    expect({ keys: keys(), ...(await others()) }).toStrictEqual(fromLog);
  });

  it('shares equal descriptors, owners and metadata between loaded keys (one object each)', async () => {
    await h.restart();
    const loaded = keys();
    const objects = new Set(loaded.flatMap((k) => [k.owner, k.roleDescriptors, k.limitedBy, k.metadata]));
    const canonical = new Set(loaded.flatMap((k) => [k.owner, k.roleDescriptors, k.limitedBy, k.metadata].map(canonicalJson)));
    expect(objects.size).toBe(canonical.size);
  });
});
