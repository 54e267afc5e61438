import { EsError, illegalArgument } from '../../../wire/esErrors';
import { parseDateMath } from '../base/dateMath';
import { DateParseError, dateFormatter } from '../base/dates';
import { DEFAULT_DATE_FORMAT, formatDate } from './aggDates';
import type { AggPartial, PartialMap, RangePartial } from './aggPartials';
import type { AggregationType, AggSpec, Aggregators } from './aggTypes';
import { DATES, fieldValues, NUMERIC, toNumber } from './values';

/**
 * `range` and `date_range` (ES's RangeAggregator): buckets `[from, to)` over a numeric or date
 * field, in ascending (from, to) order, keyed by the given `key` or `from-to` (`*` for open ends;
 * numbers printed as Java prints doubles, dates in the format). `ip_range` plugs in its own
 * bounds and printing through {@link rangeType}.
 */

interface Range {
  key?: string;
  from: number | null;
  to: number | null;
  /** Printed bounds (dates, ips). */
  fromStr?: string;
  toStr?: string;
}

/** Java's Double.toString, which ES uses to print range keys (`50.0`, `1.0E7`). */
export function javaDouble(x: number): string {
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : x < 0 ? '-Infinity' : 'NaN';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const a = Math.abs(x);
  if (a >= 1e-3 && a < 1e7) {
    const s = String(x);
    return s.includes('.') || s.includes('e') ? s : `${s}.0`;
  }
  const [m, e] = x.toExponential().split('e');
  return `${m.includes('.') ? m : `${m}.0`}E${Number(e)}`;
}

/** The bucket values of a ranges spec (dates parsed, open ends null), sorted as ES sorts them. */
export type RangeParser = (spec: AggSpec, v: unknown, roundUp: boolean) => number;

/** The aggregation type of a range family member: how bounds parse and print. */
export function rangeType(name: 'range' | 'date_range' | 'ip_range', o: {
  accepts: (type: string) => boolean;
  bound: RangeParser;
  print: (spec: AggSpec, v: number) => string;
  /** Numbers of `range`/`date_range` render as numbers (`from`, `to`), ips only as strings. */
  numbers: boolean;
  value?: (v: unknown, type: string | undefined) => number;
}): AggregationType {
  const ranges = (spec: AggSpec): Range[] => {
    const list = spec.params.ranges;
    if (!Array.isArray(list) || list.length === 0) throw illegalArgument(`No [ranges] specified for the [${spec.name}] aggregation`);
    const out = list.map((r: Record<string, unknown>) => {
      const from = r.from === undefined || r.from === null ? null : o.bound(spec, r.from, false);
      const to = r.to === undefined || r.to === null ? null : o.bound(spec, r.to, false);
      return { ...(r.key !== undefined ? { key: String(r.key) } : {}), from, to };
    });
    return out.sort((a, b) => (a.from ?? -Infinity) - (b.from ?? -Infinity) || (a.to ?? Infinity) - (b.to ?? Infinity));
  };
  return {
    params: ['field', 'ranges', 'keyed', 'format', 'missing', 'time_zone', 'value_type', 'script'],
    check: (spec) => void ranges(spec),
    factory(spec, ctx) {
      const { type, read, field } = fieldValues(spec, ctx.reader);
      if (type !== undefined && !o.accepts(type)) throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [${name}]`);
      const rs = ranges(spec);
      const subs = ctx.subs(spec.subs);
      const num = o.value ?? ((v: unknown, t: string | undefined) => toNumber(v as never, t as never));
      return () => {
        const counts = rs.map(() => 0);
        const bucketSubs: Array<Aggregators | undefined> = rs.map(() => undefined);
        return {
          collect(doc) {
            const vals = read(doc).map((v) => num(v, type));
            rs.forEach((r, i) => {
              // a doc counts once per range, whatever number of its values fall in it
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
      const x = a as RangePartial;
      const y = b as RangePartial;
      return { t: 'range', buckets: x.buckets.map((bx, i) => ({ count: bx.count + y.buckets[i].count, subs: reduceSubs([bx.subs, y.buckets[i].subs]) })) };
    },
    render(s, partial, ctx) {
      const rs = ranges(s);
      const p = partial as RangePartial | undefined;
      const strings = name !== 'range' || s.params.format !== undefined;
      const buckets = rs.map((r, i) => {
        const f = r.from === null ? '*' : o.print(s, r.from);
        const t = r.to === null ? '*' : o.print(s, r.to);
        const body: Record<string, unknown> = { key: r.key ?? `${f}-${t}` };
        if (r.from !== null) {
          if (o.numbers) body.from = r.from;
          if (strings) body.from_as_string = f;
        }
        if (r.to !== null) {
          if (o.numbers) body.to = r.to;
          if (strings) body.to_as_string = t;
        }
        body.doc_count = p?.buckets[i]?.count ?? 0;
        return { ...body, ...ctx.renderSubs(p?.buckets[i]?.subs ?? {}, s.subs) };
      });
      ctx.countBuckets(buckets.length);
      if (s.params.keyed === true || s.params.keyed === 'true') {
        return { buckets: Object.fromEntries(buckets.map(({ key, ...b }) => [key as string, b])) };
      }
      return { buckets };
    },
  };
}

export const rangeAgg = rangeType('range', {
  accepts: (t) => NUMERIC.includes(t as never) || DATES.includes(t as never) || t === 'boolean',
  bound: (_s, v) => {
    const n = Number(v);
    if (typeof v === 'boolean' || Number.isNaN(n)) throw illegalArgument(`For input string: "${String(v)}"`);
    return n;
  },
  print: (s, v) => (s.params.format !== undefined ? formatDate(v, String(s.params.format)) : javaDouble(v)),
  numbers: true,
});

export const dateRangeAgg = rangeType('date_range', {
  accepts: (t) => DATES.includes(t as never) || NUMERIC.includes(t as never),
  bound: (s, v) => {
    if (typeof v === 'number') return v;
    const pattern = String(s.params.format ?? 'strict_date_optional_time||epoch_millis');
    try {
      return parseDateMath(String(v), dateFormatter(pattern), { now: Date.now(), roundUp: false, tz: s.params.time_zone as string | undefined }).ms;
    } catch (e) {
      if (!(e instanceof DateParseError)) throw e;
      const reason = `failed to parse date field [${String(v)}] with format [${pattern}]`;
      throw new EsError('parse_exception', 400, `${reason}: [${reason}]`);
    }
  },
  print: (s, v) => formatDate(v, String(s.params.format ?? DEFAULT_DATE_FORMAT)),
  numbers: true,
});
