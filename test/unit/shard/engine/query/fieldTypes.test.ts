/**
 * The ip, geo_point and range field types (issue 24): their codecs, indexing (every input form,
 * ES's errors), queries (CIDR terms, ranges, relations, geo_distance, geo_bounding_box), sorts
 * (ip, _geo_distance), aggregations (terms keys on ip, ip_range, geotile_grid) and doc values.
 */
import { shardWith, search, ids, by } from '../engineFixture';
import { cidrTerms, decodeGeo, decodeIp, encodeGeo, encodeIp, parseIp } from '../../../../../actors/shard/engine/index/fieldCodecs';
import { parseQuery } from '../../../../../actors/shard/engine/request/queryDsl';
import { parseSort } from '../../../../../actors/shard/engine/request/searchSort';
import { IndexMapping, ShardStore } from '../../../../../actors/shard/engine';
import { tileOf } from '../../../../../actors/shard/engine/aggregations/geotile';

describe('ip codec', () => {
  it('parses IPv4 and IPv6 literals strictly, prints them as InetAddresses does', () => {
    expect(decodeIp(encodeIp('192.168.0.1'))).toBe('192.168.0.1');
    expect(decodeIp(encodeIp('::ffff:10.0.0.1'))).toBe('10.0.0.1');
    expect(decodeIp(encodeIp('2001:0db8:0000:0000:0000:ff00:0042:8329'))).toBe('2001:db8::ff00:42:8329');
    expect(decodeIp(encodeIp('::1'))).toBe('::1');
    expect(decodeIp(encodeIp('1:0:0:1:0:0:0:1'))).toBe('1:0:0:1::1');
    for (const bad of ['1.2.3', '01.2.3.4', '256.1.1.1', '1::2::3', 'abc', '1.2.3.4.5']) expect(parseIp(bad)).toBeNull();
  });
  it('orders addresses by their bytes', () => {
    expect(encodeIp('::1') < encodeIp('127.0.0.1')).toBe(true);
    expect(encodeIp('9.0.0.1') < encodeIp('10.0.0.1')).toBe(true);
  });
  it('CIDR prefixes span their addresses', () => {
    const [lo, hi] = cidrTerms('192.168.0.0/16');
    expect([decodeIp(lo), decodeIp(hi)]).toEqual(['192.168.0.0', '192.168.255.255']);
  });
});

describe('geo codec', () => {
  it('quantizes to 32 bits a coordinate, decodes within 1e-7', () => {
    const p = decodeGeo(encodeGeo(40.7128, -74.006));
    expect(Math.abs(p.lat - 40.7128)).toBeLessThan(1e-7);
    expect(Math.abs(p.lon + 74.006)).toBeLessThan(1e-7);
  });
  it('geotile of a point', () => {
    expect(tileOf(40.7128, -74.006, 7)).toEqual([37, 48]);
    expect(tileOf(0, 0, 0)).toEqual([0, 0]);
  });
});

const MAPPING = {
  properties: {
    ip: { type: 'ip' }, loc: { type: 'geo_point' }, ages: { type: 'integer_range' }, span: { type: 'date_range', format: 'yyyy-MM-dd' },
    nets: { type: 'ip_range' }, d: { type: 'double_range' },
  },
};
const store = shardWith({
  1: { ip: '192.168.0.1', loc: { lat: 40.7128, lon: -74.006 }, ages: { gte: 10, lte: 20 }, span: { gte: '2020-01-01', lte: '2020-12-31' }, nets: '10.0.0.0/8', d: { gt: 1.5, lt: 2.5 } },
  2: { ip: '10.0.0.5', loc: '51.5074,-0.1278', ages: { gte: 15, lt: 30 }, span: { gte: '2021-01-01' }, nets: { gte: '192.168.0.0', lte: '192.168.0.255' } },
  3: { ip: '::1', loc: [2.3522, 48.8566], ages: { gt: 30 } },
  4: { ip: ['10.0.0.9', '2001:db8::1'], loc: 'POINT (139.6917 35.6895)' },
  5: { loc: { type: 'Point', coordinates: [-122.4194, 37.7749] } },
}, MAPPING);
const run = (q: unknown) => search(store, { query: parseQuery(q) });

describe('indexing', () => {
  const fresh = () => new ShardStore({ index: 'i', shardId: 0, mapping: new IndexMapping(MAPPING), settings: () => ({ maxResultWindow: 10000, maxSlicesPerScroll: 1024 }) });
  const fail = (src: unknown) => {
    const o = fresh().write({ op: 'index', id: '1', source: JSON.stringify(src) });
    return o.ok ? undefined : o.error;
  };
  it('refuses malformed values with ES texts', () => {
    expect(fail({ ip: 'nope' })).toMatchObject({ type: 'mapper_parsing_exception', reason: expect.stringContaining("failed to parse field [ip] of type [ip] in document with id '1'") });
    expect(JSON.stringify(fail({ ip: 'nope' }))).toContain("'nope' is not an IP string literal.");
    expect(JSON.stringify(fail({ loc: { lat: 91, lon: 0 } }))).toContain('illegal latitude value [91.0] for loc');
    expect(JSON.stringify(fail({ ages: { gte: 1, foo: 2 } }))).toContain('error parsing field [ages], with unknown parameter [foo]');
    expect(JSON.stringify(fail({ ages: { gte: 5, lte: 1 } }))).toContain('min value (5) is greater than max value (1)');
  });
});

