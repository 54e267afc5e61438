/**
 * ES's common response parameters (issue 22 item 3), table-driven: `filter_path` as ES's
 * FilterPath/FilterPathBasedFilter applies it (ES's XContent filtering tests' shapes), `human`,
 * `flat_settings`, `error_trace`, and Jackson's pretty printer.
 */
import { responseShape, serialize, shapeBody, humanTime, humanBytes } from '../../../actors/edge/responseFormat';
import { RawJson } from '../../../actors/wire/rest';

const doc = {
  took: 3,
  timed_out: false,
  _shards: { total: 1, successful: 1, skipped: 0, failed: 0 },
  hits: {
    total: { value: 2, relation: 'eq' },
    max_score: 1,
    hits: [
      { _index: 'a', _id: '1', _score: 1, _source: { title: 'x', tags: ['p', 'q'], nested: { deep: { leaf: 1 } } } },
      { _index: 'a', _id: '2', _score: 1, _source: { title: 'y' } },
    ],
  },
};
const filter = (fp: string, body: unknown = doc) => shapeBody(body, responseShape({ filter_path: fp })!, false);

describe('filter_path', () => {
  it.each([
    ['took', { took: 3 }],
    ['hits.total', { hits: { total: { value: 2, relation: 'eq' } } }],
    ['hits.hits._id', { hits: { hits: [{ _id: '1' }, { _id: '2' }] } }],
    ['took,hits.hits._id', { took: 3, hits: { hits: [{ _id: '1' }, { _id: '2' }] } }],
    ['_shards.*', { _shards: { total: 1, successful: 1, skipped: 0, failed: 0 } }],
    ['hits.hits._source.ti*', { hits: { hits: [{ _source: { title: 'x' } }, { _source: { title: 'y' } }] } }],
    ['**.leaf', { hits: { hits: [{ _source: { nested: { deep: { leaf: 1 } } } }] } }],
    ['hits.**.deep', { hits: { hits: [{ _source: { nested: { deep: { leaf: 1 } } } }] } }],
    ['*.total', { _shards: { total: 1 }, hits: { total: { value: 2, relation: 'eq' } } }],
    ['hits.hits._source.tags', { hits: { hits: [{ _source: { tags: ['p', 'q'] } }] } }],
    ['nothing.here', {}],
  ])('includes %s', (fp, want) => {
    expect(filter(fp)).toEqual(want);
  });

  it.each([
    ['-hits', { took: 3, timed_out: false, _shards: doc._shards }],
    ['-_shards,-hits.hits', { took: 3, timed_out: false, hits: { total: doc.hits.total, max_score: 1 } }],
    ['-**._source', { ...doc, hits: { ...doc.hits, hits: doc.hits.hits.map(({ _source: _s, ...h }) => h) } }],
  ])('excludes %s', (fp, want) => {
    expect(filter(fp)).toEqual(want);
  });

  it('applies inclusions, then exclusions', () => {
    expect(filter('hits.hits.*,-hits.hits._source')).toEqual({ hits: { hits: doc.hits.hits.map(({ _source: _s, ...h }) => h) } });
  });

  it('matches a field whose name holds dots step by step (flat settings keys)', () => {
    const body = { test: { settings: { 'index.number_of_shards': '1', 'index.uuid': 'u' } } };
    expect(filter('*.settings.index.number_of_shards', body)).toEqual({ test: { settings: { 'index.number_of_shards': '1' } } });
  });

  it('reads a raw JSON body', () => {
    expect(filter('took', new RawJson([Buffer.from(JSON.stringify(doc))]))).toEqual({ took: 3 });
  });

  it('never filters an error body', () => {
    const err = { error: { type: 'x', reason: 'y' }, status: 400 };
    expect(shapeBody(err, responseShape({ filter_path: 'took' })!, true)).toEqual(err);
  });
});

describe('human, flat_settings, error_trace, pretty', () => {
  it('adds readable fields before the raw ones', () => {
    const v = shapeBody({ start_time_in_millis: 1_600_000_000_000, took_in_millis: 1500, size_in_bytes: 2048 }, responseShape({ human: 'true' })!, false);
    expect(Object.keys(v as object)).toEqual(['start_time', 'start_time_in_millis', 'took', 'took_in_millis', 'size', 'size_in_bytes']);
    expect(v).toMatchObject({ start_time: '2020-09-13T12:26:40.000Z', took: '1.5s', size: '2kb' });
  });
  it.each([[0, '0s'], [5, '5ms'], [60_000, '1m'], [90_000, '1.5m'], [86_400_000, '1d']])('time %d -> %s', (ms, s) => expect(humanTime(ms)).toBe(s));
  it.each([[0, '0b'], [1023, '1023b'], [1024, '1kb'], [1536, '1.5kb'], [5 * 2 ** 20, '5mb']])('bytes %d -> %s', (b, s) => expect(humanBytes(b)).toBe(s));

  it('flattens or nests the settings of routes that render settings', () => {
    const tmpl = { t1: { order: 0, index_patterns: ['x*'], settings: { index: { number_of_shards: '1' } }, mappings: {}, aliases: {} } };
    expect(shapeBody(tmpl, responseShape({ flat_settings: 'true' }, '/_template/{name}')!, false)).toEqual({ t1: { ...tmpl.t1, settings: { 'index.number_of_shards': '1' } } });
    const cs = { persistent: { 'search.max_keep_alive': '1h' }, transient: {} };
    expect(shapeBody(cs, responseShape({ flat_settings: 'false' }, '/_cluster/settings')!, false)).toEqual({ persistent: { search: { max_keep_alive: '1h' } }, transient: {} });
    // a search hit's `settings` field is a document's, never reshaped
    const hit = { hits: { hits: [{ _source: { settings: { a: { b: 1 } } } }] } };
    expect(shapeBody(hit, responseShape({ flat_settings: 'true' }, '/_search')!, false)).toEqual(hit);
  });

  it('adds stack traces to every error object with error_trace', () => {
    const err = { error: { root_cause: [{ type: 'x', reason: 'y' }], type: 'x', reason: 'y', caused_by: { type: 'z', reason: 'w' } }, status: 400 };
    const v = shapeBody(err, responseShape({ error_trace: 'true' })!, true, 'EsError: y\n    at here') as typeof err & { error: { stack_trace: string } };
    expect(v.error.stack_trace).toContain('EsError: y');
    expect((v.error.root_cause[0] as { stack_trace?: string }).stack_trace).toBeDefined();
    expect((v.error.caused_by as { stack_trace?: string }).stack_trace).toBeDefined();
  });

  it("prints as Jackson's pretty printer does", () => {
    expect(serialize({ a: 1, b: [1, 'x'], c: {}, d: [], e: { f: null } }, true)).toBe(
      '{\n  "a" : 1,\n  "b" : [\n    1,\n    "x"\n  ],\n  "c" : { },\n  "d" : [ ],\n  "e" : {\n    "f" : null\n  }\n}\n',
    );
  });
});
