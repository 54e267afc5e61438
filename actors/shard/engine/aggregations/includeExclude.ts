/**
 * `include` / `exclude` of the terms aggregation (ES `IncludeExclude`): a Lucene regexp (compiled to
 * an automaton, so matching is linear in the term), a list of exact values, or
 * `{partition, num_partitions}`. Parsed with the request (ES's parse errors, ObjectParser-wrapped
 * by the caller), applied on the shard to bucket keys.
 */
import { EsError, illegalArgument } from '../../../wire/esErrors';
import { compileRegExp, parseLuceneRegExp, type Matcher } from '../../../automaton';
import { dateFormatter, DEFAULT_DATE_FORMAT } from '../base/dates';
import { parseDateMath } from '../base/dateMath';
import { doubleToSortableLong, floorMod, mix64, murmur3Bytes } from '../base/routing';
import { isObject, tokenName } from '../base/xcontent';
import type { TermKey, TermsKind } from './aggPartials';
import { encodeIp } from '../index/fieldCodecs';

/** IncludeExclude.HASH_PARTITIONING_SEED */
const PARTITION_SEED = 31;

const parseException = (reason: string) => new EsError('parse_exception', 400, reason);

/**
 * Validates one `include`/`exclude` value as ES parses it (IncludeExclude.parseInclude/parseExclude).
 * @throws EsError the cause ES wraps in `[terms] failed to parse field [include]`
 */
export function checkIncludeExclude(key: 'include' | 'exclude', v: unknown): void {
  if (typeof v === 'string') {
    parseLuceneRegExp(v);
    return;
  }
  if (Array.isArray(v)) {
    for (const x of v) {
      if (x !== null && typeof x === 'object') throw parseException('Array elements in include/exclude clauses should be string values');
    }
    return;
  }
  if (key === 'exclude' || !isObject(v)) throw illegalArgument(`Unrecognized token for an ${key} [${tokenName(v)}]`);
  let partition: number | undefined, numPartitions: number | undefined;
  for (const [k, x] of Object.entries(v)) {
    if (k === 'partition') partition = javaInt(x);
    else if (k === 'num_partitions') numPartitions = javaInt(x);
    else throw parseException(`Unknown parameter in Include/Exclude clause: ${k}`);
  }
  if (partition === undefined) throw illegalArgument('Missing [partition] parameter for partition-based include');
  if (numPartitions === undefined) throw illegalArgument('Missing [num_partitions] parameter for partition-based include');
  if (partition < 0 || partition >= numPartitions) throw illegalArgument(`Partition must be >=0 and < numPartition which is ${numPartitions}`);
}

/** ObjectParser's check of the token kinds a field accepts (before its parser runs). */
export function includeExcludeTokenError(key: 'include' | 'exclude', v: unknown): string | undefined {
  const kinds = key === 'include' ? ['START_OBJECT', 'START_ARRAY', 'VALUE_STRING'] : ['START_ARRAY', 'VALUE_STRING'];
  const t = tokenName(v);
  return kinds.includes(t) ? undefined : `[terms] ${key} doesn't support values of type: ${t}`;
}

/** IncludeExclude.merge: a partition-based include admits no exclude. */
export function checkIncludeExcludeMerge(params: Record<string, unknown>): void {
  if (isObject(params.include) && params.exclude !== undefined) {
    throw illegalArgument('Cannot specify any excludes when using a partition-based include');
  }
}

function javaInt(x: unknown): number {
  const n = typeof x === 'string' ? Number(x.trim()) : Number(x);
  if (typeof x === 'boolean' || x === null || !Number.isFinite(n)) throw illegalArgument(`For input string: "${String(x)}"`);
  return Math.trunc(n);
}

/** How a shard reads values for a numeric include list (DocValueFormat.parseLong / parseDouble). */
export interface KeyFormat {
  /** Date format of the agg (`format`) or of the field's mapping. */
  dateFormat?: string;
  now?: number;
}

const utf8 = new TextEncoder();

/**
 * The filter of bucket keys of one terms aggregation on a shard (SetAndRegex*Filter,
 * Partitioned*Filter, SetBackedLongFilter). Results are cached per key: a key is tested once.
 * @throws EsError 400 for a regexp on a non-string field, as ES's TermsAggregatorFactory
 */
