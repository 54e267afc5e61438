/**
 * `GET|POST /_security/_query/api_key` (ES TransportQueryApiKeyAction): a subset of the query DSL over
 * the key fields ES exposes (ApiKeyFieldNameTranslators), `from`/`size`, `sort` and `search_after`
 * as ES's search over the `.security` index gives them.
 */
import type { ApiKeyRecord } from '../../machines/apiKey.machine';
import { EsError, illegalArgument, validationFailed } from '../wire/esErrors';
import { renderKey } from './apiKeyViews';
import { indexNamesRegExp } from './permission';

type Doc = Record<string, unknown>;
type Value = string | number | boolean;
type FieldKind = 'keyword' | 'date' | 'boolean';

const isObj = (v: unknown): v is Doc => !!v && typeof v === 'object' && !Array.isArray(v);

/** Queryable fields and their index types (ES maps them onto `.security` fields of these types). */
const FIELDS: Record<string, FieldKind> = {
  id: 'keyword',
  type: 'keyword',
  name: 'keyword',
  username: 'keyword',
  realm_name: 'keyword',
  creation: 'date',
  expiration: 'date',
  invalidation: 'date',
  invalidated: 'boolean',
  metadata: 'keyword',
};

/** ES ApiKeyFieldNameTranslators.translate: the field's type, or ES's 400. */
function kindOf(field: string): FieldKind {
  if (/[*?]/.test(field)) throw illegalArgument('Field name pattern not supported');
  const k = Object.hasOwn(FIELDS, field) ? FIELDS[field] : field.startsWith('metadata.') ? 'keyword' : undefined;
  if (!k) throw illegalArgument(`Field [${field}] is not allowed for API Key query`);
  return k;
}

/** Leaf values of `metadata` (flattened: every leaf is a keyword), optionally under a dotted path. */
function metadataLeaves(v: unknown, out: string[]): void {
  if (v === undefined || v === null) return;
  if (Array.isArray(v)) for (const x of v) metadataLeaves(x, out);
  else if (isObj(v)) for (const x of Object.values(v)) metadataLeaves(x, out);
  else out.push(String(v));
}

function metadataAt(meta: Doc, path: string): unknown {
  if (Object.hasOwn(meta, path)) return meta[path];
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  for (let i = dot; i > 0; i = path.lastIndexOf('.', i - 1)) {
    const head = path.slice(0, i);
    if (isObj(meta[head])) return metadataAt(meta[head] as Doc, path.slice(i + 1));
  }
  return undefined;
}

/** The values of a field for one key (empty: the field is missing). */
function valuesOf(r: ApiKeyRecord, field: string): Value[] {
  switch (field) {
    case 'id':
      return [r.keyId];
    case 'type':
      return [r.keyType];
    case 'name':
      return [r.name];
    case 'username':
      return [r.owner.username];
    case 'realm_name':
      return [r.owner.realm];
    case 'creation':
      return [r.creation];
    case 'expiration':
      return r.expiration === undefined ? [] : [r.expiration];
    case 'invalidation':
      return r.invalidation === undefined ? [] : [r.invalidation];
    case 'invalidated':
      return [r.status === 'invalidated'];
    default: {
      const out: string[] = [];
      metadataLeaves(field === 'metadata' ? r.metadata : metadataAt(r.metadata, field.slice('metadata.'.length)), out);
      return out;
    }
  }
}

/** A date given as epoch millis (number or digits) or as a date string, as ES's date field parses it. */
function toMillis(v: unknown, field: string): number {
  if (typeof v === 'number' || typeof v === 'bigint') return Number(v);
  const s = String(v);
  if (/^-?\d+$/.test(s)) return Number(s);
  const t = Date.parse(s);
  if (Number.isNaN(t)) throw new EsError('parse_exception', 400, `failed to parse date field [${s}] with format [strict_date_optional_time||epoch_millis]`, { meta: { field } });
  return t;
}

/** A query value converted to the field's type. */
function coerce(kind: FieldKind, field: string, v: unknown): Value {
  if (kind === 'date') return toMillis(v, field);
  if (kind === 'boolean') {
    if (v === true || v === 'true') return true;
    if (v === false || v === 'false') return false;
    throw illegalArgument(`Can't parse boolean value [${String(v)}], expected [true] or [false]`);
  }
  return String(v);
}

