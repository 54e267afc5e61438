/**
 * Paging of the security query APIs as ES's search over `.security` gives it: `from`/`size` (at most
 * 10,000 together), `sort` (field names or `{field: order | {order, missing}}`, `_doc`), `search_after`
 * and the `_sort` values of each hit. Records without a sort come in index (creation) order.
 */
import { EsError, illegalArgument, validationFailed } from '../wire/esErrors';
import { coerce, isObj, type Field, type FieldTable, type Value } from './queryDsl';

interface SortSpec<T> {
  field?: Field<T>;
  desc: boolean;
  /** Where records without a value go (ES's default `_last`). */
  missingFirst: boolean;
}

/** ES SortOrder.fromString. */
function order(v: unknown): boolean {
  const o = String(v).toLowerCase();
  if (o !== 'asc' && o !== 'desc') throw illegalArgument(`Unknown SortOrder [${String(v)}]`);
  return o === 'desc';
}

/** `sort` of a query body (`what`: the request payload name for parse errors). */
export function parseSort<T>(v: unknown, fields: FieldTable<T>): SortSpec<T>[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((s): SortSpec<T> => {
    let name: string;
    let desc = false;
    let missingFirst = false;
    if (typeof s === 'string') name = s;
    else if (isObj(s) && Object.keys(s).length === 1) {
      const [f, spec] = Object.entries(s)[0];
      name = f;
      if (typeof spec === 'string') desc = order(spec);
      else if (isObj(spec)) {
        if (spec.nested !== undefined) throw illegalArgument('nested sorting is not currently supported in this context');
        if (spec.order !== undefined) desc = order(spec.order);
        if (spec.missing === '_first') missingFirst = true;
      } else throw new EsError('parsing_exception', 400, `[${f}] sort field must be a string or an object`);
    } else throw illegalArgument('malformed sort object');
    if (name === '_doc') return { desc, missingFirst };
    const field = fields.resolve(name);
    if (!field.sortable) throw illegalArgument(`sorting is not supported for field [${name}]`);
    return { field, desc, missingFirst };
  });
}

/** A record's value for one sort (null: missing); multi-valued fields sort by their min (asc) or max (desc). */
function sortValue<T>(doc: T, s: SortSpec<T>, pos: number): Value | null {
  if (!s.field) return pos;
  const vs = s.field.values(doc);
  if (!vs.length) return null;
  return vs.reduce((a, b) => ((s.desc ? b > a : b < a) ? b : a));
}

function compareOne(a: Value | null, b: Value | null, s: { desc: boolean; missingFirst: boolean }): number {
  if (a === b) return 0;
  if (a === null) return s.missingFirst ? -1 : 1;
  if (b === null) return s.missingFirst ? 1 : -1;
  return (a < b ? -1 : 1) * (s.desc ? -1 : 1);
}

function intParam(v: unknown, name: string, payload: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' && typeof n !== 'bigint') throw new EsError('x_content_parse_exception', 400, `[1:1] [${payload}] failed to parse field [${name}]`);
  return Number(n);
}

/** Body fields a query API accepts; anything else is ES's parse error naming the payload. */
export function checkBodyFields(body: Record<string, unknown>, allowed: readonly string[], payload: string): void {
  for (const k of Object.keys(body)) {
    if (!allowed.includes(k)) throw new EsError('x_content_parse_exception', 400, `[1:2] [${payload}] unknown field [${k}]`);
  }
}

const MAX_RESULT_WINDOW = 10_000;

export interface Page<T> {
  total: number;
  hits: Array<{ doc: T; sort?: Value[] }>;
}

/**
 * Ranks `matched` (in index order; `all` gives each record's position for `_doc`) by the body's sort,
 * applies `search_after`, then `from`/`size`. ES's validation errors first.
 */
export function pageOf<T>(matched: T[], positions: Map<T, number>, body: Record<string, unknown>, fields: FieldTable<T>, payload: string, now: number): Page<T> {
  const from = intParam(body.from, 'from', payload) ?? 0;
  const size = intParam(body.size, 'size', payload) ?? 10;
  const errors: string[] = [];
  if (from < 0) errors.push(`[from] parameter cannot be negative but was [${from}]`);
  if (size < 0) errors.push(`[size] parameter cannot be negative but was [${size}]`);
  if (errors.length) throw validationFailed(errors);
  if (from + size > MAX_RESULT_WINDOW) {
    throw illegalArgument(
      `Result window is too large, from + size must be less than or equal to: [${MAX_RESULT_WINDOW}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    );
  }
  const sorts = parseSort(body.sort, fields);
  let ranked = matched.map((doc) => ({ doc, key: sorts.map((s) => sortValue(doc, s, positions.get(doc)!)) }));
  if (sorts.length) {
    ranked.sort((a, b) => {
      for (let i = 0; i < sorts.length; i++) {
        const c = compareOne(a.key[i], b.key[i], sorts[i]);
        if (c) return c;
      }
      return positions.get(a.doc)! - positions.get(b.doc)!;
    });
  }
  const after = body.search_after;
  if (after !== undefined && after !== null) {
    if (from > 0) throw illegalArgument('`from` parameter must be set to 0 when `search_after` is used.');
    const expected = sorts.length || 1;
    if (!Array.isArray(after) || after.length !== expected) {
      throw illegalArgument(`search_after has ${Array.isArray(after) ? after.length : 1} value(s) but sort has ${expected}.`);
    }
    if (!sorts.length) {
      // every hit scores 1.0 (constant), so "after" a score means below it
      ranked = Number(after[0]) > 1 ? ranked : [];
    } else {
      const afterKey = sorts.map((s, i): Value | null => {
        const v = after[i];
        if (v === null || v === undefined) return null;
        return s.field ? coerce(s.field, v, now) : Number(v);
      });
      // strictly after the given position, as Lucene's searchAfter (ties are skipped)
      ranked = ranked.filter(({ key }) => {
        for (let i = 0; i < sorts.length; i++) {
          const c = compareOne(key[i], afterKey[i], sorts[i]);
          if (c) return c > 0;
        }
        return false;
      });
    }
  }
  return { total: matched.length, hits: ranked.slice(from, from + size).map(({ doc, key }) => (sorts.length ? { doc, sort: key as Value[] } : { doc })) };
}
