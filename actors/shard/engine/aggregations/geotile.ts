import { illegalArgument } from '../../../wire/esErrors';
import { decodeGeo } from '../index/fieldCodecs';
import type { AggPartial, BucketPartial, GeoTilePartial as TilePartial, PartialMap } from './aggPartials';
import type { AggregationType } from './aggTypes';
import { bucketing, mergeBuckets } from './bucketing';
import { fieldValues } from './values';

/**
 * `geotile_grid` (GeoTileGridAggregator): a bucket per map tile `zoom/x/y` holding a doc's point,
 * Web Mercator tiles as GeoTileUtils computes them; the `size` most populated tiles, ties in
 * tile-hash order (zoom, x, y).
 */

/** GeoTileUtils.MAX_ZOOM. */
const MAX_ZOOM = 29;

/** The tile of a point at `zoom` (x from the longitude, y from the Mercator latitude, both clamped). */
export function tileOf(lat: number, lon: number, zoom: number): [number, number] {
  const tiles = 2 ** zoom;
  const clamp = (v: number) => Math.max(0, Math.min(tiles - 1, v));
  const x = clamp(Math.floor(((lon + 180) / 360) * tiles));
  const s = Math.sin((lat * Math.PI) / 180);
  const yf = 0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI);
  const y = clamp(Number.isFinite(yf) ? Math.floor(yf * tiles) : yf > 0 ? tiles - 1 : 0);
  return [x, y];
}

/** Tile keys `z/x/y` and their hash order (GeoTileUtils.longEncode). */
const keyOf = (z: number, x: number, y: number) => `${z}/${x}/${y}`;
const hashOf = (key: string): bigint => {
  const [z, x, y] = key.split('/').map(BigInt);
  return (z << 58n) | (x << 29n) | y;
};

function parsePrecision(v: unknown): number {
  if (v === undefined) return 7;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > MAX_ZOOM) throw illegalArgument(`Invalid geotile_grid precision of ${String(v)}. Must be between 0 and ${MAX_ZOOM}.`);
  return n;
}

const order = (a: BucketPartial, b: BucketPartial) => b.count - a.count || (hashOf(String(a.key)) < hashOf(String(b.key)) ? -1 : 1);

export const geotileGridAgg: AggregationType = {
  params: ['field', 'precision', 'size', 'shard_size', 'bounds'],
  check: (spec) => void parsePrecision(spec.params.precision),
  factory(spec, ctx) {
    const { type, read, field } = fieldValues(spec, ctx.reader);
    if (type !== undefined && type !== 'geo_point') throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [geotile_grid]`);
    const z = parsePrecision(spec.params.precision);
    const size = Number(spec.params.size ?? 10000);
    const shardSize = Number(spec.params.shard_size ?? Math.max(size, Math.trunc(size * 1.5 + 10)));
    const b = spec.params.bounds as { top_left?: { lat: number; lon: number }; bottom_right?: { lat: number; lon: number } } | undefined;
    const inBounds = (p: { lat: number; lon: number }) =>
      !b?.top_left || !b.bottom_right || (p.lat <= b.top_left.lat && p.lat >= b.bottom_right.lat && p.lon >= b.top_left.lon && p.lon <= b.bottom_right.lon);
    const subs = ctx.subs(spec.subs);
    return () => {
      const bk = bucketing((doc) => [...new Set(read(doc).map((v) => decodeGeo(String(v))).filter(inBounds).map((p) => keyOf(z, ...tileOf(p.lat, p.lon, z))))], subs, {
        budget: ctx.budget, name: spec.name, count: ctx.top, cap: shardSize, subs: spec.subs.length,
      });
      return { collect: bk.collect, partial: (): TilePartial => ({ t: 'geotile_grid', buckets: bk.buckets().sort(order).slice(0, shardSize) }) };
    };
  },
  merge(x: AggPartial, y: AggPartial, _s, reduceSubs: (maps: PartialMap[]) => PartialMap): TilePartial {
    const a = x as TilePartial, b = y as TilePartial;
    return { t: 'geotile_grid', buckets: mergeBuckets(a.buckets, b.buckets, reduceSubs) };
  },
  render(s, partial, ctx) {
    const p = partial as TilePartial | undefined;
    const size = Number(s.params.size ?? 10000);
    const buckets = [...(p?.buckets ?? [])].sort(order).slice(0, size).map((bk) => ({ key: bk.key, doc_count: bk.count, ...ctx.renderSubs(bk.subs, s.subs) }));
    ctx.countBuckets(buckets.length);
    return { buckets };
  },
};
