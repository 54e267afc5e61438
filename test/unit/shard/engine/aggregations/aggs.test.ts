import { createAggregators, parseAggs, reduceAggs, renderAggs } from '../../../../../actors/shard/engine/aggregations/aggs';
import { formatDate } from '../../../../../actors/shard/engine/aggregations/aggDates';
import { EsError } from '../../../../../actors/wire/esErrors';
import type { DocValuesReader, FieldType } from '../../../../../actors/shard/engine/types';
import { stringify, parseJson } from '../../../../../actors/wire/json';

type Doc = Record<string, unknown>;

/** A DocValuesReader over an array of docs (arrays = multi-valued). */
function reader(mapping: Record<string, FieldType>, docs: Doc[]): DocValuesReader {
  return {
    fieldType: (f) => mapping[f],
    values: (f, doc) => {
      const v = docs[doc]?.[f];
      if (v === undefined || v === null) return [];
      return (Array.isArray(v) ? v : [v]) as Array<number | bigint | string | boolean>;
    },
  };
}

const MAPPING: Record<string, FieldType> = { tag: 'keyword', n: 'long', price: 'double', ok: 'boolean', ts: 'date', body: 'text' };
const day = (d: string) => Date.parse(`${d}T00:00:00Z`);

/** Runs aggs on each shard's docs, ships partials through JSON (as over NATS), reduces and renders. */
function run(aggs: unknown, shards: Doc[][], typedKeys = false): Record<string, unknown> {
  const partials = shards.map((docs) => {
    const a = createAggregators(aggs, reader(MAPPING, docs));
    docs.forEach((_, i) => a.collect(i));
    return parseJson(stringify(a.partial()));
  });
  return renderAggs(reduceAggs(partials, aggs), aggs, typedKeys);
}

function fail(runIt: () => unknown): EsError {
  try {
    runIt();
  } catch (e) {
    return e as EsError;
  }
  throw new Error('expected failure');
}