export function keyFilter(name: string, params: Record<string, unknown>, kind: TermsKind, fmt: KeyFormat = {}): (k: TermKey) => boolean {
  const inc = params.include, exc = params.exclude;
  if (inc === undefined && exc === undefined) return () => true;
  const stringy = kind === 'string' || kind === 'unmapped';
  if (!stringy && (typeof inc === 'string' || typeof exc === 'string')) {
    throw illegalArgument(
      `Aggregation [${name}] cannot support regular expression style include/exclude settings as they can only be applied to string fields. ` +
        'Use an array of numeric values for include/exclude clauses used to filter numeric fields',
    );
  }
  let test: (k: TermKey) => boolean;
  if (isObject(inc)) {
    const p = javaInt(inc.partition), n = javaInt(inc.num_partitions);
    test = stringy || kind === 'ip'
      ? (k) => floorMod(murmur3Bytes(utf8.encode(String(k)), PARTITION_SEED), n) === p
      : (k) => {
        const h = mix64(kind === 'double' ? doubleToSortableLong(Number(k)) : BigInt(k));
        return Number(((h % BigInt(n)) + BigInt(n)) % BigInt(n)) === p;
      };
  } else {
    const include = side(inc, kind, fmt), exclude = side(exc, kind, fmt);
    test = (k) => (!include || include(k)) && !(exclude && exclude(k));
  }
  const cache = new Map<string, boolean>();
  return (k) => {
    const id = typeof k === 'string' ? `s${k}` : `n${String(k)}`;
    let r = cache.get(id);
    if (r === undefined) {
      r = test(k);
      if (cache.size < 100_000) cache.set(id, r);
    }
    return r;
  };
}

/** One side (include or exclude) as a key test; undefined when absent. */
function side(v: unknown, kind: TermsKind, fmt: KeyFormat): ((k: TermKey) => boolean) | undefined {
  if (v === undefined) return undefined;
  if (typeof v === 'string') {
    const m: Matcher = compileRegExp(v);
    return (k) => m.test(String(k));
  }
  const values = (v as unknown[]).map((x) => String(x));
  if (kind === 'ip') {
    // DocValueFormat.IP.parseBytesRef: the addresses as the keys they select
    const set = new Set(values.map((x) => {
      try {
        return encodeIp(x);
      } catch (e) {
        throw illegalArgument((e as Error).message);
      }
    }));
    return (k) => set.has(String(k));
  }
  if (kind === 'string' || kind === 'unmapped') {
    const set = new Set(values);
    return (k) => set.has(String(k));
  }
  const set = new Set(values.map((x) => numericKey(x, kind, fmt)));
  // long, date and boolean keys are integers (number, or bigint beyond 2^53)
  return (k) => set.has(kind === 'double' ? String(Number(k)) : String(typeof k === 'bigint' ? k : BigInt(Math.trunc(Number(k)))));
}

/** An include value as the key it selects (DocValueFormat RAW/DateTime/BOOLEAN parseLong, or parseDouble). */
function numericKey(x: string, kind: TermsKind, fmt: KeyFormat): string {
  switch (kind) {
    case 'boolean':
      if (x === 'true' || x === 'false') return x === 'true' ? '1' : '0';
      throw illegalArgument(`Cannot parse boolean [${x}], expected either [true] or [false]`);
    case 'date': {
      const f = dateFormatter(fmt.dateFormat ?? DEFAULT_DATE_FORMAT);
      try {
        return String(parseDateMath(x, f, { now: fmt.now ?? Date.now() }).ms);
      } catch (e) {
        throw illegalArgument((e as Error).message);
      }
    }
    case 'double': {
      const d = Number(x);
      if (x.trim() === '' || Number.isNaN(d)) throw new EsError('number_format_exception', 400, `For input string: "${x}"`);
      return String(d);
    }
    default: {
      if (/^[+-]?\d+$/.test(x)) return String(BigInt(x));
      const d = Number(x);
      if (x.trim() === '' || Number.isNaN(d)) throw new EsError('number_format_exception', 400, `For input string: "${x}"`);
      return String(BigInt(Math.round(Math.floor(d))));
    }
  }
}
