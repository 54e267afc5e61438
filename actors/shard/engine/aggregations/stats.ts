import { illegalArgument } from '../../../wire/esErrors';
import { DEFAULT_DATE_FORMAT, formatDate } from './aggDates';
import type { AggPartial, StatsPartial, ValueKind } from './aggPartials';
import type { AggregationType, AggSpec } from './aggTypes';
import { DATES, fieldValues, NUMERIC, toNumber, valueKind } from './values';

/**
 * `stats` and `extended_stats` (ES's InternalStats / InternalExtendedStats): count, min, max, avg,
 * sum, and for extended_stats the sum of squares, variances (population, sampling), standard
 * deviations and the bounds `avg ± sigma · std_deviation`. Sums are compensated (Kahan), as ES's.
 */

const PARAMS = ['field', 'missing', 'format', 'value_type', 'script'];

/** Kahan summation (ES's CompensatedSum): adds `x` to [sum, compensation]. */
function kahan(acc: [number, number], x: number): void {
  if (!Number.isFinite(x)) {
    acc[0] += x;
    return;
  }
  const y = x - acc[1];
  const t = acc[0] + y;
  acc[1] = t - acc[0] - y;
  acc[0] = t;
}

function statsType(name: 'stats' | 'extended_stats'): AggregationType {
  return {
    params: name === 'extended_stats' ? [...PARAMS, 'sigma'] : PARAMS,
    metric: true,
    check(spec) {
      if (name !== 'extended_stats' || spec.params.sigma === undefined) return;
      const sigma = Number(spec.params.sigma);
      if (Number.isNaN(sigma)) throw illegalArgument(`[sigma] must be a number`);
      if (sigma < 0) throw illegalArgument(`[sigma] must be greater than or equal to 0. Found [${sigma.toFixed(1)}] in [${spec.name}]`);
    },
    factory(spec, { reader }) {
      const { type, read, field } = fieldValues(spec, reader);
      if (type !== undefined && !NUMERIC.includes(type) && !DATES.includes(type) && type !== 'boolean') {
        throw illegalArgument(`Field [${field}] of type [${type}] is not supported for aggregation [${name}]`);
      }
      const kind: ValueKind = type === undefined && spec.params.missing !== undefined ? 'number' : valueKind(type);
      return () => {
        let count = 0;
        let min = Infinity;
        let max = -Infinity;
        const sum: [number, number] = [0, 0];
        const sq: [number, number] = [0, 0];
        return {
          collect(doc) {
            for (const v of read(doc)) {
              const n = toNumber(v, type);
              count++;
              if (n < min) min = n;
              if (n > max) max = n;
              kahan(sum, n);
              kahan(sq, n * n);
            }
          },
          partial: (): StatsPartial => ({ t: 'stats', kind, count, sum: sum[0], min: count ? min : null, max: count ? max : null, sumSq: sq[0] }),
        };
      };
    },
    merge(a: AggPartial, b: AggPartial): StatsPartial {
      const x = a as StatsPartial;
      const y = b as StatsPartial;
      const pick = (u: number | null, v: number | null, f: (p: number, q: number) => number) => (u === null ? v : v === null ? u : f(u, v));
      const sum: [number, number] = [0, 0];
      kahan(sum, Number(x.sum));
      kahan(sum, Number(y.sum));
      const sq: [number, number] = [0, 0];
      kahan(sq, Number(x.sumSq));
      kahan(sq, Number(y.sumSq));
      return {
        t: 'stats', kind: x.kind === 'unmapped' ? y.kind : x.kind, count: x.count + y.count, sum: sum[0],
        min: pick(x.min === null ? null : Number(x.min), y.min === null ? null : Number(y.min), Math.min),
        max: pick(x.max === null ? null : Number(x.max), y.max === null ? null : Number(y.max), Math.max),
        sumSq: sq[0],
      };
    },
    render(s, partial) {
      const p = (partial as StatsPartial | undefined) ?? { t: 'stats', kind: 'unmapped', count: 0, sum: 0, min: null, max: null, sumSq: 0 };
      const count = p.count;
      const sum = Number(p.sum);
      const avg = count ? sum / count : null;
      const out: Record<string, unknown> = { count, min: p.min === null ? null : Number(p.min), max: p.max === null ? null : Number(p.max), avg, sum };
      if (name === 'extended_stats') Object.assign(out, extended(s, count, sum, Number(p.sumSq), avg));
      if (p.kind === 'date' && count) {
        const fmt = (s.params.format as string | undefined) ?? DEFAULT_DATE_FORMAT;
        Object.assign(out, {
          min_as_string: formatDate(out.min as number, fmt), max_as_string: formatDate(out.max as number, fmt),
          avg_as_string: formatDate(avg!, fmt), sum_as_string: formatDate(sum, fmt),
        });
      }
      return out;
    },
  };
}

/** InternalExtendedStats.doXContentBody's figures. */
function extended(s: AggSpec, count: number, sum: number, sumSq: number, avg: number | null): Record<string, unknown> {
  const sigma = s.params.sigma === undefined ? 2 : Number(s.params.sigma);
  if (!count) {
    const bounds = { upper: null, lower: null, upper_population: null, lower_population: null, upper_sampling: null, lower_sampling: null };
    return {
      sum_of_squares: null, variance: null, variance_population: null, variance_sampling: null,
      std_deviation: null, std_deviation_population: null, std_deviation_sampling: null, std_deviation_bounds: bounds,
    };
  }
  const variance = Math.max(0, (sumSq - (sum * sum) / count) / count);
  const varianceSampling = count > 1 ? Math.max(0, (sumSq - (sum * sum) / count) / (count - 1)) : NaN;
  const std = Math.sqrt(variance);
  const stdSampling = Math.sqrt(varianceSampling);
  // ES quotes non-finite doubles ("NaN"): one value has no sample variance
  const finite = (x: number) => (Number.isFinite(x) ? x : String(x));
  return {
    sum_of_squares: sumSq,
    variance,
    variance_population: variance,
    variance_sampling: finite(varianceSampling),
    std_deviation: std,
    std_deviation_population: std,
    std_deviation_sampling: finite(stdSampling),
    std_deviation_bounds: {
      upper: avg! + sigma * std, lower: avg! - sigma * std,
      upper_population: avg! + sigma * std, lower_population: avg! - sigma * std,
      upper_sampling: finite(avg! + sigma * stdSampling), lower_sampling: finite(avg! - sigma * stdSampling),
    },
  };
}

export const statsAgg = statsType('stats');
export const extendedStatsAgg = statsType('extended_stats');