describe('terms', () => {
  const shards: Doc[][] = [
    [{ tag: 'a' }, { tag: 'b' }, { tag: ['a', 'a', 'c'] }],
    [{ tag: 'b' }, { tag: 'a' }, { tag: 'd' }],
    [{ tag: 'b' }, {}],
  ];

  it('counts docs per key across shards, _count desc then _key asc', () => {
    expect(run({ t: { terms: { field: 'tag' } } }, shards)).toEqual({
      t: {
        doc_count_error_upper_bound: 0,
        sum_other_doc_count: 0,
        buckets: [{ key: 'a', doc_count: 3 }, { key: 'b', doc_count: 3 }, { key: 'c', doc_count: 1 }, { key: 'd', doc_count: 1 }],
      },
    });
  });

  it('truncates to size and reports the rest in sum_other_doc_count', () => {
    const r = run({ t: { terms: { field: 'tag', size: 2 } } }, shards) as { t: Record<string, unknown> };
    expect(r.t.sum_other_doc_count).toBe(2);
    expect((r.t.buckets as unknown[]).length).toBe(2);
  });

  it('orders by key and by count asc', () => {
    const byKey = run({ t: { terms: { field: 'tag', order: { _key: 'desc' } } } }, shards) as { t: { buckets: Array<{ key: string }> } };
    expect(byKey.t.buckets.map((b) => b.key)).toEqual(['d', 'c', 'b', 'a']);
    const asc = run({ t: { terms: { field: 'tag', order: [{ _count: 'asc' }] } } }, shards) as { t: { buckets: Array<{ key: string }> } };
    expect(asc.t.buckets.map((b) => b.key)).toEqual(['c', 'd', 'a', 'b']);
  });

  it('applies min_doc_count and missing', () => {
    const r = run({ t: { terms: { field: 'tag', min_doc_count: 2, missing: 'none' } } }, shards) as { t: Record<string, unknown> };
    expect(r.t.buckets).toEqual([{ key: 'a', doc_count: 3 }, { key: 'b', doc_count: 3 }]);
    expect(r.t.sum_other_doc_count).toBe(3);
  });

  it('renders numeric, boolean and date keys like ES, with typed keys', () => {
    const docs: Doc[] = [{ n: 5, ok: true, ts: day('2024-01-02'), price: 1.5 }, { n: 9007199254740993n, ok: false, ts: day('2024-01-02'), price: 2 }];
    const r = run({ n: { terms: { field: 'n' } }, ok: { terms: { field: 'ok' } }, ts: { terms: { field: 'ts' } }, p: { terms: { field: 'price' } } }, [docs], true);
    expect(r['lterms#n']).toMatchObject({ buckets: [{ key: 5, doc_count: 1 }, { key: 9007199254740993n, doc_count: 1 }] });
    expect(r['lterms#ok']).toMatchObject({ buckets: [{ key: 0, key_as_string: 'false', doc_count: 1 }, { key: 1, key_as_string: 'true', doc_count: 1 }] });
    expect(r['lterms#ts']).toMatchObject({ buckets: [{ key: day('2024-01-02'), key_as_string: '2024-01-02T00:00:00.000Z', doc_count: 2 }] });
    expect(r['dterms#p']).toMatchObject({ buckets: [{ key: 1.5, doc_count: 1 }, { key: 2, doc_count: 1 }] });
  });

  it('renders an unmapped field as empty sterms', () => {
    expect(run({ u: { terms: { field: 'nope' } } }, [[{ tag: 'a' }]], true)).toEqual({
      'sterms#u': { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [] },
    });
  });

  it('bounds the doc count error when shards truncate', () => {
    const many = (prefix: string, n: number): Doc[] => Array.from({ length: n }, (_, i) => ({ tag: `${prefix}${i}` }));
    const r = run({ t: { terms: { field: 'tag', size: 1, shard_size: 1 } } }, [[...many('x', 3), { tag: 'x0' }], [{ tag: 'y' }, { tag: 'y' }, { tag: 'z' }]]) as { t: Record<string, unknown> };
    expect(r.t).toMatchObject({ doc_count_error_upper_bound: 4, sum_other_doc_count: 5, buckets: [{ key: 'x0', doc_count: 2 }] });
  });

  it('filters keys with include/exclude', () => {
    const r = run({ t: { terms: { field: 'tag', include: 'a|b', exclude: ['b'] } } }, shards) as { t: { buckets: unknown[] } };
    expect(r.t.buckets).toEqual([{ key: 'a', doc_count: 3 }]);
  });

  it('orders by a metric sub-aggregation and renders sub-aggs in buckets', () => {
    const docs: Doc[] = [{ tag: 'a', n: 1 }, { tag: 'a', n: 3 }, { tag: 'b', n: 10 }];
    const r = run({ t: { terms: { field: 'tag', order: { mx: 'desc' } }, aggs: { mx: { max: { field: 'n' } } } } }, [docs.slice(0, 2), docs.slice(2)]);
    expect(r).toEqual({
      t: {
        doc_count_error_upper_bound: -1,
        sum_other_doc_count: 0,
        buckets: [{ key: 'b', doc_count: 1, mx: { value: 10 } }, { key: 'a', doc_count: 2, mx: { value: 3 } }],
      },
    });
  });
});

describe('metrics', () => {
  const shards: Doc[][] = [[{ n: 1, ts: day('2024-01-01') }, { n: [2, 3] }], [{ n: 10, ts: day('2024-03-01') }, {}], []];

  it('computes min/max/avg/sum/value_count across shards', () => {
    const aggs = { mn: { min: { field: 'n' } }, mx: { max: { field: 'n' } }, av: { avg: { field: 'n' } }, sm: { sum: { field: 'n' } }, vc: { value_count: { field: 'n' } } };
    expect(run(aggs, shards)).toEqual({ mn: { value: 1 }, mx: { value: 10 }, av: { value: 4 }, sm: { value: 16 }, vc: { value: 4 } });
  });

  it('renders empty metrics with ES shapes', () => {
    const aggs = { mn: { min: { field: 'n' } }, av: { avg: { field: 'n' } }, sm: { sum: { field: 'n' } }, vc: { value_count: { field: 'n' } } };
    expect(run(aggs, [[{}]])).toEqual({ mn: { value: null }, av: { value: null }, sm: { value: 0 }, vc: { value: 0 } });
    expect(renderAggs(reduceAggs([], aggs), aggs, true)).toEqual({
      'min#mn': { value: null }, 'avg#av': { value: null }, 'sum#sm': { value: 0 }, 'value_count#vc': { value: 0 },
    });
  });

  it('adds value_as_string for dates (and format)', () => {
    const r = run({ first: { min: { field: 'ts' } }, last: { max: { field: 'ts', format: 'yyyy-MM-dd' } } }, shards);
    expect(r).toEqual({
      first: { value: day('2024-01-01'), value_as_string: '2024-01-01T00:00:00.000Z' },
      last: { value: day('2024-03-01'), value_as_string: '2024-03-01' },
    });
  });

  it('uses missing for docs without the field', () => {
    expect(run({ s: { sum: { field: 'n', missing: 100 } } }, [[{ n: 1 }, {}]])).toEqual({ s: { value: 101 } });
  });

  it('keeps meta first', () => {
    expect(Object.keys(run({ m: { max: { field: 'n' }, meta: { a: 1 } } }, shards).m as object)).toEqual(['meta', 'value']);
  });
});

