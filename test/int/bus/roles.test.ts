/**
 * Issue 18: the bus lets in only its users, and the subscriber role reads lifecycle facts and
 * nothing else. Against a real nats-server secured as a node's embedded one, a node with security on,
 * and the official client.
 */
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { DATA_STREAM, EVENT_STREAM, makeEnvelope, readFacts, subjects, Aggregate } from '../../../streams';
import { userAggregateId } from '../../../actors/security/userStore';
import { hashSecret } from '../../../actors/security/hashing';
import { factMsgId } from '../../../actors/security/factLog';
import type { SecurityModuleWithServices } from '../../../actors/security';
import { NODE_ONLY_STREAMS } from '../../../streams/busPermissions';

const violation = (p: Promise<unknown>) => p.then(() => 'allowed', (e: Error) => e.message);

const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;

let t: TestNode;
let sub: NatsConnection;

/** `_authenticate` status with elastic and `password`. */
const loginAsElastic = async (password: string) =>
  (await fetch(`${t.url}/_security/_authenticate`, { headers: { authorization: basic('elastic', password) } })).status;

/** The forged fact of the issue: elastic's next password_changed with a hash of the attacker's password. */
async function forgedPasswordFact(password: string) {
  const id = userAggregateId('elastic');
  const node = await t.nats.connect();
  let seq = 0;
  for await (const f of readFacts(node, { filterSubject: subjects.factsOf(Aggregate.User, id) })) seq = Math.max(seq, f.seq);
  await node.close();
  const env = { ...makeEnvelope({ type: 'user.password_changed', aggregateId: id, seq: seq + 1, data: { username: 'elastic', realm: 'reserved', passwordHash: await hashSecret(password, 'pbkdf2') } }) };
  return { subject: subjects.fact(Aggregate.User, id, 'password_changed'), env: { ...env, id: factMsgId('user', id, seq + 1) } };
}

beforeAll(async () => {
  t = await startTestNode({ security: true });
  sub = await t.nats.connect('subscriber');
});
afterAll(async () => {
  await sub?.close();
  await t?.stop();
});

describe('who gets in', () => {
  it('refuses an anonymous client', async () => {
    await expect(connect({ servers: t.nats.url, reconnect: false })).rejects.toThrow('Authorization Violation');
  });

  it('refuses a client with a key the server does not know', async () => {
    const { nkeys } = await import('@nats-io/nats-core');
    const stranger = new TextDecoder().decode(nkeys.createUser().getSeed());
    const { connectBus } = await import('../../../streams/busConnection');
    await expect(connectBus({ servers: [t.nats.url], nkeySeed: stranger }, { reconnect: false })).rejects.toThrow('Authorization Violation');
  });
});

describe('a forged password fact', () => {
  it('from the subscriber is refused, and the forged password does not log in', async () => {
    expect(await loginAsElastic(ELASTIC_PASSWORD)).toBe(200);
    const forged = await forgedPasswordFact('forged-password-1');
    await expect(jetstream(sub).publish(forged.subject, JSON.stringify(forged.env), { msgID: forged.env.id, timeout: 5_000 })).rejects.toThrow(
      `Permissions Violation for Publish to "${forged.subject}"`,
    );
    sub.publish(forged.subject, JSON.stringify(forged.env)); // a core publish (no ack asked) is dropped too
    await sub.flush().catch(() => undefined);
    await (t.sys.security as SecurityModuleWithServices).services!.facts.catchUp();
    expect(await loginAsElastic('forged-password-1')).toBe(401);
    expect(await loginAsElastic(ELASTIC_PASSWORD)).toBe(200);
  });

  it('would log in if it reached the log: the same fact appended with the node role works (what the roles prevent)', async () => {
    const forged = await forgedPasswordFact('node-written-password-1');
    const node = await t.nats.connect();
    await jetstream(node).publish(forged.subject, JSON.stringify(forged.env), { msgID: forged.env.id });
    await node.close();
    await (t.sys.security as SecurityModuleWithServices).services!.facts.catchUp();
    expect(await loginAsElastic('node-written-password-1')).toBe(200);
    const res = await fetch(`${t.url}/_security/user/elastic/_password`, {
      method: 'POST',
      headers: { authorization: basic('elastic', 'node-written-password-1'), 'content-type': 'application/json' },
      body: JSON.stringify({ password: ELASTIC_PASSWORD }),
    });
    expect(res.status).toBe(200);
  });
});

