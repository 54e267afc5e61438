/**
 * Metric partials cross NATS as lossless JSON, so a large integral value (a long beyond 2^53, a
 * double like 1e20) reaches the reduce as a bigint: merging it with a number must not throw (it
 * did: a 500 for `max`/`min`/`avg`/`sum` over two shards).
 */
import { reduceAggs, renderAggs } from '../../../../../actors/shard/engine';
import { parseJson, stringify } from '../../../../../actors/wire/json';

const viaJson = (p: unknown) => parseJson(stringify(p));

describe('metric partials with bigints from the JSON round trip', () => {
  it.each([
    ['max', { t: 'max', kind: 'double', value: 1e20 }, { t: 'max', kind: 'double', value: 3 }, 1e20],
    ['min', { t: 'min', kind: 'long', value: 2 ** 53 + 2 }, { t: 'min', kind: 'long', value: 5 }, 5],
    ['sum', { t: 'sum', kind: 'long', value: 2 ** 60 }, { t: 'sum', kind: 'long', value: 7 }, 2 ** 60 + 7],
    ['avg', { t: 'avg', kind: 'long', sum: 2 ** 60, count: 2 }, { t: 'avg', kind: 'long', sum: 10, count: 2 }, (2 ** 60 + 10) / 4],
  ])('merges and renders %s', (type, a, b, value) => {
    const aggs = { x: { [type]: { field: 'f' } } };
    const partials = [viaJson({ x: a }), viaJson({ x: b })];
    expect(typeof (partials[0] as { x: { value?: unknown; sum?: unknown } }).x[type === 'avg' ? 'sum' : 'value']).toBe('bigint');
    expect(renderAggs(reduceAggs(partials, aggs), aggs, false)).toEqual({ x: { value } });
  });
});
