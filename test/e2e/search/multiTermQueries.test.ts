/**
 * Issue 10 item 10: `regexp`, `wildcard` and `prefix` queries, matched by automata (Lucene regexp
 * syntax, linear in the term), on keyword and text fields, with ES's errors.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from './helpers';

let t: TestNode;

beforeAll(async () => {
  t = await startTestNode();
  await t.es.indices.create({ index: 'mt', settings: { number_of_shards: 2 }, mappings: { properties: { k: { type: 'keyword' }, body: { type: 'text' }, n: { type: 'long' } } } });
  const docs = [
    { id: '1', k: 'kimchy', body: 'Quick brown fox', n: 1 },
    { id: '2', k: 'Kimchi', body: 'lazy dog', n: 2 },
    { id: '3', k: 'elastic-42', body: 'brown bear', n: 3 },
    { id: '4', k: 'a'.repeat(40), body: 'aaaa', n: 4 },
  ];
  for (const d of docs) await t.es.index({ index: 'mt', id: d.id, document: d });
  await t.es.indices.refresh({ index: 'mt' });
});
afterAll(async () => {
  await t?.stop();
});

const ids = async (query: Record<string, unknown>) => {
  const r = await t.es.search({ index: 'mt', query: query as never, sort: [{ n: 'asc' }] });
  return r.hits.hits.map((h) => h._id);
};

describe('regexp query', () => {
  it.each([
    [{ k: 'kim.*' }, ['1']],
    [{ k: { value: 'kim.*', case_insensitive: true } }, ['1', '2']],
    [{ k: 'elastic-<1-50>' }, ['3']],
    [{ k: '~(kim.*)&[a-z]+' }, ['4']],
    [{ k: { value: 'elastic-<1-50>', flags: 'NONE' } }, []],
    [{ body: 'br.wn' }, ['1', '3']],
  ])('%j finds %j', async (q, expected) => {
    expect(await ids({ regexp: q })).toEqual(expected);
  });

  it('answers "(a+)+b" over a long term at once', async () => {
    const t0 = Date.now();
    expect(await ids({ regexp: { k: '(a+)+b' } })).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it.each([
    ['(', 'unexpected end-of-string'],
    ['[z-a]', 'invalid range: from (122) cannot be > to (97)'],
  ])('refuses %j with a 400', async (value, reason) => {
    const r = await raw(t, 'POST', '/mt/_search', { query: { regexp: { k: value } } });
    expect(r.status).toBe(400);
    expect(r.json.error.root_cause[0]).toMatchObject({ type: 'illegal_argument_exception', reason });
  });

  it('refuses a regexp longer than index.max_regex_length', async () => {
    const r = await raw(t, 'POST', '/mt/_search', { query: { regexp: { k: 'a'.repeat(1001) } } });
    expect(r.status).toBe(400);
    expect(r.json.error.root_cause[0].reason).toBe(
      'The length of regex [1001] used in the Regexp Query request has exceeded the allowed maximum of [1000]. This maximum can be set by changing the [index.max_regex_length] index level setting.',
    );
  });

  it('refuses a numeric field and an unknown flag', async () => {
    const r = await raw(t, 'POST', '/mt/_search', { query: { regexp: { n: '1.*' } } });
    expect(r.status).toBe(400);
    expect(r.json.error.root_cause[0]).toMatchObject({ type: 'query_shard_exception', reason: 'Can only use regexp queries on keyword and text fields - not on [n] which is of type [long]' });
    const f = await raw(t, 'POST', '/mt/_search', { query: { regexp: { k: { value: 'a', flags: 'BOGUS' } } } });
    expect(f.status).toBe(400);
    expect(f.json.error.reason).toBe('Unknown regexp flag [BOGUS]');
  });
});

describe('wildcard and prefix queries', () => {
  it.each([
    [{ wildcard: { k: 'ki*y' } }, ['1']],
    [{ wildcard: { k: { wildcard: 'KI*', case_insensitive: true } } }, ['1', '2']],
    [{ wildcard: { k: { value: 'elastic-4?' } } }, ['3']],
    [{ wildcard: { body: 'BR*' } }, ['1', '3']],
    [{ prefix: { k: 'kim' } }, ['1']],
    [{ prefix: { k: { value: 'KIM', case_insensitive: true } } }, ['1', '2']],
    [{ prefix: { body: 'bro' } }, ['1', '3']],
  ])('%j finds %j', async (q, expected) => {
    expect(await ids(q)).toEqual(expected);
  });

  it('answers a wildcard of many stars over a long term at once', async () => {
    const t0 = Date.now();
    expect(await ids({ wildcard: { k: `${'*a'.repeat(30)}*b` } })).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(2000);
  });

  it('refuses an unknown option with ES\'s parsing_exception', async () => {
    const r = await raw(t, 'POST', '/mt/_search', { query: { wildcard: { k: { value: 'a*', fuzzy: 1 } } } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'parsing_exception', reason: '[wildcard] query does not support [fuzzy]' });
  });
});
