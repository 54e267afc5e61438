import { SchemaSet } from '../../../streams/jsonSchema';
import { documentedTypes, eventSchemas, validateFact } from '../../../streams/eventSchemas';

const U = '0190a8c0-0000-7000-8000-000000000001';
const C = '5d7e3f1a-2b4c-4d6e-8f00-112233445566';
const env = (type: string, data: unknown, extra: Record<string, unknown> = {}) => ({
  v: 1,
  id: U,
  type,
  schema: 1,
  aggregateId: C,
  seq: 1,
  time: '2024-05-01T10:00:00.000Z',
  data,
  ...extra,
});
const pinned = [{ index: 'books', indexUuid: 'u1', n: 0, shardIndex: 0, searcher: { maxDoc: 10, seqNo: 9 } }];
const opened = { keepAliveMs: 60000, indices: ['books'], shards: 1, pinned };
const NODE_A = 'n0dEaAAAAAAAAAAAAAAAAA';
const NODE_B = 'n0dEbBBBBBBBBBBBBBBBBB';
const joined = { name: 'node-a', host: '127.0.0.1', http_address: '127.0.0.1:9200', version: '8.15.0', started_at: 1714557600000 };

describe('JSON Schema subset validator', () => {
  const set = new SchemaSet([
    {
      $id: 'x.schema.json',
      type: 'object',
      required: ['a'],
      additionalProperties: false,
      properties: {
        a: { type: 'integer', minimum: 1 },
        b: { type: ['string', 'null'], pattern: '^z' },
        c: { type: 'array', minItems: 1, items: { $ref: '#/$defs/c' } },
        d: { oneOf: [{ const: 1 }, { enum: [2, 3] }] },
        t: { type: 'string', format: 'date-time' },
      },
      $defs: { c: { type: 'object', properties: { k: { const: 'v' } } } },
    },
  ]);
  const cases: Array<[string, unknown, string[]]> = [
    ['accepts a valid value', { a: 1, b: null, c: [{ k: 'v' }], d: 3, t: '2024-01-01T00:00:00Z' }, []],
    ['reports a missing required property', {}, ['/a is required']],
    ['reports a wrong type', { a: 'x' }, ['/a must be integer, got string']],
    ['rejects a number where an integer is required', { a: 1.5 }, ['/a must be integer, got number']],
    ['checks minimum', { a: 0 }, ['/a must be >= 1']],
    ['checks pattern', { a: 1, b: 'y' }, ['/b must match ^z']],
    ['checks minItems and items through a local $ref', { a: 1, c: [] }, ['/c must have at least 1 items']],
    ['checks const inside array items', { a: 1, c: [{ k: 'w' }] }, ['/c/0/k must be "v"']],
    ['rejects undocumented properties', { a: 1, secret: 's' }, ['/secret is not a documented property']],
    ['explains a failed oneOf with its closest alternative', { a: 1, d: 4 }, ['/d must be 1']],
    ['checks date-time format', { a: 1, t: 'yesterday' }, ['/t must be a date-time']],
  ];
  it.each(cases)('%s', (_name, value, expected) => {
    expect(set.validate('x.schema.json', value).map((e) => `${e.path} ${e.message}`)).toEqual(expected);
  });

  it('refuses a schema that uses a keyword outside the subset', () => {
    expect(() => new SchemaSet([{ $id: 'y.schema.json', type: 'object', patternProperties: {} }])).toThrow(/patternProperties/);
  });

  it('refuses an unsupported format', () => {
    expect(() => new SchemaSet([{ $id: 'y.schema.json', format: 'email' }])).toThrow(/email/);
  });

  it('fails loudly on an unresolved $ref', () => {
    const s = new SchemaSet([{ $id: 'z.schema.json', $ref: 'nope.schema.json' }]);
    expect(() => s.validate('z.schema.json', 1)).toThrow(/unresolved/);
  });
});

