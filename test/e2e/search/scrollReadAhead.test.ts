/**
 * Scroll read-ahead (actors/search/scrollService.ts): after a full page the node searches the next
 * one while the client reads, and the continuation takes it. The pages must be exactly the ones a
 * continuation computes (a re-sent scroll id is searched again: same page), on the scroll's pinned
 * searchers (writes after the open stay invisible), and a page computed ahead must never outlive
 * its context (a cleared scroll is 404).
 */
import { connect, type Socket } from 'node:net';
import { startTestNode, type TestNode } from '../../support/node';
import { bulkIndex, raw } from './helpers';
import { rng } from '../../support/rng';
import { scrollReadAhead } from '../../../actors/search/scrollService';

let t: TestNode;
const N = 1234;
const r = rng(77);
const docs = Array.from({ length: N }, (_, i) => ({ n: i, w: Math.floor(r() * 50) }));
const mappings = { properties: { n: { type: 'long' }, w: { type: 'long' } } };

type Page = { status: number; json: any };
const open = (body: Record<string, unknown>): Promise<Page> => raw(t, 'POST', '/ra/_search?scroll=1m', body);
const next = (id: string): Promise<Page> => raw(t, 'POST', '/_search/scroll', { scroll_id: id, scroll: '1m' });
const stats = () => scrollReadAhead(t.sys.services);
const pageText = (p: Page) => JSON.stringify(p.json.hits.hits);

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'ra', settings: { number_of_shards: 3 }, mappings: mappings as never });
  await bulkIndex(t, 'ra', docs, (d) => String(d.n));
}, 120_000);
afterAll(async () => {
  await t?.stop();
});

/** Walks a scroll to its empty page; each page with the id that asked for it. */
async function walk(body: Record<string, unknown>, between?: (page: number) => Promise<void>, keep = false): Promise<Array<{ id: string; page: Page }>> {
  const first = await open(body);
  expect(first.status).toBe(200);
  const out = [{ id: '', page: first }];
  let id = first.json._scroll_id as string;
  for (let k = 1; ; k++) {
    if (between) await between(k);
    const p = await next(id);
    expect(p.status).toBe(200);
    out.push({ id, page: p });
    if (!p.json.hits.hits.length) break;
    id = p.json._scroll_id;
  }
  if (!keep) await raw(t, 'DELETE', '/_search/scroll', { scroll_id: id });
  return out;
}

describe('scroll read-ahead', () => {
  for (const [name, body] of [
    ['_doc order', { size: 100, sort: ['_doc'] }],
    ['a field sort with ties', { size: 100, sort: [{ w: 'desc' }] }],
    ['by score', { size: 100, query: { range: { w: { gte: 10 } } } }],
  ] as const) {
    it(`takes pages computed ahead that are the pages a continuation computes (${name})`, async () => {
      const taken0 = stats().taken;
      const pages = await walk(body, undefined, true);
      const ids = pages.flatMap((p) => p.page.json.hits.hits.map((h: { _id: string }) => h._id));
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.length).toBe(pages[0].page.json.hits.total.value);
      // every continuation after the first took the page computed ahead for it
      expect(stats().taken - taken0).toBe(pages.length - 2);
      // each id re-sent, last first (nothing computed ahead for them any more): the same pages
      const taken1 = stats().taken;
      for (const { id, page } of pages.slice(1).reverse()) {
        const p = await next(id);
        expect(p.status).toBe(200);
        expect(pageText(p)).toBe(pageText(page));
      }
      expect(stats().taken).toBe(taken1);
      await raw(t, 'DELETE', '/_search/scroll', { scroll_id: pages[1].id });
    });
  }

  it('serves the pinned point in time: documents written after the open never appear', async () => {
    const pages = await walk({ size: 100, sort: ['_doc'] }, async (k) => {
      if (k !== 2) return;
      await raw(t, 'POST', '/ra/_doc/late-1?refresh=true', { n: 100_000, w: 1 });
      await raw(t, 'DELETE', '/ra/_doc/5?refresh=true');
    });
    const ids = pages.flatMap((p) => p.page.json.hits.hits.map((h: { _id: string }) => h._id));
    expect(ids).not.toContain('late-1');
    expect(ids).toContain('5');
    expect(ids.length).toBe(N);
    await raw(t, 'DELETE', '/ra/_doc/late-1?refresh=true');
    await raw(t, 'PUT', '/ra/_doc/5?refresh=true', docs[5]);
  });

  it('drops nothing live and serves nothing dead: a cleared scroll is 404 though its next page was computed', async () => {
    const first = await open({ size: 100, sort: ['_doc'] });
    const p1 = await next(first.json._scroll_id);
    expect(p1.status).toBe(200);
    const id2 = p1.json._scroll_id as string;
    await new Promise((r) => setTimeout(r, 200)); // the page after p1 is computed meanwhile
    expect(stats().waiting).toBeGreaterThanOrEqual(1);
    const cleared = await raw(t, 'DELETE', '/_search/scroll', { scroll_id: id2 });
    expect(cleared.json.succeeded).toBe(true);
    expect(cleared.json.num_freed).toBeGreaterThan(0);
    const gone = await next(id2);
    expect(gone.status).toBe(404);
    expect(gone.json.error.root_cause[0].type).toBe('search_context_missing_exception');
  });

  it('reads nothing ahead while the process is busy with other requests', async () => {
    // three requests held in flight: their bodies never finish arriving
    const port = Number(new URL(t.url).port);
    const held = await Promise.all(
      [0, 1, 2].map(
        () =>
          new Promise<Socket>((resolve) => {
            const sock = connect(port, '127.0.0.1', () => {
              sock.write('POST /ra/_search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"size":');
              resolve(sock);
            });
          }),
      ),
    );
    await new Promise((r) => setTimeout(r, 200));
    const first = await open({ size: 50, sort: ['_doc'] });
    const taken0 = stats().taken;
    const p1 = await next(first.json._scroll_id);
    const p2 = await next(p1.json._scroll_id);
    expect(p2.json.hits.hits).toHaveLength(50);
    expect(stats().taken).toBe(taken0); // nothing was computed ahead for p2
    for (const sock of held) sock.destroy();
    await new Promise((r) => setTimeout(r, 200));
    // and once they are gone, it reads ahead again
    const p3 = await next(p2.json._scroll_id);
    await next(p3.json._scroll_id);
    expect(stats().taken).toBe(taken0 + 1);
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: p3.json._scroll_id });
  });

  it('keeps nothing after the empty page, nor for a cleared scroll, and holds its pages within bounds', async () => {
    const waiting0 = stats().waiting;
    const pages = await walk({ size: 500, sort: ['_doc'] });
    expect(pages.map((p) => p.page.json.hits.hits.length.toString()).join(',')).toMatch(/^500,.*,0$/);
    expect(stats().waiting).toBe(waiting0);
    // many scrolls: at most 16 pages wait on the node
    const seconds: Page[] = [];
    for (let i = 0; i < 40; i++) seconds.push(await next((await open({ size: 10, sort: ['_doc'] })).json._scroll_id));
    await new Promise((r) => setTimeout(r, 300));
    const s = stats();
    expect(s.waiting).toBe(16);
    expect(s.bytes).toBeLessThanOrEqual(64 * 1024 * 1024);
    await raw(t, 'DELETE', '/_search/scroll', { scroll_id: seconds.map((p) => p.json._scroll_id) });
    expect(stats().waiting).toBe(waiting0);
  });
});
