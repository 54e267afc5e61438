import { parseSearchRequest, type SearchRequestContext } from '../../../../../actors/shard/engine/request/parseSearch';
import { parseSort, parseSortParam, withImplicitShardDoc } from '../../../../../actors/shard/engine/request/searchSort';
import { parseQuery, queryFromQ } from '../../../../../actors/shard/engine/request/queryDsl';
import { EsError, toErrorBody } from '../../../../../actors/wire/esErrors';
import type { SortSpec } from '../../../../../actors/shard/engine/types';

const plain: SearchRequestContext = { scroll: false, indicesInPath: true };
const scroll: SearchRequestContext = { scroll: true, indicesInPath: true };
const pitCtx: SearchRequestContext = { scroll: false, indicesInPath: false };

function fail(run: () => unknown): EsError {
  try {
    run();
  } catch (e) {
    if (e instanceof EsError) return e;
    throw e;
  }
  throw new Error('expected an EsError');
}
const parseFail = (body: unknown, params: Record<string, string> = {}, ctx = plain) => fail(() => parseSearchRequest(body, params, ctx));

describe('parseSearchRequest: defaults and overrides', () => {
  it('fills ES defaults', () => {
    expect(parseSearchRequest(undefined, {}, plain)).toEqual({
      from: 0, size: 10, trackTotalHits: 10000, trackTotalHitsExplicit: false, restTotalHitsAsInt: false, typedKeys: false,
      searchType: 'query_then_fetch', indicesOptions: {},
    });
  });

  it('lets URL from/size/track_total_hits/q overwrite the body', () => {
    const r = parseSearchRequest({ from: 1, size: 2, track_total_hits: false, query: { match_all: {} } },
      { from: '3', size: '4', track_total_hits: '100', q: 'title:foo' }, plain);
    expect(r).toMatchObject({ from: 3, size: 4, trackTotalHits: 100, trackTotalHitsExplicit: true, query: { query_string: { query: 'title:foo' } } });
  });

  it('appends URL sort to the body sort, as ES does', () => {
    const r = parseSearchRequest({ sort: ['a'] }, { sort: 'b:desc,_score,c:bogus' }, plain);
    expect(r.sort).toEqual([{ field: 'a', order: 'asc' }, { field: 'b', order: 'desc' }, { field: '_score', order: 'desc' }]);
  });

  it('maps track_total_hits true/false/-1/int', () => {
    expect(parseSearchRequest({ track_total_hits: true }, {}, plain).trackTotalHits).toBe(true);
    expect(parseSearchRequest({ track_total_hits: -1 }, {}, plain).trackTotalHits).toBe(false);
    expect(parseSearchRequest({ track_total_hits: 2147483647 }, {}, plain).trackTotalHits).toBe(true);
    expect(parseSearchRequest({}, { track_total_hits: 'false' }, plain).trackTotalHits).toBe(false);
  });

  it('forces exact totals in a scroll and records the keep alive', () => {
    const r = parseSearchRequest({ size: 5 }, { scroll: '1m' }, { scroll: false, indicesInPath: true });
    expect(r).toMatchObject({ trackTotalHits: true, scrollKeepAliveMs: 60000, size: 5 });
  });

  it('forces exact totals with rest_total_hits_as_int and no value', () => {
    expect(parseSearchRequest({}, { rest_total_hits_as_int: 'true' }, plain)).toMatchObject({ trackTotalHits: true, restTotalHitsAsInt: true });
    expect(parseSearchRequest({ track_total_hits: false }, { rest_total_hits_as_int: 'true' }, plain).trackTotalHits).toBe(false);
  });

  it('reads _source from body and URL (URL wins) and stored_fields hides _source', () => {
    expect(parseSearchRequest({ _source: ['a'] }, {}, plain).source).toEqual({ fetch: true, includes: ['a'], excludes: [] });
    expect(parseSearchRequest({ _source: ['a'] }, { _source: 'false' }, plain).source).toEqual({ fetch: false, includes: [], excludes: [] });
    expect(parseSearchRequest({ stored_fields: [] }, {}, plain).source).toEqual({ fetch: false, includes: [], excludes: [] });
  });

  it('accepts from -1 with search_after (seed) and treats it as 0', () => {
    const r = parseSearchRequest({ from: -1, sort: ['n'], search_after: [1] }, {}, plain);
    expect(r).toMatchObject({ from: 0, searchAfter: [1] });
  });

  it('parses pit and slice', () => {
    const r = parseSearchRequest({ pit: { id: 'abc', keep_alive: '1m' }, slice: { id: 0, max: 2, field: 'ts' } }, {}, pitCtx);
    expect(r.pit).toEqual({ id: 'abc', keepAliveMs: 60000 });
    expect(r.slice).toEqual({ id: 0, max: 2, field: 'ts' });
  });

  it('keeps longs beyond 2^53 in search_after as bigint', () => {
    expect(parseSearchRequest({ sort: ['n'], search_after: [9223372036854775807n, 'x', null] }, {}, plain).searchAfter)
      .toEqual([9223372036854775807n, 'x', null]);
  });
});

