/**
 * Issue 10 item 23, through HTTP: every context fact carries the X-Opaque-Id of the request that
 * caused it (a continuation's `extended`, a client's `cleared`/`closed`, a release caused by a
 * request), the keep-alive timer's `expired` none; the tail line of `scroll.cleared` shows `by=`.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { startTestNode, ELASTIC_PASSWORD, type TestNode } from '../../support/node';
import { allFacts, eventually, raw } from '../../e2e/search/helpers';
import { formatFact } from '../../../scripts/cli/formatFact';
import type { Envelope } from '../../../streams';

let t: TestNode;
let nc: NatsConnection;
const auth = { authorization: `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}` };
const as = (opaqueId: string) => ({ ...auth, 'x-opaque-id': opaqueId });

beforeAll(async () => {
  t = await startTestNode({ security: true });
  nc = await t.nats.connect();
  await t.es.indices.create({ index: 'c1' });
  await t.es.bulk({ refresh: true, operations: Array.from({ length: 10 }, (_, i) => [{ index: { _index: 'c1', _id: String(i) } }, { n: i }]).flat() });
}, 60_000);
afterAll(async () => {
  await nc?.drain();
  await t?.stop();
});

async function factsOfContextOpenedBy(opaqueId: string, count: number): Promise<Envelope[]> {
  return eventually(async () => {
    const all = await allFacts(nc);
    const opened = all.find((f) => f.type.endsWith('.opened') && f.correlationId === opaqueId);
    const mine = opened ? all.filter((f) => f.aggregateId === opened.aggregateId) : [];
    return mine.length >= count ? mine : undefined;
  }, 8000, `${count} facts of the context opened by ${opaqueId}`);
}

const pairs = (facts: Envelope[]) => facts.map((f) => [f.type, f.correlationId ?? null]);

it('a scroll: opened, each continuation and the clear carry their own requests’ ids', async () => {
  const first = await raw(t, 'POST', '/c1/_search?scroll=1m', { size: 2 }, as('s-open'));
  // a new keep-alive, so the continuation logs `extended` (repeating `1m` would log nothing)
  const second = await raw(t, 'POST', '/_search/scroll', { scroll: '2m', scroll_id: first.json._scroll_id }, as('s-page-2'));
  expect((await raw(t, 'DELETE', '/_search/scroll', { scroll_id: second.json._scroll_id }, as('s-clear'))).status).toBe(200);
  const facts = await factsOfContextOpenedBy('s-open', 3);
  expect(pairs(facts)).toEqual([
    ['scroll.opened', 's-open'],
    ['scroll.extended', 's-page-2'],
    ['scroll.cleared', 's-clear'],
  ]);
  expect(formatFact(facts[2])).toMatch(/scroll\.cleared .* by=elastic opaque_id=s-clear$/);
});

it('a scroll released by a continuation without scroll carries that request’s id', async () => {
  const first = await raw(t, 'POST', '/c1/_search?scroll=1m', { size: 2 }, as('r-open'));
  await raw(t, 'POST', '/_search/scroll', { scroll_id: first.json._scroll_id }, as('r-last'));
  expect(pairs(await factsOfContextOpenedBy('r-open', 3))).toEqual([
    ['scroll.opened', 'r-open'],
    ['scroll.extended', 'r-last'],
    ['scroll.released', 'r-last'],
  ]);
});

it('a PIT: extended by a search and closed carry their requests’ ids; an expiry carries none', async () => {
  const { id } = (await raw(t, 'POST', '/c1/_pit?keep_alive=1m', undefined, as('p-open'))).json;
  await raw(t, 'POST', '/_search', { pit: { id, keep_alive: '2m' }, size: 1 }, as('p-search'));
  await raw(t, 'DELETE', '/_pit', { id }, as('p-close'));
  const closed = await factsOfContextOpenedBy('p-open', 3);
  expect(pairs(closed)).toEqual([
    ['pit.opened', 'p-open'],
    ['pit.extended', 'p-search'],
    ['pit.closed', 'p-close'],
  ]);
  expect(formatFact(closed[2])).toMatch(/pit\.closed .* by=elastic opaque_id=p-close$/);

  await raw(t, 'POST', '/c1/_pit?keep_alive=1s', undefined, as('e-open'));
  expect(pairs(await factsOfContextOpenedBy('e-open', 2))).toEqual([
    ['pit.opened', 'e-open'],
    ['pit.expired', null],
  ]);
});
