import { illegalArgument } from '../../../wire/esErrors';
import { cidrTerms, decodeIp, encodeIp, ipStep } from '../index/fieldCodecs';
import type { AggPartial, PartialMap, RangePartial } from './aggPartials';
import type { AggregationType, AggSpec, Aggregators } from './aggTypes';
import { fieldValues } from './values';

/**
 * `ip_range` (ES's BinaryRangeAggregator over ip fields): buckets `[from, to)` of addresses, from
 * `from`/`to` or a CIDR `mask`, in ascending (from, to) order, keyed by `key`, the mask, or
 * `from-to` (`*` for open ends); bounds shown as addresses. Compared as 16-byte terms.
 */

interface IpRange {
  key?: string;
  /** Encoded bounds; null = open. */
  from: string | null;
  to: string | null;
}

const addr = (v: unknown): string => {
  try {
    return encodeIp(String(v));
  } catch (e) {
    throw illegalArgument((e as Error).message);
  }
};

function ranges(spec: AggSpec): IpRange[] {
  const list = spec.params.ranges;
  if (!Array.isArray(list) || list.length === 0) throw illegalArgument(`No [ranges] specified for the [${spec.name}] aggregation`);
  const out = list.map((r: Record<string, unknown>): IpRange => {
    if (r.mask !== undefined) {
      if (r.from !== undefined || r.to !== undefined) throw illegalArgument('[mask] must not be combined with [from] or [to]');
      let lo: string, hi: string;
      try {
        [lo, hi] = cidrTerms(String(r.mask));
      } catch (e) {
        throw illegalArgument((e as Error).message);
      }
      return { key: r.key !== undefined ? String(r.key) : String(r.mask), from: lo, to: ipStep(hi, true) };
    }
    const from = r.from === undefined || r.from === null ? null : addr(r.from);
    const to = r.to === undefined || r.to === null ? null : addr(r.to);
    return { ...(r.key !== undefined ? { key: String(r.key) } : {}), from, to };
  });
  return out.sort((a, b) => cmp(a.from ?? '', b.from ?? '') || cmp(a.to ?? '\uffff', b.to ?? '\uffff'));
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export const ipRangeAgg: AggregationType = {
  params: ['field', 'ranges', 'keyed', 'missing', 'script'],
  check: (spec) => void ranges(spec),
  factory(spec, ctx) {
    const { type, read, field } = fieldValues(spec, ctx.reader);
    if (type !== undefined && type !== 'ip') throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [ip_range]`);
    const rs = ranges(spec);
    const subs = ctx.subs(spec.subs);
    return () => {
      const counts = rs.map(() => 0);
      const bucketSubs: Array<Aggregators | undefined> = rs.map(() => undefined);
      return {
        collect(doc) {
          const vals = read(doc).map((v) => addr(v));
          rs.forEach((r, i) => {
            if (!vals.some((v) => (r.from === null || v >= r.from) && (r.to === null || v < r.to))) return;
            counts[i]++;
            (bucketSubs[i] ??= subs()).collect(doc);
          });
        },
        partial: (): RangePartial => ({ t: 'range', buckets: rs.map((_, i) => ({ count: counts[i], subs: (bucketSubs[i] ?? subs()).partial() })) }),
      };
    };
  },
  merge(a: AggPartial, b: AggPartial, _s, reduceSubs: (maps: PartialMap[]) => PartialMap): RangePartial {
    const x = a as RangePartial, y = b as RangePartial;
    return { t: 'range', buckets: x.buckets.map((bx, i) => ({ count: bx.count + y.buckets[i].count, subs: reduceSubs([bx.subs, y.buckets[i].subs]) })) };
  },
  render(s, partial, ctx) {
    const p = partial as RangePartial | undefined;
    const buckets = ranges(s).map((r, i) => {
      const f = r.from === null ? null : decodeIp(r.from), t = r.to === null ? null : decodeIp(r.to);
      const body: Record<string, unknown> = { key: r.key ?? `${f ?? '*'}-${t ?? '*'}` };
      if (f !== null) body.from = f;
      if (t !== null) body.to = t;
      body.doc_count = p?.buckets[i]?.count ?? 0;
      return { ...body, ...ctx.renderSubs(p?.buckets[i]?.subs ?? {}, s.subs) };
    });
    ctx.countBuckets(buckets.length);
    if (s.params.keyed === true || s.params.keyed === 'true') return { buckets: Object.fromEntries(buckets.map(({ key, ...b }) => [key as string, b])) };
    return { buckets };
  },
};