describe('parseSearchRequest: ES error texts', () => {
  it.each<[string, unknown, Record<string, string>, SearchRequestContext, string, string]>([
    ['unknown body key (string)', { foo: 'x' }, {}, plain, 'parsing_exception', 'Unknown key for a VALUE_STRING in [foo].'],
    ['unknown body key (object)', { foo: {} }, {}, plain, 'parsing_exception', 'Unknown key for a START_OBJECT in [foo].'],
    ['unknown body key (array)', { foo: [] }, {}, plain, 'parsing_exception', 'Unknown key for a START_ARRAY in [foo].'],
    ['unknown body key (number)', { foo: 1 }, {}, plain, 'parsing_exception', 'Unknown key for a VALUE_NUMBER in [foo].'],
    ['unknown body key (boolean)', { foo: true }, {}, plain, 'parsing_exception', 'Unknown key for a VALUE_BOOLEAN in [foo].'],
    ['unknown body key (null)', { foo: null }, {}, plain, 'parsing_exception', 'Unknown key for a VALUE_NULL in [foo].'],
    ['known key, wrong token', { query: 'x' }, {}, plain, 'parsing_exception', 'Unknown key for a VALUE_STRING in [query].'],
    ['pit as a string', { pit: 'abc' }, {}, pitCtx, 'parsing_exception', 'Unknown key for a VALUE_STRING in [pit].'],
    ['body not an object', [1], {}, plain, 'parsing_exception', 'Expected [START_OBJECT] but found [START_ARRAY]'],
    ['negative from (body)', { from: -1 }, {}, plain, 'illegal_argument_exception', '[from] parameter cannot be negative but was [-1]'],
    ['negative from (URL)', {}, { from: '-2' }, plain, 'illegal_argument_exception', '[from] parameter cannot be negative but was [-2]'],
    ['negative size (body)', { size: -1 }, {}, plain, 'illegal_argument_exception', '[size] parameter cannot be negative, found [-1]'],
    ['negative size (URL)', {}, { size: '-1' }, plain, 'illegal_argument_exception', '[size] parameter cannot be negative, found [-1]'],
    ['bad int param', {}, { size: 'x' }, plain, 'illegal_argument_exception', 'Failed to parse int parameter [size] with value [x]'],
    ['bad boolean param', {}, { track_scores: 'yes' }, plain, 'illegal_argument_exception', 'Failed to parse value [yes] as only [true] or [false] are allowed.'],
    ['track_total_hits < -1', { track_total_hits: -5 }, {}, plain, 'illegal_argument_exception', '[track_total_hits] parameter must be positive or equals to -1, got -5'],
    ['rest_total_hits_as_int inexact', { track_total_hits: 100 }, { rest_total_hits_as_int: 'true' }, plain, 'illegal_argument_exception',
      '[rest_total_hits_as_int] cannot be used if the tracking of total hits is not accurate, got 100'],
    ['unrecognized param', {}, { foo: '1' }, plain, 'illegal_argument_exception', 'request [/_search] contains unrecognized parameter: [foo]'],
    ['unrecognized params with suggestion', {}, { sizee: '1', zzz: '2' }, plain, 'illegal_argument_exception',
      'request [/_search] contains unrecognized parameters: [sizee] -> did you mean [size]?, [zzz]'],
    ['bad scroll time', {}, { scroll: '5' }, scroll, 'parse_exception',
      'failed to parse setting [scroll] with value [5] as a time value: unit is missing or unrecognized'],
    ['bad search_type', {}, { search_type: 'foo' }, plain, 'illegal_argument_exception', 'No search type for [foo]'],
    ['from with search_after', { from: 5, sort: ['n'], search_after: [1] }, {}, plain, 'action_request_validation_exception',
      'Validation Failed: 1: [from] parameter must be set to 0 when [search_after] is used;'],
    ['slice without scroll or pit', { slice: { id: 0, max: 2 } }, {}, plain, 'action_request_validation_exception',
      'Validation Failed: 1: [slice] can only be used with [scroll] or [point-in-time] requests;'],
    ['_shard_doc without pit', { sort: ['_shard_doc'] }, {}, plain, 'action_request_validation_exception',
      'Validation Failed: 1: [_shard_doc] sort field cannot be used without [point in time];'],
    ['pit with index in path', { pit: { id: 'x' } }, {}, plain, 'action_request_validation_exception',
      'Validation Failed: 1: [indices] cannot be used with point in time. Do not specify any index with point in time.;'],
    ['pit with routing, preference, indices options', { pit: { id: 'x' } }, { routing: '1', preference: '_local', expand_wildcards: 'all' }, pitCtx,
      'action_request_validation_exception',
      'Validation Failed: 1: [indicesOptions] cannot be used with point in time;2: [routing] cannot be used with point in time;3: [preference] cannot be used with point in time;'],
    ['pit in scroll', { pit: { id: 'x' } }, { scroll: '1m' }, pitCtx, 'action_request_validation_exception',
      'Validation Failed: 1: using [point in time] is not allowed in a scroll context;'],
    ['pit unknown field', { pit: { id: 'x', foo: 1 } }, {}, pitCtx, 'x_content_parse_exception', '[1:1] [pit] unknown field [foo]'],
    ['pit without id', { pit: {} }, {}, pitCtx, 'illegal_argument_exception', 'point in time id is not provided'],
    ['empty search_after', { search_after: [] }, {}, plain, 'illegal_argument_exception', 'Values cannot be empty.'],
    ['highlight', { highlight: { fields: {} } }, {}, plain, 'illegal_argument_exception', '[highlight] is not supported'],
    ['runtime_mappings', { runtime_mappings: {} }, {}, plain, 'illegal_argument_exception', '[runtime_mappings] is not supported'],
  ])('%s', (_name, body, params, ctx, type, reason) => {
    const e = parseFail(body, params, ctx);
    expect([e.type, e.message]).toEqual([type, reason]);
    expect(e.status).toBe(400);
  });

  it('accumulates every scroll validation error in ES order', () => {
    const e = parseFail(
      { from: 5, size: 0, track_total_hits: false, rescore: { query: { rescore_query: { match_all: {} } } }, sort: ['n'], search_after: [1], collapse: { field: 'f' }, pit: { id: 'x' } },
      { scroll: '1m', request_cache: 'true' },
      pitCtx,
    );
    expect(e.type).toBe('action_request_validation_exception');
    expect(e.message).toBe(
      'Validation Failed: 1: disabling [track_total_hits] is not allowed in a scroll context;' +
        '2: using [from] is not allowed in a scroll context;' +
        '3: [size] cannot be [0] in a scroll context;' +
        '4: using [rescore] is not allowed in a scroll context;' +
        '5: [search_after] cannot be used in a scroll context;' +
        '6: cannot use `collapse` in a scroll context;' +
        '7: [from] parameter must be set to 0 when [search_after] is used;' +
        '8: [request_cache] cannot be used in a scroll context;' +
        '9: using [point in time] is not allowed in a scroll context;',
    );
    expect(toErrorBody(e).error.root_cause).toEqual([{ type: e.type, reason: e.message }]);
  });

  it.each<[unknown, string, string]>([
    [{ max: 1 }, 'max', 'max must be greater than 1'],
    [{ id: 2, max: 2 }, 'max', 'max must be greater than id'],
    [{ max: 2, id: 2 }, 'id', 'max must be greater than id'],
    [{ id: -1, max: 2 }, 'id', 'id must be greater than or equal to 0'],
  ])('slice %j fails on [%s]', (slice, field, cause) => {
    const e = parseFail({ slice }, { scroll: '1m' }, scroll);
    expect(e.type).toBe('x_content_parse_exception');
    expect(e.message).toBe(`[1:1] [slice] failed to parse field [${field}]`);
    expect(e.extra.causedBy?.type).toBe('illegal_argument_exception');
    expect(e.extra.causedBy?.message).toBe(cause);
  });

  it('locates slice errors in the raw body like Jackson', () => {
    const text = '{\n    "slice": {\n        "id": 2,\n        "max": 2\n    }\n}';
    const e = fail(() => parseSearchRequest(JSON.parse(text), { scroll: '1m' }, { ...scroll, text }));
    expect(e.message).toBe('[4:16] [slice] failed to parse field [max]');
  });

  it('gives unknown keys a line and column', () => {
    const text = '{"size":1,\n "foo": "x"}';
    const e = fail(() => parseSearchRequest(JSON.parse(text), {}, { ...plain, text }));
    expect(e.extra.meta).toEqual({ line: 2, col: 9 });
  });

  it('uses the request path in unrecognized parameter messages', () => {
    const e = fail(() => parseSearchRequest({}, { foo: '1' }, { ...plain, path: '/logs/_search' }));
    expect(e.message).toBe('request [/logs/_search] contains unrecognized parameter: [foo]');
  });

  it('reports body errors before unrecognized params', () => {
    expect(parseFail({ foo: 1 }, { bar: '1' }).type).toBe('parsing_exception');
  });
});

