/**
 * Issue 21 item 4: a large `_bulk` is read and run a window of items at a time (actors/edge/routes/
 * bulk.ts bulkWindows), so that it never holds the event loop for long. The answers are those of a
 * bulk read whole: items in order across windows, per-item outcomes, and a malformed line anywhere
 * fails the whole request before anything is written, with the line's number.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from '../search/helpers';

jest.setTimeout(120_000);

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

/** ~10 MB of NDJSON: index items into two indices, with deletes and updates of earlier ones. */
function bigBody(n: number): { text: string; expect: Array<[string, string, number]> } {
  const lines: string[] = [];
  const expect: Array<[string, string, number]> = [];
  const pad = 'x'.repeat(1200);
  for (let i = 0; i < n; i++) {
    const index = i % 2 ? 'wb' : 'wa';
    lines.push(`{"index":{"_index":"${index}","_id":"${i}"}}\n{"n":${i},"pad":"${pad}"}\n`);
    expect.push(['index', String(i), 201]);
    if (i % 1000 === 999) {
      lines.push(`{"delete":{"_index":"${index}","_id":"${i - 2}"}}\n`);
      expect.push(['delete', String(i - 2), 200]);
      lines.push(`{"update":{"_index":"${index}","_id":"${i - 4}"}}\n{"doc":{"updated":true}}\n`);
      expect.push(['update', String(i - 4), 200]);
    }
  }
  return { text: lines.join(''), expect };
}

it('answers a 10 MB bulk item by item, in order across its windows, as a bulk read whole', async () => {
  const { text, expect: want } = bigBody(8_000);
  expect(text.length).toBeGreaterThan(9 * 1024 * 1024);
  const res = await raw(t, 'POST', '/_bulk?refresh=true', text);
  expect([res.status, res.json.errors]).toEqual([200, false]);
  const got = (res.json.items as Array<Record<string, { _id: string; status: number }>>).map((it) => {
    const [action, v] = Object.entries(it)[0];
    return [action, v._id, v.status];
  });
  expect(got).toEqual(want);
  const count = async (i: string) => (await raw(t, 'GET', `/${i}/_count`)).json.count;
  expect((await count('wa')) + (await count('wb'))).toBe(8_000 - 8);
  expect((await raw(t, 'GET', '/wb/_doc/995')).json._source.updated).toBe(true);
});

it('refuses a large bulk with a malformed line near its end before writing anything, naming the line', async () => {
  const { text } = bigBody(6_000);
  const lines = text.split('\n').length - 1;
  const res = await raw(t, 'POST', '/late/_bulk', `${text}{"index":{"_id":"bad"}\n{"n":1}\n`);
  expect([res.status, res.json.error.type, res.json.error.reason]).toEqual([
    400, 'illegal_argument_exception', `Malformed action/metadata line [${lines + 1}], expected START_OBJECT but found [VALUE_STRING]`,
  ]);
  expect((await raw(t, 'GET', '/late')).status).toBe(404);
  expect((await raw(t, 'GET', '/wa/_doc/5998')).json._version).toBe(1); // written by the first test only
});