describe('the subscriber role', () => {
  it('replays ES_EVT through a JetStream consumer', async () => {
    const types: string[] = [];
    for await (const f of readFacts(sub)) types.push(f.type);
    expect(types).toContain('user.password_changed');
  });

  it.each([
    ['purge ES_EVT', (n: NatsConnection) => jetstreamManager(n).then((m) => m.streams.purge(EVENT_STREAM)), '$JS.API.STREAM.PURGE.ES_EVT'],
    ['delete ES_EVT', (n: NatsConnection) => jetstreamManager(n).then((m) => m.streams.delete(EVENT_STREAM)), '$JS.API.STREAM.DELETE.ES_EVT'],
    ['read ES_DATA', (n: NatsConnection) => jetstream(n).consumers.get(DATA_STREAM).then((c) => c.next()), `$JS.API.STREAM.INFO.${DATA_STREAM}`],
    ['get an ES_DATA message', (n: NatsConnection) => jetstreamManager(n).then((m) => m.streams.getMessage(DATA_STREAM, { seq: 1 })), `$JS.API.STREAM.MSG.GET.${DATA_STREAM}`],
    ['read the KV bucket of the id-signing keys', (n: NatsConnection) => new Kvm(n).open('ES_CLUSTER').then((kv) => kv.get('idkey.1')), /\$JS\.API\.(STREAM\.(INFO|MSG\.GET)|DIRECT\.GET)\.KV_ES_CLUSTER/],
  ])('cannot %s', async (_what, act, subject) => {
    const err = await (act(sub) as Promise<unknown>).then(() => undefined, (e: Error) => e.message);
    if (typeof subject === 'string') expect(err).toBe(`Permissions Violation for Publish to "${subject}"`);
    else expect(err).toMatch(new RegExp(`^Permissions Violation for Publish to "${subject.source}`));
    const node = await t.nats.connect();
    expect((await (await jetstreamManager(node)).streams.info(EVENT_STREAM)).state.messages).toBeGreaterThan(0);
    await node.close();
  });

  it('cannot clear another user\'s scroll through its command subject', async () => {
    await t.es.indices.create({ index: 'books' });
    await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'books' } }, { n: 1 }, { index: { _index: 'books' } }, { n: 2 }] });
    const first = await t.es.search({ index: 'books', scroll: '1m', size: 1 });
    const ctx = t.sys.services.contexts.list('scroll')[0];
    expect(ctx).toBeDefined();
    await expect(sub.request(subjects.command(Aggregate.Scroll, ctx.id, 'clear'), '{}', { timeout: 2_000 })).rejects.toThrow(
      `Permissions Violation for Publish to "${subjects.command(Aggregate.Scroll, ctx.id, 'clear')}"`,
    );
    const next = await t.es.scroll({ scroll_id: first._scroll_id!, scroll: '1m' });
    expect(next.hits.hits).toHaveLength(1);
  });

  it('cannot listen to a node\'s replies (documents travel there)', async () => {
    const s = sub.subscribe('_INBOX.>');
    const closed = await s.closed.then((v: unknown) => (v instanceof Error ? v.message : 'closed without an error'), (e: Error) => e.message);
    expect(closed).toMatch(/Permissions Violation for Subscription to "_INBOX.>"/);
  });
});