describe('sort parsing', () => {
  it.each<[unknown, SortSpec[]]>([
    ['f', [{ field: 'f', order: 'asc' }]],
    ['_score', [{ field: '_score', order: 'desc' }]],
    [['_doc', '_shard_doc'], [{ field: '_doc', order: 'asc' }, { field: '_shard_doc', order: 'asc' }]],
    [{ f: 'DESC' }, [{ field: 'f', order: 'desc' }]],
    [[{ f: { order: 'desc', missing: '_first', unmapped_type: 'long', mode: 'max', numeric_type: 'date_nanos', format: 'strict_date_optional_time_nanos' } }],
      [{ field: 'f', order: 'desc', missing: '_first', unmappedType: 'long', mode: 'max', numericType: 'date_nanos', format: 'strict_date_optional_time_nanos' }]],
    [[{ _score: { order: 'asc' } }, 'g'], [{ field: '_score', order: 'asc' }, { field: 'g', order: 'asc' }]],
    [{ f: { missing: 5 } }, [{ field: 'f', order: 'asc', missing: 5 }]],
  ])('parses %j', (v, expected) => {
    expect(parseSort(v)).toEqual(expected);
  });

  it.each<[unknown, string, string]>([
    [5, 'illegal_argument_exception', 'malformed sort format, either start with array, object, or an actual string'],
    [[5], 'illegal_argument_exception', 'malformed sort format, within the sort array, an object, or an actual string are allowed'],
    [{ f: 'up' }, 'illegal_argument_exception', 'Unknown SortOrder [up]'],
    [{ f: { ordr: 'asc' } }, 'x_content_parse_exception', '[1:1] [field_sort] unknown field [ordr] did you mean [order]?'],
    [{ f: { order: 'up' } }, 'x_content_parse_exception', '[1:1] [field_sort] failed to parse field [order]'],
    [{ f: { mode: 'x' } }, 'x_content_parse_exception', '[1:1] [field_sort] failed to parse field [mode]'],
    [{ f: 1 }, 'x_content_parse_exception', '[1:1] [field_sort] Expected START_OBJECT but was: VALUE_NUMBER'],
  ])('rejects %j', (v, type, reason) => {
    const e = fail(() => parseSort(v));
    expect([e.type, e.message]).toEqual([type, reason]);
  });

  it('parses the URL form', () => {
    expect(parseSortParam('a:desc, b ,c:asc,x:y:desc')).toEqual([
      { field: 'a', order: 'desc' }, { field: 'b', order: 'asc' }, { field: 'c', order: 'asc' }, { field: 'x:y', order: 'desc' },
    ]);
  });
});

