import { EsError } from '../../../../../actors/wire/esErrors';
import { IndexMapping } from '../../../../../actors/shard/engine';
import { parseJson } from '../../../../../actors/wire/json';

const parse = (m: IndexMapping, src: string, id = '1') => m.parse(parseJson(src), id, src);
const props = (m: IndexMapping) => (m.toJSON() as { properties?: Record<string, unknown> }).properties;

function parseError(m: IndexMapping, src: string, id = '1'): EsError {
  try {
    parse(m, src, id);
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected a mapping error');
}

describe('dynamic mapping', () => {
  const TEXT = { type: 'text', fields: { keyword: { type: 'keyword', ignore_above: 256 } } };
  it.each([
    ['a string', '"hello"', TEXT],
    ['an empty string', '""', TEXT],
    ['an ISO date string', '"2015-01-01T12:10:30Z"', { type: 'date' }],
    ['a date-only string', '"2015-01-01"', { type: 'date' }],
    ['a yyyy/MM/dd string', '"2015/09/02"', { type: 'date', format: 'yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis' }],
    ['a numeric string (no numeric detection)', '"42"', TEXT],
    ['an integer', '42', { type: 'long' }],
    ['a long beyond 2^53', '9007199254740993', { type: 'long' }],
    ['a float', '1.5', { type: 'float' }],
    ['a float written with a zero fraction', '1.0', { type: 'float' }],
    ['an exponent', '1e3', { type: 'float' }],
    ['a boolean', 'true', { type: 'boolean' }],
    ['an array (first value decides)', '[3, 4]', { type: 'long' }],
  ])('maps %s as ES does', (_what, json, expected) => {
    const m = new IndexMapping();
    parse(m, `{"f": ${json}}`);
    expect(props(m)).toEqual({ f: expected });
  });

  it('maps objects with their properties sorted by name', () => {
    const m = new IndexMapping();
    parse(m, '{"user": {"name": "kim", "age": 3}, "a": true}');
    expect(m.toJSON()).toEqual({ properties: { a: { type: 'boolean' }, user: { properties: { age: { type: 'long' }, name: TEXT } } } });
    expect(Object.keys(props(m)!)).toEqual(['a', 'user']);
  });

  it('expands dotted field names into objects', () => {
    const m = new IndexMapping();
    const doc = parse(m, '{"a.b": 1}');
    expect(props(m)).toEqual({ a: { properties: { b: { type: 'long' } } } });
    expect(doc.map((f) => f.def.path)).toEqual(['a.b']);
  });

  it('adds no field for null values and empty arrays', () => {
    const m = new IndexMapping();
    parse(m, '{"n": null, "e": []}');
    expect(m.toJSON()).toEqual({});
  });

  it('shares dynamic updates through the one mapping object and bumps its version', () => {
    const m = new IndexMapping();
    const v = m.version;
    parse(m, '{"x": 1}');
    expect(m.fieldType('x')).toBe('long');
    expect(m.version).toBeGreaterThan(v);
  });

  it('keeps no dynamic field of a document that fails to parse', () => {
    const m = new IndexMapping({ properties: { age: { type: 'long' } } });
    parseError(m, '{"fresh": "x", "age": "abc"}');
    expect(m.fieldType('fresh')).toBeUndefined();
  });

  it('ignores unknown fields with dynamic false', () => {
    const m = new IndexMapping({ dynamic: false, properties: { a: { type: 'keyword' } } });
    const doc = parse(m, '{"a": "x", "b": "y"}');
    expect(doc.map((f) => f.def.path)).toEqual(['a']);
    expect(m.fieldType('b')).toBeUndefined();
  });

  it.each([['false', false], ['runtime', 'runtime']])('keeps the fields after a dotted key under an unmapped object with dynamic %s', (_what, dynamic) => {
    const m = new IndexMapping({ dynamic, properties: { c: { type: 'keyword' }, z: { type: 'long' } } });
    const doc = parse(m, '{"a.b": 1, "c": "x", "q.r.s": 2, "z": 3}');
    expect(doc.map((f) => [f.def.path, f.values])).toEqual([['c', ['x']], ['z', [3]]]);
    expect(m.fieldType('a')).toBeUndefined();
    expect(m.fieldType('a.b')).toBeUndefined();
  });

  it('keeps the fields after a dotted key into a disabled object, and maps nothing inside it', () => {
    const m = new IndexMapping({ properties: { o: { type: 'object', enabled: false }, c: { type: 'keyword' } } });
    const doc = parse(m, '{"o.x": 1, "o.p.y": 2, "c": "x"}');
    expect(doc.map((f) => f.def.path)).toEqual(['c']);
    expect(m.toJSON()).toEqual({ properties: { c: { type: 'keyword' }, o: { type: 'object', enabled: false } } });
  });

  it('follows a dotted key into a mapped object with its own dynamic setting', () => {
    const m = new IndexMapping({ dynamic: false, properties: { o: { type: 'object', dynamic: true, properties: {} } } });
    const doc = parse(m, '{"n.m": 1, "o.x": 5, "u": "y"}');
    expect(doc.map((f) => f.def.path)).toEqual(['o.x']);
    expect(m.fieldType('o.x')).toBe('long');
  });

  it('rejects a dotted key under an unmapped object with dynamic strict', () => {
    const m = new IndexMapping({ dynamic: 'strict', properties: { c: { type: 'keyword' } } });
    const e = parseError(m, '{"c": "x", "a.b": 1}');
    expect([e.type, e.status, e.message]).toEqual([
      'strict_dynamic_mapping_exception', 400, '[_doc] mapping set to strict, dynamic introduction of [a] within [_doc] is not allowed',
    ]);
  });

  it('rejects unknown fields with dynamic strict', () => {
    const m = new IndexMapping({ dynamic: 'strict', properties: { a: { type: 'keyword' } } });
    const e = parseError(m, '{"a": "x", "b": "y"}');
    expect([e.type, e.status, e.message]).toEqual([
      'strict_dynamic_mapping_exception', 400, '[_doc] mapping set to strict, dynamic introduction of [b] within [_doc] is not allowed',
    ]);
  });

  it('honours dynamic date formats and date_detection false', () => {
    const m = new IndexMapping({ date_detection: false });
    parse(m, '{"d": "2015-01-01"}');
    expect(m.fieldType('d')).toBe('text');
  });
});

describe('explicit mapping', () => {
  const m = new IndexMapping({
    properties: {
      title: { type: 'text', fields: { raw: { type: 'keyword', ignore_above: 5 } } },
      n: { type: 'integer' },
      f: { type: 'float' },
      when: { type: 'date', format: 'yyyy-MM-dd' },
      ns: { type: 'date_nanos' },
      flag: { type: 'boolean', null_value: false },
      'obj.inner': { type: 'keyword' },
    },
  });

  it('returns the mapping as GET _mapping shows it', () => {
    expect(m.toJSON()).toEqual({
      properties: {
        f: { type: 'float' },
        flag: { type: 'boolean', null_value: false },
        n: { type: 'integer' },
        ns: { type: 'date_nanos' },
        obj: { properties: { inner: { type: 'keyword' } } },
        title: { type: 'text', fields: { raw: { type: 'keyword', ignore_above: 5 } } },
        when: { type: 'date', format: 'yyyy-MM-dd' },
      },
    });
  });

  it('flattens a document into field values, arrays as multi-values', () => {
    const doc = parse(m, '{"title": ["ab", "abcdefgh"], "n": "12", "f": 1.1, "when": "2020-02-03", "ns": "2019-10-21T08:30:04.828733123Z", "flag": null, "obj": {"inner": 7}}');
    const byPath = Object.fromEntries(doc.map((f) => [f.def.path, f.values]));
    expect(byPath).toEqual({
      title: ['ab', 'abcdefgh'],
      'title.raw': ['ab'], // ignore_above drops the long value
      n: [12],
      f: [Math.fround(1.1)],
      when: [{ ms: Date.UTC(2020, 1, 3), ns: 0 }],
      ns: [{ ms: 1571646604828, ns: 733123 }],
      flag: [0],
      'obj.inner': ['7'],
    });
  });

  it('keeps longs beyond 2^53 exact', () => {
    const mm = new IndexMapping({ properties: { l: { type: 'long' } } });
    expect(parse(mm, '{"l": 9223372036854775807}')[0].values).toEqual([9223372036854775807n]);
  });

  it('truncates decimals for integer types (coerce)', () => {
    expect(parse(m, '{"n": 3.9}')[0].values).toEqual([3]);
  });

  it.each([
    ['a non-numeric long', { properties: { age: { type: 'long' } } }, '{"age": "abc"}', "failed to parse field [age] of type [long] in document with id '1'. Preview of field's value: 'abc'"],
    ['an integer out of range', { properties: { n: { type: 'integer' } } }, '{"n": 3000000000}', "failed to parse field [n] of type [integer] in document with id '1'. Preview of field's value: '3000000000'"],
    ['a bad boolean', { properties: { b: { type: 'boolean' } } }, '{"b": "yes"}', "failed to parse field [b] of type [boolean] in document with id '1'. Preview of field's value: 'yes'"],
    ['a bad date', { properties: { d: { type: 'date' } } }, '{"d": "not a date"}', "failed to parse field [d] of type [date] in document with id '1'. Preview of field's value: 'not a date'"],
    ['an object for a keyword', { properties: { k: { type: 'keyword' } } }, '{"k": {"a": 1}}', "failed to parse field [k] of type [keyword] in document with id '1'. Preview of field's value: '{a=1}'"],
    ['a value for an object', { properties: { o: { properties: { a: { type: 'long' } } } } }, '{"o": 5}', 'object mapping for [o] tried to parse field [o] as object, but found a concrete value'],
    ['a metadata field', {}, '{"_id": "x"}', 'Field [_id] is a metadata field and cannot be added inside a document. Use the index API request parameters.'],
    ['a nanosecond date before 1970', { properties: { d: { type: 'date_nanos' } } }, '{"d": "1969-12-31T00:00:00Z"}', "failed to parse field [d] of type [date_nanos] in document with id '1'. Preview of field's value: '1969-12-31T00:00:00Z'"],
  ])('rejects %s with mapper_parsing_exception 400', (_what, mapping, src, reason) => {
    const e = parseError(new IndexMapping(mapping), src);
    expect([e.type, e.status, e.message]).toEqual(['mapper_parsing_exception', 400, reason]);
  });

  it('rejects an unknown field type', () => {
    expect(() => new IndexMapping({ properties: { x: { type: 'foo' } } })).toThrow('No handler for type [foo] declared on field [x]');
  });
});

describe('put mapping (merge)', () => {
  const base = () => new IndexMapping({ properties: { a: { type: 'long' }, o: { properties: { x: { type: 'keyword' } } }, t: { type: 'text' } } });

  it('adds new fields, object children and multi-fields', () => {
    const m = base();
    m.merge({ properties: { b: { type: 'keyword' }, o: { properties: { y: { type: 'date' } } }, t: { type: 'text', fields: { raw: { type: 'keyword' } } } } });
    expect([m.fieldType('b'), m.fieldType('o.y'), m.fieldType('t.raw'), m.fieldType('a')]).toEqual(['keyword', 'date', 'keyword', 'long']);
  });

  it('updates dynamic and ignore_above', () => {
    const m = new IndexMapping({ properties: { k: { type: 'keyword', ignore_above: 10 } } });
    m.merge({ dynamic: 'strict', properties: { k: { type: 'keyword', ignore_above: 20 } } });
    expect(m.toJSON()).toEqual({ dynamic: 'strict', properties: { k: { type: 'keyword', ignore_above: 20 } } });
  });

  it.each([
    ['a type change', { properties: { a: { type: 'keyword' } } }, 'mapper [a] cannot be changed from type [long] to [keyword]'],
    ['a parameter change', { properties: { a: { type: 'long', null_value: 3 } } }, 'Mapper for [a] conflicts with existing mapper:\n\tCannot update parameter [null_value] from [null] to [3]'],
    ['an object to a leaf', { properties: { o: { type: 'keyword' } } }, "can't merge a non object mapping [o] with an object mapping"],
  ])('rejects %s and applies nothing', (_what, body, reason) => {
    const m = base();
    const before = JSON.stringify(m.toJSON());
    expect(() => m.merge({ properties: { fresh: { type: 'long' }, ...body.properties } })).toThrow(reason);
    expect(JSON.stringify(m.toJSON())).toBe(before);
  });
});