describe('the subscriber role, everything else the issue names', () => {
  it('publishes nothing under es.v1.> with core NATS: a node listening there receives none of it', async () => {
    const node = await t.nats.connect();
    const got: string[] = [];
    const targets = ['es.v1.auth.invalidate', 'es.v1.shard.probe.0', 'es.v1.cmd.scroll.x.clear', 'es.v1.data.meta', 'es.v1.members.x.heartbeat', 'es.v1.node.x.probe'];
    const subs = targets.map((s) => node.subscribe(s, { callback: (_e, m) => void got.push(m.subject) }));
    await node.flush();
    const errors: string[] = [];
    void (async () => {
      for await (const st of sub.status()) if (st.type === 'error') errors.push(String((st as { error?: Error }).error?.message ?? st.type));
    })();
    for (const s of targets) sub.publish(s, JSON.stringify({ origin: 'x', kind: 'role', ids: [] }));
    await sub.flush().catch(() => undefined);
    await node.flush();
    await new Promise((r) => setTimeout(r, 300));
    for (const s of subs) s.unsubscribe();
    await node.close();
    expect(got).toEqual([]);
    for (const s of targets) expect(errors.join('\n')).toContain(`Permissions Violation for Publish to "${s}"`);
  });

  it('cannot update ES_EVT (no retention change, no subjects added)', async () => {
    const jsm = await jetstreamManager(sub);
    const cfg = (await jsm.streams.info(EVENT_STREAM)).config;
    expect(await violation(jsm.streams.update(EVENT_STREAM, { ...cfg, max_msgs: 1 }))).toBe(`Permissions Violation for Publish to "$JS.API.STREAM.UPDATE.${EVENT_STREAM}"`);
  });

  it.each(NODE_ONLY_STREAMS)('cannot read %s: no info, no message, no consumer', async (stream) => {
    const jsm = await jetstreamManager(sub);
    expect(await violation(jsm.streams.info(stream))).toBe(`Permissions Violation for Publish to "$JS.API.STREAM.INFO.${stream}"`);
    expect(await violation(jsm.streams.getMessage(stream, { seq: 1 }))).toBe(`Permissions Violation for Publish to "$JS.API.STREAM.MSG.GET.${stream}"`);
    expect(await violation(jsm.consumers.add(stream, { ack_policy: AckPolicy.None }))).toMatch(new RegExp(`^Permissions Violation for Publish to "\\$JS\\.API\\.CONSUMER\\.CREATE\\.${stream}`));
  });

  it('cannot read the sealing key of the credential facts through the KV API', async () => {
    expect(await violation(new Kvm(sub).open('ES_SECRETS').then((kv) => kv.get('seal')))).toMatch(/^Permissions Violation for Publish to "\$JS\.API\.(STREAM\.(INFO|MSG\.GET)|DIRECT\.GET)\.KV_ES_SECRETS/);
    expect(await violation(new Kvm(sub).open('ES_LEASES').then((kv) => kv.get('allocator')))).toMatch(/^Permissions Violation for Publish to "\$JS\.API\.(STREAM\.(INFO|MSG\.GET)|DIRECT\.GET)\.KV_ES_LEASES/);
  });

  it('cannot turn a push consumer of ES_EVT into a publisher of lifecycle facts or context commands', async () => {
    // nats-server 2.9 does not check a consumer's deliver subject against its creator's permissions
    // (nats-io/nats-server#8274): the server refuses a subject of the stream itself (a cycle), and a
    // copy of a fact delivered on a command subject is not a command.
    const jsm = await jetstreamManager(sub);
    expect(await violation(jsm.consumers.add(EVENT_STREAM, { deliver_subject: 'es.v1.evt.user.x.password_changed', ack_policy: AckPolicy.None }))).toMatch(/cycle/);
    await t.es.indices.create({ index: 'pushed' });
    await t.es.bulk({ refresh: true, operations: [{ index: { _index: 'pushed' } }, { n: 1 }, { index: { _index: 'pushed' } }, { n: 2 }] });
    const known = new Set(t.sys.services.contexts.list('scroll').map((c) => c.id));
    const first = await t.es.search({ index: 'pushed', scroll: '1m', size: 1 });
    const ctx = t.sys.services.contexts.list('scroll').find((c) => !known.has(c.id))!;
    for (const cmd of ['clear', 'release', 'use']) {
      const ci = await jsm.consumers.add(EVENT_STREAM, { deliver_subject: subjects.command(Aggregate.Scroll, ctx.id, cmd), ack_policy: AckPolicy.None, deliver_policy: DeliverPolicy.All });
      await new Promise((r) => setTimeout(r, 200));
      await jsm.consumers.delete(EVENT_STREAM, ci.name);
    }
    const next = await t.es.scroll({ scroll_id: first._scroll_id!, scroll: '1m' });
    expect(next.hits.hits).toHaveLength(1);
  });
});