describe('ip queries, sorts and aggregations', () => {
  it('term, CIDR, terms, range', () => {
    expect(ids(run({ term: { ip: '192.168.0.1' } }))).toEqual(['1']);
    expect(ids(run({ term: { ip: '10.0.0.0/8' } })).sort()).toEqual(['2', '4']);
    expect(ids(run({ terms: { ip: ['::1', '192.168.0.0/24'] } })).sort()).toEqual(['1', '3']);
    expect(ids(run({ range: { ip: { gte: '10.0.0.5', lt: '10.0.0.9' } } }))).toEqual(['2']);
    expect(() => run({ term: { ip: 'x' } })).toThrow(/'x' is not an IP string literal/);
  });
  it('sorts by address, shows addresses, reads search_after back', () => {
    const r = search(store, { sort: [by('ip', 'asc')] });
    expect(r.hits.map((h) => h.sort![0])).toEqual(['::1', '10.0.0.5', '10.0.0.9', '192.168.0.1', null]);
    const after = search(store, { sort: [by('ip', 'asc')], searchAfter: ['10.0.0.5'] });
    expect(ids(after)).toEqual(['4', '1', '5']);
  });
  it('terms keys are addresses in byte order; include takes addresses; ip_range buckets', () => {
    const r = search(store, { size: 0, aggs: { t: { terms: { field: 'ip', order: { _key: 'asc' } } }, r: { ip_range: { field: 'ip', ranges: [{ to: '10.0.0.6' }, { mask: '10.0.0.0/8' }, { from: '192.168.0.0' }] } } } });
    // shard partials keep encoded keys (rendering shows addresses)
    const aggs = r.aggs as { t: { buckets: Array<{ key: string }> }; r: { buckets: Array<{ count: number }> } };
    expect(aggs.t.buckets.map((b) => decodeIp(b.key))).toEqual(['::1', '10.0.0.5', '10.0.0.9', '192.168.0.1', '2001:db8::1']);
    expect(aggs.r.buckets.map((b) => b.count)).toEqual([2, 2, 2]);
    const inc = search(store, { size: 0, aggs: { t: { terms: { field: 'ip', include: ['10.0.0.5'] } } } });
    expect((inc.aggs as typeof aggs).t.buckets.map((b) => decodeIp(b.key))).toEqual(['10.0.0.5']);
  });
});

describe('range fields', () => {
  it('term is a point inside; range relations', () => {
    expect(ids(run({ term: { ages: 18 } })).sort()).toEqual(['1', '2']);
    expect(ids(run({ term: { ages: 30 } }))).toEqual([]); // lt 30 and gt 30
    expect(ids(run({ range: { ages: { gte: 12, lte: 16 } } })).sort()).toEqual(['1', '2']);
    expect(ids(run({ range: { ages: { gte: 12, lte: 16, relation: 'within' } } }))).toEqual([]);
    expect(ids(run({ range: { ages: { gte: 12, lte: 16, relation: 'contains' } } }))).toEqual(['1']);
    expect(ids(run({ range: { ages: { gte: 0, lte: 25, relation: 'within' } } }))).toEqual(['1']);
    expect(ids(run({ range: { span: { gte: '2020-06-01', lte: '2020-06-30', relation: 'contains' } } }))).toEqual(['1']);
    expect(ids(run({ term: { span: '2030-01-01' } }))).toEqual(['2']);
    expect(ids(run({ term: { nets: '10.1.2.3' } }))).toEqual(['1']);
    expect(ids(run({ term: { d: 2.5 } }))).toEqual([]);
    expect(ids(run({ term: { d: 2 } }))).toEqual(['1']);
  });
});

describe('geo_point', () => {
  it('every input form indexes the same point', () => {
    expect(ids(run({ exists: { field: 'loc' } })).sort()).toEqual(['1', '2', '3', '4', '5']);
  });
  it('geo_distance and geo_bounding_box', () => {
    expect(ids(run({ geo_distance: { distance: '400km', loc: { lat: 48.8566, lon: 2.3522 } } })).sort()).toEqual(['2', '3']);
    expect(ids(run({ geo_distance: { distance: '1km', loc: '40.7128,-74.006' } }))).toEqual(['1']);
    expect(ids(run({ geo_bounding_box: { loc: { top_left: { lat: 60, lon: -10 }, bottom_right: { lat: 40, lon: 10 } } } })).sort()).toEqual(['2', '3']);
    expect(ids(run({ geo_bounding_box: { loc: { top: 60, left: 170, bottom: 0, right: -100 } } }))).toEqual(['5']); // across the dateline
    expect(ids(run({ geo_bounding_box: { loc: { top: 60, left: 130, bottom: 0, right: -100 } } })).sort()).toEqual(['4', '5']);
  });
  it('sorts by distance in a unit; a doc without a point is last', () => {
    const sort = parseSort([{ _geo_distance: { loc: { lat: 48.8566, lon: 2.3522 }, order: 'asc', unit: 'km' } }]);
    const r = search(store, { sort });
    expect(ids(r)).toEqual(['3', '2', '1', '5', '4']);
    expect(r.hits[0].sort![0]).toBeLessThan(0.001);
    expect(Math.round(r.hits[1].sort![0] as number)).toBe(344);
  });
  it('geotile_grid buckets', () => {
    const r = search(store, { size: 0, aggs: { g: { geotile_grid: { field: 'loc', precision: 0 } } } });
    expect(JSON.stringify(r.aggs)).toContain('0/0/0');
  });
  it('refuses a field sort and term queries', () => {
    expect(() => search(store, { sort: [by('loc')] })).toThrow(/can't sort on geo_point field/);
  });
});
