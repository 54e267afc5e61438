/**
 * Dotted field names as ES's DotExpandingXContentParser checks them (issue 21: `{".":1}` made the
 * primary's mapping proposal loop and the write answer 503): only dots, an empty part, or a blank
 * part is ES's 400; ordinary dotted names are objects.
 */
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';

const newStore = () => new ShardStore({ index: 'idx', shardId: 0, mapping: new IndexMapping(), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });

describe('dotted field names', () => {
  it.each([
    ['.', 'field name cannot contain only dots'],
    ['...', 'field name cannot contain only dots'],
    ['a.', 'object field starting or ending with a [.] makes object resolution ambiguous: [a.]'],
    ['.a', 'object field starting or ending with a [.] makes object resolution ambiguous: [.a]'],
    ['a..b', 'object field starting or ending with a [.] makes object resolution ambiguous: [a..b]'],
    ['a. .b', "field name cannot contain only whitespace: ['a. .b']"],
  ])('refuses [%s] with ES’s 400, leaving the mapping as it was', (name, reason) => {
    const s = newStore();
    const o = s.write({ op: 'index', id: '1', source: JSON.stringify({ [name]: 1, ok: 2 }) });
    expect(o).toMatchObject({ ok: false, status: 400, error: { type: 'mapper_parsing_exception', reason } });
    expect(s.mapping.toJSON()).toEqual({});
  });

  it('maps an ordinary dotted name as objects', () => {
    const s = newStore();
    expect(s.write({ op: 'index', id: '1', source: '{"a.b.c":1}' })).toMatchObject({ ok: true });
    expect(s.mapping.toJSON()).toMatchObject({ properties: { a: { properties: { b: { properties: { c: { type: 'long' } } } } } } });
  });
});