describe('event schemas', () => {
  it('register without unsupported keywords', () => {
    expect(() => eventSchemas()).not.toThrow();
  });

  it('document every lifecycle fact of contexts and credentials', () => {
    expect(documentedTypes()).toEqual(
      expect.arrayContaining([
        'scroll.opened', 'scroll.extended', 'scroll.released', 'scroll.expired', 'scroll.cleared',
        'pit.opened', 'pit.extended', 'pit.released', 'pit.expired', 'pit.closed',
        'token.created', 'token.refreshed', 'token.invalidated', 'token.expired',
        'apikey.created', 'apikey.updated', 'apikey.invalidated', 'apikey.expired',
        'servicetoken.created', 'servicetoken.invalidated',
        'scroll.adopted', 'pit.adopted', 'node.joined', 'node.left',
      ]),
    );
  });

  const valid: Array<[string, unknown]> = [
    ['scroll.opened', env('scroll.opened', { ...opened, owner: { username: 'elastic', realm: 'reserved' }, slice: { id: 0, max: 2 } })],
    ['scroll.extended', env('scroll.extended', { keepAliveMs: 1000 })],
    ['scroll.released', env('scroll.released', { reason: 'no_scroll_param' })],
    ['scroll.cleared with a correlation id', env('scroll.cleared', {}, { correlationId: 'req-1' })],
    ['pit.opened', env('pit.opened', opened)],
    ['pit.closed', env('pit.closed', {})],
    ['token.invalidated', env('token.invalidated', { access: true, refresh: false, at: 1 })],
    ['apikey.invalidated', env('apikey.invalidated', { invalidation: 5 }, { aggregateId: 'VuaCfGcBCdbkQm-e5aOx' })],
    ['servicetoken.invalidated', env('servicetoken.invalidated', { at: 5 })],
    ['scroll.opened with its owner node, appended by it', env('scroll.opened', { ...opened, node: NODE_A }, { node: NODE_A })],
    ['scroll.adopted', env('scroll.adopted', { from: NODE_A, to: NODE_B }, { seq: 3, node: NODE_B })],
    ['pit.adopted', env('pit.adopted', { from: NODE_A, to: NODE_B }, { seq: 2, node: NODE_B })],
    ['pit.adopted of a context no node owned (a log older than clustering)', env('pit.adopted', { from: '', to: NODE_B }, { seq: 2, node: NODE_B })],
    ['node.joined', env('node.joined', joined, { aggregateId: NODE_A, node: NODE_A })],
    ['node.left on a clean stop', env('node.left', { reason: 'stopped' }, { aggregateId: NODE_A, seq: 2, node: NODE_A })],
    ['node.left recorded by the lease holder', env('node.left', { reason: 'timed_out', by: NODE_B, silent_ms: 2100 }, { aggregateId: NODE_A, seq: 2, node: NODE_B })],
    ['node.left of a node that said it left without its fact', env('node.left', { reason: 'stopped', by: NODE_B }, { aggregateId: NODE_A, seq: 2, node: NODE_B })],
  ];
  it.each(valid)('accept a valid %s', (_n, e) => {
    expect(validateFact(e)).toEqual([]);
  });

  const invalid: Array<[string, unknown, string]> = [
    ['a scroll fact with an unknown reason', env('scroll.released', { reason: 'bored' }), '/data/reason must be one of'],
    ['a fact with an undocumented data field', env('scroll.extended', { keepAliveMs: 1, scrollId: 'FGlu' }), '/data/scrollId is not a documented property'],
    ['an expired fact with data', env('pit.expired', { keepAliveMs: 1 }), '/data/keepAliveMs is not a documented property'],
    ['an unknown fact type', env('pit.frozen', {}), '/type must be one of'],
    ['an unknown aggregate', env('cursor.opened', {}), 'no schema for aggregate'],
    ['a non-uuid context id', env('pit.closed', {}, { aggregateId: 'FGluY2x1ZGVfY29udGV4dF91dWlk' }), '/aggregateId must be a uuid'],
    ['a bad envelope version', env('pit.closed', {}, { v: 2 }), '/v must be 1'],
    ['a reader-added field', env('pit.closed', {}, { streamSeq: 4 }), '/streamSeq is not a documented property'],
    ['an opened fact without pinned shards', env('pit.opened', { keepAliveMs: 1, indices: [], shards: 0 }), '/data/pinned is required'],
    ['an adopted fact without its new owner', env('scroll.adopted', { from: NODE_A }), '/data/to is required'],
    ['an adopted fact with an undocumented field', env('pit.adopted', { from: NODE_A, to: NODE_B, keepAliveMs: 5 }), '/data/keepAliveMs is not a documented property'],
    ['an envelope node that is not one subject token', env('pit.closed', {}, { node: 'node a' }), '/node must match'],
    ['a node.left with an unknown reason', env('node.left', { reason: 'crashed' }, { aggregateId: NODE_A }), '/data/reason must be one of'],
    ['a node.left with a negative silence', env('node.left', { reason: 'timed_out', by: NODE_B, silent_ms: -1 }, { aggregateId: NODE_A }), '/data/silent_ms must be >= 0'],
    ['a node.joined without its HTTP address', env('node.joined', (({ http_address: _h, ...rest }) => rest)(joined), { aggregateId: NODE_A }), '/data/http_address is required'],
    ['a node.joined with an undocumented field', env('node.joined', { ...joined, password: 'x' }, { aggregateId: NODE_A }), '/data/password is not a documented property'],
    ['an unknown node fact', env('node.crashed', {}, { aggregateId: NODE_A }), '/type must be one of'],
    ['a node id that is not one subject token', env('node.left', { reason: 'stopped' }, { aggregateId: 'node.a' }), '/aggregateId must match'],
  ];
  it.each(invalid)('reject %s', (_n, e, message) => {
    expect(validateFact(e).map((x) => `${x.path} ${x.message}`).join('\n')).toContain(message);
  });
});