const one = (q: unknown, what: string): [string, unknown] => {
  if (!isObj(q) || Object.keys(q).length !== 1) throw new EsError('parsing_exception', 400, `[${what}] query malformed, no start_object after query name`);
  return Object.entries(q)[0];
};
const valueOf = (v: unknown) => (isObj(v) && 'value' in v ? v.value : v);

function matches(q: unknown, r: ApiKeyRecord): boolean {
  const [kind, body] = one(q, 'query');
  const b = body as Doc;
  switch (kind) {
    case 'match_all':
      return true;
    case 'ids':
      return (Array.isArray(b?.values) ? (b.values as unknown[]) : []).map(String).includes(r.keyId);
    case 'term':
    case 'match': {
      const [f, v] = one(b, kind);
      const k = kindOf(f);
      const want = coerce(k, f, isObj(v) && kind === 'match' ? v.query : valueOf(v));
      return valuesOf(r, f).some((x) => x === want);
    }
    case 'terms': {
      const [f, vs] = one(b, kind);
      const k = kindOf(f);
      if (!Array.isArray(vs)) throw new EsError('parsing_exception', 400, '[terms] query does not support [' + f + ']');
      const want = vs.map((v) => coerce(k, f, v));
      return valuesOf(r, f).some((x) => want.includes(x));
    }
    case 'prefix': {
      const [f, v] = one(b, kind);
      kindOf(f);
      const p = String(valueOf(v));
      return valuesOf(r, f).some((x) => String(x).startsWith(p));
    }
    case 'wildcard': {
      const [f, v] = one(b, kind);
      kindOf(f);
      const re = indexNamesRegExp([String(isObj(v) ? (v.value ?? v.wildcard) : v)]);
      return valuesOf(r, f).some((x) => re.test(String(x)));
    }
    case 'exists': {
      const f = String(b?.field);
      kindOf(f);
      return valuesOf(r, f).length > 0;
    }
    case 'range': {
      const [f, c] = one(b, kind);
      const k = kindOf(f);
      const cond = (c ?? {}) as Doc;
      const bound = (x: unknown) => (x === undefined || x === null ? undefined : coerce(k, f, x));
      const [gt, gte, lt, lte] = [bound(cond.gt), bound(cond.gte), bound(cond.lt), bound(cond.lte)];
      return valuesOf(r, f).some(
        (x) => (gt === undefined || x > gt) && (gte === undefined || x >= gte) && (lt === undefined || x < lt) && (lte === undefined || x <= lte),
      );
    }
    case 'bool': {
      const list = (k: string) => (b?.[k] === undefined ? [] : Array.isArray(b[k]) ? (b[k] as unknown[]) : [b[k]]);
      const should = list('should');
      const must = [...list('must'), ...list('filter')];
      const min = b?.minimum_should_match !== undefined ? Number(b.minimum_should_match) : must.length ? 0 : 1;
      return (
        must.every((x) => matches(x, r)) &&
        !list('must_not').some((x) => matches(x, r)) &&
        (!should.length || should.filter((x) => matches(x, r)).length >= min)
      );
    }
    default:
      throw illegalArgument(`Query type [${kind}] is not supported for API Key query`);
  }
}

interface SortSpec {
  field: string;
  kind: FieldKind | 'doc';
  desc: boolean;
}

/** ES SortOrder.fromString. */
function order(v: unknown): boolean {
  const o = String(v).toLowerCase();
  if (o !== 'asc' && o !== 'desc') throw illegalArgument(`Unknown SortOrder [${String(v)}]`);
  return o === 'desc';
}

function parseSort(v: unknown): SortSpec[] {
  if (v === undefined || v === null) return [];
  return (Array.isArray(v) ? v : [v]).map((s): SortSpec => {
    let field: string;
    let desc = false;
    if (typeof s === 'string') field = s;
    else if (isObj(s) && Object.keys(s).length === 1) {
      const [f, spec] = Object.entries(s)[0];
      field = f;
      if (typeof spec === 'string') desc = order(spec);
      else if (isObj(spec)) {
        if (spec.nested !== undefined) throw illegalArgument('nested sorting is not supported for API Key query');
        if (spec.order !== undefined) desc = order(spec.order);
      } else throw new EsError('parsing_exception', 400, `[${f}] sort field must be a string or an object`);
    } else throw new EsError('parsing_exception', 400, 'malformed sort format, within the sort array, an object, or an actual string are allowed');
    if (field === '_doc') return { field, kind: 'doc', desc };
    return { field, kind: kindOf(field), desc };
  });
}

