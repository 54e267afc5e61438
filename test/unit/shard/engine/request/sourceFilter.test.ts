import { filterSource, parseSourceBody, parseSourceParams, type SourceFilter } from '../../../../../actors/shard/engine/request/sourceFilter';
import { Locator } from '../../../../../actors/shard/engine/base/xcontent';
import type { EsError } from '../../../../../actors/wire/esErrors';

const f = (includes: string[], excludes: string[] = []): SourceFilter => ({ fetch: true, includes, excludes });
const DOC = '{"user":{"name":"kim","id":9223372036854775807,"tags":["a","b"]},"age":1.50,"obj":{},"list":[{"x":1,"y":2},{"y":3},4],"z":null}';

describe('filterSource', () => {
  it.each<[string, SourceFilter, string | undefined]>([
    ['false omits _source', { fetch: false, includes: [], excludes: [] }, undefined],
    ['no patterns returns raw text', f([]), DOC],
    ['top-level field', f(['age']), '{"age":1.50}'],
    ['object path includes the subtree', f(['user']), '{"user":{"name":"kim","id":9223372036854775807,"tags":["a","b"]}}'],
    ['dotted path', f(['user.name']), '{"user":{"name":"kim"}}'],
    ['wildcard', f(['user.*']), '{"user":{"name":"kim","id":9223372036854775807,"tags":["a","b"]}}'],
    ['wildcard prefix', f(['a*']), '{"age":1.50}'],
    ['excludes', f([], ['user', 'list']), '{"age":1.50,"obj":{},"z":null}'],
    ['excludes dotted', f([], ['user.id', 'user.tags']), '{"user":{"name":"kim"},"age":1.50,"obj":{},"list":[{"x":1,"y":2},{"y":3},4],"z":null}'],
    ['includes and excludes', f(['user'], ['user.tags']), '{"user":{"name":"kim","id":9223372036854775807}}'],
    ['array of objects', f(['list.x']), '{"list":[{"x":1}]}'],
    ['keeps original key order', f(['z', 'age']), '{"age":1.50,"z":null}'],
    ['no match gives an empty object', f(['nope']), '{}'],
    ['emptied object is dropped', f(['user.nope']), '{}'],
  ])('%s', (_name, filter, expected) => {
    expect(filterSource(DOC, filter)).toBe(expected);
  });

  it('handles whitespace and escapes in the raw text', () => {
    expect(filterSource('{ "a\\"b" : [ 1 , 2 ] ,\n "c": "x,}" }', f(['c']))).toBe('{"c":"x,}"}');
    expect(filterSource('{ "a\\"b" : [ 1 , 2 ] , "c": 1 }', f(['a"b']))).toBe('{"a\\"b":[1,2]}');
  });
});

describe('parseSourceBody', () => {
  it.each<[unknown, SourceFilter]>([
    [false, { fetch: false, includes: [], excludes: [] }],
    [true, { fetch: true, includes: [], excludes: [] }],
    ['a.*', f(['a.*'])],
    [['a', 'b'], f(['a', 'b'])],
    [{ includes: ['a'], excludes: 'b' }, f(['a'], ['b'])],
    [{ include: 'a', exclude: ['b'] }, f(['a'], ['b'])],
  ])('parses %j', (v, expected) => {
    expect(parseSourceBody(v)).toEqual(expected);
  });

  it.each<[unknown, string]>([
    [5, 'Expected one of [VALUE_BOOLEAN, START_OBJECT] but found [VALUE_NUMBER]'],
    [[1], 'Unknown key for a VALUE_NUMBER in [_source].'],
    [{ foo: ['a'] }, 'Unknown key for a START_ARRAY in [foo].'],
    [{ includes: 3 }, 'Unknown key for a VALUE_NUMBER in [includes].'],
  ])('rejects %j', (v, reason) => {
    let err: EsError | undefined;
    try {
      parseSourceBody(v, new Locator());
    } catch (e) {
      err = e as EsError;
    }
    expect(err?.type).toBe('parsing_exception');
    expect(err?.message).toBe(reason);
  });
});

describe('parseSourceParams', () => {
  it.each<[Record<string, string>, SourceFilter | undefined]>([
    [{}, undefined],
    [{ _source: 'false' }, { fetch: false, includes: [], excludes: [] }],
    [{ _source: 'true' }, f([])],
    [{ _source: 'a, b' }, f(['a', 'b'])],
    [{ _source_includes: 'a', _source_excludes: 'b,c' }, f(['a'], ['b', 'c'])],
    [{ _source: 'x', _source_includes: 'a' }, f(['a'])],
  ])('parses %j', (p, expected) => {
    expect(parseSourceParams(p)).toEqual(expected);
  });
});