describe('withImplicitShardDoc', () => {
  const sort: SortSpec[] = [{ field: 'n', order: 'asc' }];
  const tie = { field: '_shard_doc', order: 'asc' };
  it.each<[SortSpec[] | undefined, unknown[] | undefined, unknown]>([
    [sort, undefined, [...sort, tie]],
    [sort, [1, 4294967296], [...sort, tie]],
    [sort, [1], sort],
    [undefined, undefined, undefined],
    [[], undefined, []],
    [[{ field: '_shard_doc', order: 'desc' }], undefined, [{ field: '_shard_doc', order: 'desc' }]],
  ])('sort %j with search_after %j', (s, after, expected) => {
    expect(withImplicitShardDoc(s, after)).toEqual(expected);
  });
});

describe('query DSL', () => {
  it.each<[unknown, unknown]>([
    [{ match_all: {} }, { match_all: {} }],
    [{ match_none: {} }, { match_none: {} }],
    [{ match: { t: 'quick fox' } }, { match: { t: { query: 'quick fox' } } }],
    [{ match: { t: { query: 'x', operator: 'AND', minimum_should_match: '75%' } } }, { match: { t: { query: 'x', operator: 'and', minimum_should_match: '75%' } } }],
    [{ term: { k: 'v' } }, { term: { k: { value: 'v' } } }],
    [{ term: { k: { value: 5, boost: 2 } } }, { term: { k: { value: 5, boost: 2 } } }],
    [{ terms: { k: ['a', 'b'], boost: 1.5 } }, { terms: { k: ['a', 'b'], boost: 1.5 } }],
    [{ range: { n: { gte: 1, lt: 5 } } }, { range: { n: { gte: 1, lt: 5 } } }],
    [{ range: { n: { from: 1, to: 5, include_upper: false } } }, { range: { n: { gte: 1, lt: 5 } } }],
    [{ range: { d: { gte: 'now-1d/d', format: 'strict_date' } } }, { range: { d: { format: 'strict_date', gte: 'now-1d/d' } } }],
    [{ exists: { field: 'f' } }, { exists: { field: 'f' } }],
    [{ constant_score: { filter: { term: { a: 'x' } }, boost: 2 } }, { constant_score: { filter: { term: { a: { value: 'x' } } }, boost: 2 } }],
    [{ ids: { values: ['1', 2] } }, { ids: { values: ['1', '2'] } }],
    [{ bool: { must: { term: { a: 1 } }, should: [{ match_all: {} }], minimum_should_match: 1 } },
      { bool: { must: [{ term: { a: { value: 1 } } }], should: [{ match_all: {} }], minimum_should_match: 1 } }],
  ])('normalizes %j', (q, expected) => {
    expect(parseQuery(q)).toEqual(expected);
  });

  it.each<[unknown, string, string]>([
    [{ foo: {} }, 'parsing_exception', 'unknown query [foo]'],
    [{ mach: { f: 'x' } }, 'parsing_exception', 'unknown query [mach] did you mean [match]?'],
    [{}, 'parsing_exception', 'query malformed, empty clause found at [1:1]'],
    [{ term: 'x' }, 'parsing_exception', '[term] query malformed, no start_object after query name'],
    [{ match_all: {}, term: { a: 1 } }, 'parsing_exception', '[match_all] malformed query, expected [END_OBJECT] but found [FIELD_NAME]'],
    [{ match_all: { foo: 1 } }, 'x_content_parse_exception', '[1:1] [match_all] unknown field [foo]'],
    [{ term: { a: 1, b: 2 } }, 'parsing_exception', "[term] query doesn't support multiple fields, found [a] and [b]"],
    [{ term: { a: [1] } }, 'parsing_exception', '[term] query does not support array of values'],
    [{ match: { a: { qry: 1 } } }, 'parsing_exception', '[match] query does not support [qry]'],
    [{ match: {} }, 'parsing_exception', 'No text specified for text query'],
    [{ terms: { boost: 1 } }, 'parsing_exception', '[terms] query requires a field name, followed by array of terms or a document lookup specification'],
    [{ range: { n: { gte: 1, foo: 2 } } }, 'parsing_exception', '[range] query does not support [foo]'],
    [{ exists: {} }, 'parsing_exception', '[exists] must be provided with a [field]'],
    [{ bool: { must: 'x' } }, 'x_content_parse_exception', "[1:1] [bool] must doesn't support values of type: VALUE_STRING"],
    [{ bool: { shuld: [] } }, 'x_content_parse_exception', '[1:1] [bool] unknown field [shuld] did you mean [should]?'],
    [{ bool: { filter: [{ nope: {} }] } }, 'parsing_exception', 'unknown query [nope]'],
    [{ script_score: { query: {} } }, 'illegal_argument_exception', '[script_score] query is not supported'],
    [{ constant_score: {} }, 'parsing_exception', "[constant_score] requires a 'filter' element"],
  ])('rejects %j', (q, type, reason) => {
    const e = fail(() => parseQuery(q));
    expect([e.type, e.message]).toEqual([type, reason]);
  });

  it('adds the named_object_not_found cause to unknown queries', () => {
    const e = fail(() => parseQuery({ foo: {} }));
    expect(toErrorBody(e).error).toMatchObject({
      type: 'parsing_exception', reason: 'unknown query [foo]', line: 1, col: 1,
      caused_by: { type: 'named_object_not_found_exception', reason: '[1:1] unknown field [foo]' },
    });
  });

  it.each<[string, Record<string, string>, unknown]>([
    ['*', {}, { query_string: { query: '*' } }],
    ['title:"quick fox"', { defaultOperator: 'AND' }, { query_string: { query: 'title:"quick fox"', default_operator: 'and' } }],
    ['foo', { df: 'body' }, { query_string: { query: 'foo', default_field: 'body' } }],
  ])('maps q=%s to a query_string query, as RestActions.urlParamsToQueryBuilder', (q, opts, expected) => {
    expect(queryFromQ(q, opts)).toEqual(expected);
  });
});
