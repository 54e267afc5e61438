/**
 * Issues 3 and 4: PIT and scroll lifecycle facts on the event log (JetStream stream ES_EVT,
 * subjects es.v1.evt.<aggregate>.<uuid>.<fact>, envelope of streams/envelope.ts). Each test finds
 * its context through the X-Opaque-Id it sent (the facts' correlationId) and waits for facts,
 * never sleeping.
 */
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { startTestNode, type TestNode } from '../../support/node';
import { contextFactId } from '../../../actors/contexts/registry';
import { EVENT_STREAM, readStream, type Envelope } from '../../../streams';
import { allFacts, bulkIndex, eventually, factTypesOf, raw, waitForFact } from '../../e2e/search/helpers';

let t: TestNode;
let nc: NatsConnection;
jest.setTimeout(30_000);

beforeAll(async () => {
  t = await startTestNode();
  nc = await t.nats.connect();
  for (const [index, shards] of [['f1', 1], ['f2', 2]] as const) {
    await t.es.indices.create({ index, settings: { number_of_shards: shards } });
    await bulkIndex(t, index, Array.from({ length: 30 }, (_, i) => ({ n: i + 1 })), (d) => String(d.n));
  }
}, 60_000);
afterAll(async () => {
  await nc?.drain();
  await t?.stop();
});

const opaque = () => ({ 'x-opaque-id': `test-${randomUUID()}` });
const openedBy = (type: string, headers: Record<string, string>) => (f: Envelope) => f.type === type && f.correlationId === headers['x-opaque-id'];

/** Waits until the aggregate has as many facts as `types`, then expects exactly `types` (log order). */
async function expectFacts(aggregateId: string, types: string[]) {
  const got = await eventually(async () => {
    const seen = await factTypesOf(nc, aggregateId);
    return seen.length >= types.length ? seen : undefined;
  }, 6000, `${types.length} facts of ${aggregateId}`).catch(() => factTypesOf(nc, aggregateId));
  expect(got).toEqual(types);
}

describe('point in time facts', () => {
  it('appends pit.opened with the indices, shards and keep-alive before the id is returned', async () => {
    const h = opaque();
    const res = await raw(t, 'POST', '/f2/_pit?keep_alive=1m', undefined, h);
    expect(res.status).toBe(200);
    const opened = (await allFacts(nc)).find(openedBy('pit.opened', h));
    expect(opened).toBeDefined();
    expect(opened).toMatchObject({ v: 1, type: 'pit.opened', schema: 1, seq: 1, data: { indices: ['f2'], shards: 2, keepAliveMs: 60_000 } });
    expect(opened!.id).toBe(contextFactId('pit', opened!.aggregateId, 1)); // derived: one fact per seq cluster-wide
    await raw(t, 'DELETE', '/_pit', { id: res.json.id });
  });

  it('publishes facts on es.v1.evt.pit.<uuid>.<fact>, the uuid being GET /_pit context_id', async () => {
    const h = opaque();
    const res = await raw(t, 'POST', '/f1/_pit?keep_alive=1m', undefined, h);
    const listed = (await raw(t, 'GET', '/_pit')).json.pits.find((p: { id: string }) => p.id === res.json.id);
    const opened = await waitForFact(nc, openedBy('pit.opened', h));
    expect(opened.aggregateId).toBe(listed.context_id);
    const subjects: string[] = [];
    for await (const m of readStream(nc, EVENT_STREAM)) if (m.seq === opened.streamSeq) subjects.push(m.subject);
    expect(subjects).toEqual([`es.v1.evt.pit.${opened.aggregateId}.opened`]);
    await raw(t, 'DELETE', '/_pit', { id: res.json.id });
  });

  it('records opened, extended and closed for a PIT searched with keep_alive and closed', async () => {
    const h = opaque();
    const { id } = (await raw(t, 'POST', '/f1/_pit?keep_alive=1m', undefined, h)).json;
    const opened = await waitForFact(nc, openedBy('pit.opened', h));
    expect((await raw(t, 'POST', '/_search', { pit: { id, keep_alive: '2m' }, size: 1 })).status).toBe(200);
    expect((await raw(t, 'DELETE', '/_pit', { id })).status).toBe(200);
    await expectFacts(opened.aggregateId, ['pit.opened', 'pit.extended', 'pit.closed']);
    const facts = (await allFacts(nc)).filter((f) => f.aggregateId === opened.aggregateId);
    expect(facts.map((f) => f.seq)).toEqual([1, 2, 3]);
    expect(facts[1].data).toMatchObject({ keepAliveMs: 120_000 });
  });

  it('records no extended fact for a PIT search without keep_alive', async () => {
    const h = opaque();
    const { id } = (await raw(t, 'POST', '/f1/_pit?keep_alive=1m', undefined, h)).json;
    const opened = await waitForFact(nc, openedBy('pit.opened', h));
    await raw(t, 'POST', '/_search', { pit: { id }, size: 1 });
    await raw(t, 'DELETE', '/_pit', { id });
    await expectFacts(opened.aggregateId, ['pit.opened', 'pit.closed']);
  });

  it('records pit.expired when a PIT outlives its keep-alive', async () => {
    const h = opaque();
    await raw(t, 'POST', '/f1/_pit?keep_alive=1s', undefined, h);
    const opened = await waitForFact(nc, openedBy('pit.opened', h));
    await waitForFact(nc, (f) => f.aggregateId === opened.aggregateId && f.type === 'pit.expired', 6000, 'pit.expired');
    await expectFacts(opened.aggregateId, ['pit.opened', 'pit.expired']);
  });

  it('records pit.released when the index of an open PIT is deleted', async () => {
    await t.es.indices.create({ index: 'doomed' });
    const h = opaque();
    await raw(t, 'POST', '/doomed/_pit?keep_alive=1m', undefined, h);
    const opened = await waitForFact(nc, openedBy('pit.opened', h));
    await t.es.indices.delete({ index: 'doomed' });
    const released = await waitForFact(nc, (f) => f.aggregateId === opened.aggregateId && f.type === 'pit.released', 6000, 'pit.released');
    expect(released.data).toEqual({ reason: 'index_deleted' });
  });
});

