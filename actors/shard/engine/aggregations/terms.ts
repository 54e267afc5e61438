import { orderComparator } from './aggOrder';
import { formatDate, DEFAULT_DATE_FORMAT } from './aggDates';
import type { AggPartial, BucketPartial, TermKey, TermsKind, TermsPartial } from './aggPartials';
import type { AggregationType } from './aggTypes';
import { bucketing, mergeBuckets } from './bucketing';
import { keyFilter } from './includeExclude';
import { fielddataDisabled, fieldValues, termsKind, toNumber, type Raw } from './values';
import type { FieldType } from '../types';
import { decodeIp, encodeIp } from '../index/fieldCodecs';

/** The `terms` aggregation: a bucket per value, top `size` by the order, with ES's error bounds. */

function termKey(v: Raw, kind: TermsKind, type: FieldType | undefined): TermKey {
  if (kind === 'string' || kind === 'unmapped') return String(v);
  if (kind === 'ip') return encodeIp(String(v)); // keys in address order (the bytes), shown as addresses
  if (kind === 'long' && typeof v === 'bigint') return v;
  if (kind === 'long' && typeof v === 'string' && /^-?\d+$/.test(v)) return Number.isSafeInteger(Number(v)) ? Number(v) : BigInt(v);
  return toNumber(v, type);
}

function termKeyFields(key: TermKey, kind: TermsKind, format: string): Record<string, unknown> {
  if (kind === 'boolean') return { key, key_as_string: String(Number(key) !== 0) };
  if (kind === 'date') return { key, key_as_string: formatDate(Number(key), format) };
  if (kind === 'ip') return { key: decodeIp(String(key)) };
  return { key };
}

export const termsAgg: AggregationType = {
  params: [
    'field', 'size', 'shard_size', 'min_doc_count', 'shard_min_doc_count', 'order', 'missing', 'format', 'include', 'exclude',
    'show_term_doc_count_error', 'execution_hint', 'collect_mode', 'value_type', 'script',
  ],
  typedName(p) {
    const kind = (p as TermsPartial | undefined)?.kind ?? 'unmapped';
    return kind === 'double' ? 'dterms' : kind === 'string' || kind === 'unmapped' || kind === 'ip' ? 'sterms' : 'lterms';
  },
  factory(spec, ctx) {
    const { type, read, dateFormat, field } = fieldValues(spec, ctx.reader);
    if (type === 'text') throw fielddataDisabled(field);
    const kind = termsKind(type, spec.params.missing);
    const size = Number(spec.params.size ?? 10);
    // BucketUtils.suggestShardSideQueueSize: shards return more than `size` to bound the error.
    const shardSize = Math.max(size, Number(spec.params.shard_size ?? Math.trunc(size * 1.5 + 10)));
    const accept = keyFilter(spec.name, spec.params, kind, { dateFormat });
    const subs = ctx.subs(spec.subs);
    const order = orderComparator(spec);
    const countDesc = order.byCountDesc;
    return () => {
      const b = bucketing((doc) => read(doc).map((v) => termKey(v, kind, type)).filter(accept), subs, { budget: ctx.budget, name: spec.name, count: ctx.top, cap: shardSize, subs: spec.subs.length });
      return {
        collect: b.collect,
        partial(): TermsPartial {
          const all = b.buckets().sort(order.compare);
          const kept = all.slice(0, shardSize);
          const other = all.slice(shardSize).reduce((n, x) => n + x.count, 0);
          const error = all.length > shardSize && countDesc ? kept[kept.length - 1].count : 0;
          return { t: 'terms', kind, buckets: kept.map((x) => ({ ...x, err: error })), other, error, shards: 1 };
        },
      };
    };
  },
  merge(x: AggPartial, y: AggPartial, _s, reduceSubs): TermsPartial {
    const a = x as TermsPartial;
    const b = y as TermsPartial;
    // LongTerms + DoubleTerms reduce to DoubleTerms; an unmapped shard takes the other's kind.
    const kind = a.kind === 'unmapped' ? b.kind : b.kind === 'unmapped' ? a.kind : a.kind === 'double' || b.kind === 'double' ? 'double' : a.kind;
    const norm = (bs: BucketPartial[]) => (kind === 'double' ? bs.map((q) => ({ ...q, key: Number(q.key) })) : bs);
    return {
      t: 'terms',
      kind,
      buckets: mergeBuckets(norm(a.buckets), norm(b.buckets), reduceSubs),
      other: a.other + b.other,
      error: a.error + b.error,
      shards: a.shards + b.shards,
    };
  },
  render(s, partial, ctx) {
    const p = partial as TermsPartial | undefined;
    if (!p) return { doc_count_error_upper_bound: 0, sum_other_doc_count: 0, buckets: [] };
    const size = Number(s.params.size ?? 10);
    const minDocCount = Number(s.params.min_doc_count ?? 1);
    const order = orderComparator(s);
    const sorted = [...p.buckets].sort(order.compare);
    const eligible = sorted.filter((b) => b.count >= minDocCount);
    const top = eligible.slice(0, size);
    const other = p.other + sorted.reduce((n, b) => n + b.count, 0) - top.reduce((n, b) => n + b.count, 0);
    // One shard sees every term: no error. Key order cannot miss counts; other orders cannot bound it (-1).
    const error = p.shards <= 1 ? 0 : order.byCountDesc ? p.error : order.byKey ? 0 : -1;
    const showError = s.params.show_term_doc_count_error === true || s.params.show_term_doc_count_error === 'true';
    const format = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
    ctx.countBuckets(top.length);
    return {
      doc_count_error_upper_bound: error,
      sum_other_doc_count: other,
      buckets: top.map((b) => ({
        ...termKeyFields(b.key, p.kind, format),
        doc_count: b.count,
        ...(showError ? { doc_count_error_upper_bound: error > 0 ? error - (b.err ?? 0) : error } : {}),
        ...ctx.renderSubs(b.subs, s.subs),
      })),
    };
  },
};