/** A key's sort value for one sort (null: missing). Multi-valued fields sort by min (asc) / max (desc). */
function sortValue(r: ApiKeyRecord, s: SortSpec, pos: number): Value | null {
  if (s.kind === 'doc') return pos;
  const vs = valuesOf(r, s.field);
  if (!vs.length) return null;
  return vs.reduce((a, b) => ((s.desc ? b > a : b < a) ? b : a));
}

/** Missing values sort last in either order (ES's default `missing: _last`). */
function compareOne(a: Value | null, b: Value | null, desc: boolean): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : 1) * (desc ? -1 : 1);
}

function intParam(v: unknown, name: string, dflt: number): number {
  if (v === undefined || v === null) return dflt;
  const n = typeof v === 'string' && /^-?\d+$/.test(v) ? Number(v) : v;
  if (typeof n !== 'number' && typeof n !== 'bigint') {
    throw new EsError('x_content_parse_exception', 400, `[1:1] [query_api_key_request_payload] failed to parse field [${name}]`);
  }
  return Number(n);
}

const BODY_FIELDS = new Set(['query', 'from', 'size', 'sort', 'search_after']);
const MAX_RESULT_WINDOW = 10_000;

/** GET|POST /_security/_query/api_key over the keys the caller may see. */
export function queryKeys(keys: ApiKeyRecord[], body: Doc): { total: number; count: number; api_keys: unknown[] } {
  for (const k of Object.keys(body)) {
    if (!BODY_FIELDS.has(k)) throw new EsError('x_content_parse_exception', 400, `[1:2] [query_api_key_request_payload] unknown field [${k}]`);
  }
  const from = intParam(body.from, 'from', 0);
  const size = intParam(body.size, 'size', 10);
  const errors: string[] = [];
  if (from < 0) errors.push(`[from] parameter cannot be negative but was [${from}]`);
  if (size < 0) errors.push(`[size] parameter cannot be negative but was [${size}]`);
  if (errors.length) throw validationFailed(errors);
  if (from + size > MAX_RESULT_WINDOW) {
    throw illegalArgument(
      `Result window is too large, from + size must be less than or equal to: [${MAX_RESULT_WINDOW}] but was [${from + size}]. See the scroll api for a more efficient way to request large data sets. This limit can be set by changing the [index.max_result_window] index level setting.`,
    );
  }
  const sorts = parseSort(body.sort);
  const hits = body.query !== undefined && body.query !== null ? keys.filter((r) => matches(body.query, r)) : keys;
  const total = hits.length;
  // No sort: every hit scores alike and comes in index order, i.e. the sort is [_score desc] with ties.
  const keyOf = (r: ApiKeyRecord, pos: number) => sorts.map((s) => sortValue(r, s, pos));
  const positions = new Map(keys.map((r, i) => [r, i]));
  let ranked = hits.map((r) => ({ r, key: keyOf(r, positions.get(r)!) }));
  if (sorts.length) {
    ranked.sort((a, b) => {
      for (let i = 0; i < sorts.length; i++) {
        const c = compareOne(a.key[i], b.key[i], sorts[i].desc);
        if (c) return c;
      }
      return positions.get(a.r)! - positions.get(b.r)!;
    });
  }
  if (body.search_after !== undefined && body.search_after !== null) {
    const after = body.search_after;
    if (from > 0) throw illegalArgument('`from` parameter must be set to 0 when `search_after` is used.');
    const expected = sorts.length || 1;
    if (!Array.isArray(after) || after.length !== expected) {
      throw illegalArgument(`search_after has ${Array.isArray(after) ? after.length : 1} value(s) but sort has ${expected}.`);
    }
    if (!sorts.length) {
      // every hit's score is 1.0 (constant), so "after" a score means below it
      ranked = Number(after[0]) > 1 ? ranked : [];
    } else {
      const afterKey = sorts.map((s, i): Value | null => {
        const v = after[i];
        if (v === null || v === undefined) return null;
        return s.kind === 'doc' ? Number(v) : coerce(s.kind, s.field, v);
      });
      // strictly after the given position, as Lucene's searchAfter (ties are skipped)
      ranked = ranked.filter(({ key }) => {
        for (let i = 0; i < sorts.length; i++) {
          const c = compareOne(key[i], afterKey[i], sorts[i].desc);
          if (c) return c > 0;
        }
        return false;
      });
    }
  }
  const page = ranked.slice(from, from + size);
  return {
    total,
    count: page.length,
    api_keys: page.map(({ r, key }) => ({ ...renderKey(r), ...(sorts.length ? { _sort: key } : {}) })),
  };
}