describe('date_histogram', () => {
  const shards: Doc[][] = [
    [{ ts: Date.parse('2024-01-01T10:00:00Z'), n: 1 }, { ts: Date.parse('2024-01-04T01:00:00Z'), n: 2 }],
    [{ ts: Date.parse('2024-01-01T23:59:59Z'), n: 3 }],
  ];

  it('buckets by calendar day and fills empty days between first and last', () => {
    const r = run({ h: { date_histogram: { field: 'ts', calendar_interval: 'day' }, aggs: { s: { sum: { field: 'n' } } } } }, shards);
    expect(r).toEqual({
      h: {
        buckets: [
          { key_as_string: '2024-01-01T00:00:00.000Z', key: day('2024-01-01'), doc_count: 2, s: { value: 4 } },
          { key_as_string: '2024-01-02T00:00:00.000Z', key: day('2024-01-02'), doc_count: 0, s: { value: 0 } },
          { key_as_string: '2024-01-03T00:00:00.000Z', key: day('2024-01-03'), doc_count: 0, s: { value: 0 } },
          { key_as_string: '2024-01-04T00:00:00.000Z', key: day('2024-01-04'), doc_count: 1, s: { value: 2 } },
        ],
      },
    });
  });

  it('drops empty buckets with min_doc_count 1 and uses format', () => {
    const r = run({ h: { date_histogram: { field: 'ts', fixed_interval: '1d', min_doc_count: 1, format: 'yyyy-MM-dd' } } }, shards, true);
    expect(r).toEqual({
      'date_histogram#h': {
        buckets: [
          { key_as_string: '2024-01-01', key: day('2024-01-01'), doc_count: 2 },
          { key_as_string: '2024-01-04', key: day('2024-01-04'), doc_count: 1 },
        ],
      },
    });
  });

  it.each<[string, string, number[]]>([
    ['month', '2024-02-29T12:00:00Z', [Date.UTC(2024, 1, 1), Date.UTC(2024, 2, 1)]],
    ['1q', '2024-05-10T00:00:00Z', [Date.UTC(2024, 3, 1), Date.UTC(2024, 6, 1)]],
    ['year', '2024-05-10T00:00:00Z', [Date.UTC(2024, 0, 1), Date.UTC(2025, 0, 1)]],
    ['week', '2024-01-04T00:00:00Z', [Date.UTC(2024, 0, 1), Date.UTC(2024, 0, 8)]], // Monday-based
    ['hour', '2024-01-04T05:30:00Z', [Date.UTC(2024, 0, 4, 5), Date.UTC(2024, 0, 4, 6)]],
    ['1m', '2024-01-04T05:30:59Z', [Date.UTC(2024, 0, 4, 5, 30), Date.UTC(2024, 0, 4, 5, 31)]],
  ])('rounds %s', (interval, at, [k1, k2]) => {
    const docs: Doc[] = [{ ts: Date.parse(at) }, { ts: k2 }];
    const r = run({ h: { date_histogram: { field: 'ts', calendar_interval: interval } } }, [docs]) as { h: { buckets: Array<{ key: number }> } };
    expect(r.h.buckets.map((b) => b.key)).toEqual([k1, k2]);
  });

  it('widens with extended_bounds and supports keyed output', () => {
    const r = run({ h: { date_histogram: { field: 'ts', calendar_interval: '1d', extended_bounds: { min: '2023-12-31', max: '2024-01-01' }, keyed: true, format: 'yyyy-MM-dd' } } }, [[{ ts: day('2024-01-01') }]]);
    expect(r).toEqual({
      h: { buckets: { '2023-12-31': { key_as_string: '2023-12-31', key: day('2023-12-31'), doc_count: 0 }, '2024-01-01': { key_as_string: '2024-01-01', key: day('2024-01-01'), doc_count: 1 } } },
    });
  });

  it('renders no buckets when nothing matched', () => {
    expect(run({ h: { date_histogram: { field: 'ts', calendar_interval: 'day' } } }, [[]])).toEqual({ h: { buckets: [] } });
  });
});

