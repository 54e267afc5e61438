/**
 * Issue 13: `_msearch` framing (MultiSearchRequest.readMultiLineFormat) and `_mget` body parsing
 * (MultiGetRequest.add), as pure functions.
 */
import { parseMsearch } from '../../../../actors/edge/routes/msearch';
import { parseMget } from '../../../../actors/edge/routes/mget';
import { EsError } from '../../../../actors/wire/esErrors';

function esError(fn: () => unknown): EsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EsError) return e;
    throw e;
  }
  throw new Error('expected an EsError');
}

describe('_msearch body', () => {
  it('pairs header and body lines, the header index overriding the path index', () => {
    const items = parseMsearch('{"index":"a"}\n{"size":1}\n{}\n{"query":{"match_all":{}}}\n', 'p', {});
    expect(items.map((i) => i.call.params)).toEqual([{ index: 'a' }, { index: 'p' }]);
    expect(items.map((i) => i.call.body)).toEqual([{ size: 1 }, { query: { match_all: {} } }]);
  });

  it('turns header options into search parameters, arrays of indices into a comma list', () => {
    const [it] = parseMsearch('{"index":["a","b*"],"routing":"r","ignore_unavailable":true,"expandWildcards":"all"}\n{}\n', undefined, { typed_keys: 'true' });
    expect(it.call.params).toEqual({ index: 'a,b*' });
    expect(it.call.query).toEqual({ typed_keys: 'true', routing: 'r', ignore_unavailable: 'true', expand_wildcards: 'all' });
  });

  it('keeps max_concurrent_searches and the path index out of the item parameters', () => {
    const [it] = parseMsearch('{}\n{}\n', 'x', { max_concurrent_searches: '2', index: 'x', rest_total_hits_as_int: 'true' });
    expect(it.call.query).toEqual({ rest_total_hits_as_int: 'true' });
  });

  it('skips an empty first line and treats an empty header line as defaults', () => {
    const items = parseMsearch('\n\n{"size":2}\n', 'i', {});
    expect(items).toHaveLength(1);
    expect(items[0].call).toMatchObject({ params: { index: 'i' }, body: { size: 2 } });
  });

  it('drops a header that has no body line', () => {
    expect(parseMsearch('{}\n{}\n{"index":"x"}\n', undefined, {})).toHaveLength(1);
  });

  it('refuses a body not terminated by a newline', () => {
    const e = esError(() => parseMsearch('{}\n{}', undefined, {}));
    expect([e.type, e.status, e.message]).toEqual(['illegal_argument_exception', 400, 'The msearch request must be terminated by a newline [\n]']);
  });

  it('refuses an unknown header key with ES text', () => {
    const e = esError(() => parseMsearch('{"size":1}\n{}\n', undefined, {}));
    expect(e.message).toBe('key [size] is not supported in the metadata section');
  });

  it('reports malformed JSON of a body line as x_content_parse_exception', () => {
    const e = esError(() => parseMsearch('{}\n{"query":\n', undefined, {}));
    expect(e.type).toBe('x_content_parse_exception');
    expect(e.status).toBe(400);
  });

  it('drops the URL ccs_minimize_roundtrips for an item with a PIT', () => {
    const [a, b] = parseMsearch('{}\n{"pit":{"id":"x"}}\n{}\n{}\n', undefined, { ccs_minimize_roundtrips: 'true' });
    expect(a.call.query).toEqual({});
    expect(b.call.query).toEqual({ ccs_minimize_roundtrips: 'true' });
  });
});

describe('_mget body', () => {
  it('reads docs with their own index, routing, stored_fields and _source', () => {
    const items = parseMget({ docs: [{ _index: 'a', _id: 1, routing: 'r', _source: ['x'] }, { _id: '2', stored_fields: 'f' }] }, { index: 'd' });
    expect(items).toEqual([
      { index: 'a', id: '1', routing: 'r', source: { fetch: true, includes: ['x'], excludes: [] } },
      { index: 'd', id: '2', storedFields: ['f'] },
    ]);
  });

  it('reads ids with the URL defaults', () => {
    expect(parseMget({ ids: ['1', 2] }, { index: 'i', routing: 'r' })).toEqual([
      { index: 'i', id: '1', routing: 'r' },
      { index: 'i', id: '2', routing: 'r' },
    ]);
  });

  it('validates every doc at once, as ES numbers them', () => {
    expect(esError(() => parseMget({ ids: ['1'] }, {})).message).toBe('Validation Failed: 1: index is missing for doc 0;');
    expect(esError(() => parseMget({ docs: [{ _index: 'a' }, {}] }, {})).message).toBe(
      'Validation Failed: 1: id is missing for doc 0;2: index is missing for doc 1;3: id is missing for doc 1;',
    );
    expect(esError(() => parseMget({ docs: [] }, {})).message).toBe('Validation Failed: 1: no documents to get;');
  });

  it.each([
    [undefined, 'parse_exception', 'request body or source parameter is required'],
    [{ foo: [] }, 'parsing_exception', 'unknown key [foo] for a START_ARRAY, expected [docs] or [ids]'],
    [{ docs: [1] }, 'illegal_argument_exception', 'docs array element should include an object'],
    [{ ids: [{}] }, 'illegal_argument_exception', 'ids array element should only contain ids'],
    [{ docs: [{ _index: 'a', _id: '1', foo: 1 }] }, 'parse_exception', 'failed to parse multi get request. unknown field [foo]'],
    [{ docs: [{ _index: 'a', _id: '1', fields: ['x'] }] }, 'parsing_exception', 'Unsupported field [fields] used, expected [stored_fields] instead'],
  ])('refuses %j with %s', (body, type, reason) => {
    const e = esError(() => parseMget(body, {}));
    expect([e.type, e.status, e.message]).toEqual([type, 400, reason]);
  });
});