describe('scroll facts', () => {
  async function open(index: string, scroll = '1m', body: Record<string, unknown> = { size: 5 }) {
    const h = opaque();
    const res = await raw(t, 'POST', `/${index}/_search?scroll=${scroll}`, body, h);
    expect(res.status).toBe(200);
    const opened = (await allFacts(nc)).find(openedBy('scroll.opened', h));
    expect(opened).toBeDefined(); // appended before the response
    return { scrollId: res.json._scroll_id as string, opened: opened! };
  }

  it('appends scroll.opened with indices, shards and keep-alive before the first page is returned', async () => {
    const { scrollId, opened } = await open('f2');
    expect(opened).toMatchObject({ v: 1, seq: 1, data: { indices: ['f2'], shards: 2, keepAliveMs: 60_000 } });
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: scrollId });
  });

  it('records opened, one extended per continuation, and cleared', async () => {
    const { scrollId, opened } = await open('f1');
    const p2 = await raw(t, 'POST', '/_search/scroll', { scroll: '2m', scroll_id: scrollId });
    const p3 = await raw(t, 'POST', '/_search/scroll', { scroll: '3m', scroll_id: p2.json._scroll_id });
    const cleared = await raw(t, 'DELETE', '/_search/scroll', { scroll_id: p3.json._scroll_id });
    expect(cleared.status).toBe(200);
    expect(await factTypesOf(nc, opened.aggregateId)).toEqual(['scroll.opened', 'scroll.extended', 'scroll.extended', 'scroll.cleared']);
    const facts = (await allFacts(nc)).filter((f) => f.aggregateId === opened.aggregateId);
    expect(facts.slice(1, 3).map((f) => f.data)).toEqual([{ keepAliveMs: 120_000 }, { keepAliveMs: 180_000 }]);
  });

  it('records scroll.cleared for every scroll cleared with _all', async () => {
    const a = await open('f1');
    const b = await open('f2');
    await raw(t, 'DELETE', '/_search/scroll/_all');
    for (const x of [a, b]) {
      await waitForFact(nc, (f) => f.aggregateId === x.opened.aggregateId && f.type === 'scroll.cleared', 6000, 'scroll.cleared');
    }
  });

  it('records scroll.expired when a scroll outlives scroll=1s', async () => {
    const { opened } = await open('f1', '1s');
    await waitForFact(nc, (f) => f.aggregateId === opened.aggregateId && f.type === 'scroll.expired', 6000, 'scroll.expired');
    await expectFacts(opened.aggregateId, ['scroll.opened', 'scroll.expired']);
  });

  it('records scroll.released (no_scroll_param) after a continuation without scroll', async () => {
    const { scrollId, opened } = await open('f1');
    const last = await raw(t, 'POST', '/_search/scroll', { scroll_id: scrollId });
    expect(last.status).toBe(200);
    const released = await waitForFact(nc, (f) => f.aggregateId === opened.aggregateId && f.type === 'scroll.released', 6000, 'scroll.released');
    expect(released.data).toEqual({ reason: 'no_scroll_param' });
  });

  it('records scroll.released (keep_alive_too_large) after a continuation asking for 2d', async () => {
    const { scrollId, opened } = await open('f1');
    expect((await raw(t, 'POST', '/_search/scroll', { scroll: '2d', scroll_id: scrollId })).status).toBe(400);
    const released = await waitForFact(nc, (f) => f.aggregateId === opened.aggregateId && f.type === 'scroll.released', 6000, 'scroll.released');
    expect(released.data).toEqual({ reason: 'keep_alive_too_large' });
  });

  it('records the slice of a sliced scroll in scroll.opened', async () => {
    const { scrollId, opened } = await open('f1', '1m', { size: 5, slice: { id: 1, max: 4 } });
    expect(opened.data).toMatchObject({ slice: { id: 1, max: 4 } });
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: scrollId });
  });

  it('appends nothing for a plain search', async () => {
    const before = (await allFacts(nc)).length;
    await raw(t, 'POST', '/f1/_search', { size: 3 });
    expect((await allFacts(nc)).length).toBe(before);
  });
});