describe('aggregation validation', () => {
  it.each<[unknown, string, string]>([
    [{ a: { foo: {} } }, 'parsing_exception', 'Unknown aggregation type [foo]'],
    [{ a: { term: { field: 'x' } } }, 'parsing_exception', 'Unknown aggregation type [term] did you mean [terms]?'],
    [{ a: 'x' }, 'parsing_exception', 'Aggregation definition for [a starts with a [VALUE_STRING], expected a [START_OBJECT].'],
    [{ a: { terms: 'x' } }, 'parsing_exception', 'Expected [START_OBJECT] under [terms], but got a [VALUE_STRING] in [a]'],
    [{ a: {} }, 'parsing_exception', 'Missing definition for aggregation [a]'],
    [{ a: { terms: { field: 'x' }, min: { field: 'y' } } }, 'parsing_exception', 'Found two aggregation type definitions in [a]: [terms] and [min]'],
    [{ 'a>b': { terms: { field: 'x' } } }, 'parsing_exception', "Invalid aggregation name [a>b]. Aggregation names can contain any character except '[', ']', and '>'"],
    [{ a: { terms: { field: 'x', foo: 1 } } }, 'x_content_parse_exception', '[1:1] [terms] unknown field [foo]'],
    [{ a: { terms: { field: 'x', size: 0 } } }, 'x_content_parse_exception', '[1:1] [terms] failed to parse field [size]'],
    [{ a: { date_histogram: { field: 'ts', calendar_interval: '2d' } } }, 'x_content_parse_exception', '[1:1] [date_histogram] failed to parse field [calendar_interval]'],
    [{ a: { date_histogram: { field: 'ts', fixed_interval: '2w' } } }, 'x_content_parse_exception', '[1:1] [date_histogram] failed to parse field [fixed_interval]'],
    [{ a: { min: { field: 'n' }, aggs: { b: { max: { field: 'n' } } } } }, 'aggregation_initialization_exception', 'Aggregator [a] of type [min] cannot accept sub-aggregations'],
    [{ a: { geo_bounds: { field: 'n' } } }, 'illegal_argument_exception', '[geo_bounds] aggregation is not supported'],
  ])('rejects %j', (aggs, type, reason) => {
    const e = fail(() => parseAggs(aggs));
    expect([e.type, e.message]).toEqual([type, reason]);
  });

  it('explains bad intervals in caused_by', () => {
    expect(fail(() => parseAggs({ a: { date_histogram: { field: 'ts', calendar_interval: '2d' } } })).extra.causedBy?.message)
      .toBe('The supplied interval [2d] could not be parsed as a calendar interval.');
    expect(fail(() => parseAggs({ a: { date_histogram: { field: 'ts', fixed_interval: '2w' } } })).extra.causedBy?.message)
      .toBe('failed to parse setting [date_histogram.fixedInterval] with value [2w] as a time value: unit is missing or unrecognized');
  });

  it.each<[unknown, string]>([
    [{ a: { terms: {} } }, 'Required one of fields [field, script], but none were specified.'],
    [{ a: { terms: { field: 'body' } } }, 'Text fields are not optimised for operations that require per-document field data like aggregations and sorting, so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true on [body] in order to load field data by uninverting the inverted index. Note that this can use significant memory.'],
    [{ a: { avg: { field: 'tag' } } }, 'Field [tag] of type [keyword] is not supported for aggregation [avg]'],
    [{ a: { date_histogram: { field: 'ts' } } }, 'Invalid interval specified, must be non-null and non-empty'],
  ])('fails on the shard for %j', (aggs, reason) => {
    const e = fail(() => createAggregators(aggs, reader(MAPPING, [])));
    expect([e.type, e.message]).toEqual(['illegal_argument_exception', reason]);
  });
});

describe('formatDate', () => {
  it.each<[number, string, string]>([
    [0, 'strict_date_optional_time', '1970-01-01T00:00:00.000Z'],
    [Date.UTC(2021, 1, 11, 8, 30, 4, 828), 'yyyy-MM-dd HH:mm:ss.SSS', '2021-02-11 08:30:04.828'],
    [Date.UTC(2021, 1, 11), 'epoch_millis', String(Date.UTC(2021, 1, 11))],
    [Date.UTC(2021, 1, 11), 'epoch_second||strict_date', String(Date.UTC(2021, 1, 11) / 1000)],
    [Date.UTC(2021, 1, 11), "dd MMM yyyy'!'", '11 Feb 2021!'],
  ])('formats %d with %s', (ms, f, s) => {
    expect(formatDate(ms, f)).toBe(s);
  });
});
