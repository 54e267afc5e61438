import { illegalArgument } from '../../../wire/esErrors';
import { isObject, Locator, type JsonPath } from '../base/xcontent';

/**
 * Request-side checks of the span queries (`span_term`, `span_near` with `span_gap`, `span_or`,
 * `span_not`, `span_first`, `span_multi`, `span_containing`, `span_within`, `field_masking_span`),
 * with ES's parse errors (the SpanXxxQueryBuilder `fromXContent`s). Bodies come back as given.
 */
type Obj = Record<string, unknown>;
type Parser = (body: Obj, loc: Locator, path: JsonPath) => Obj;
export type SubParser = (v: unknown, loc: Locator, path: JsonPath) => Record<string, Obj>;

export const SPAN_QUERIES = ['span_term', 'span_near', 'span_or', 'span_not', 'span_first', 'span_multi', 'span_containing', 'span_within', 'field_masking_span'];
const MULTI_TERM = ['prefix', 'wildcard', 'regexp', 'fuzzy', 'range'];

function known(name: string, body: Obj, keys: string[], loc: Locator, path: JsonPath): void {
  for (const k of Object.keys(body)) {
    if (!keys.includes(k) && k !== 'boost' && k !== '_name') throw loc.parsing([...path, k], `[${name}] query does not support [${k}]`);
  }
}

/** A clause that must be a span query (`<name> [<key>] must be of type span query`). */
function spanClause(sub: SubParser, v: unknown, loc: Locator, path: JsonPath, name: string, key: string): Record<string, Obj> {
  const q = sub(v, loc, path);
  if (!SPAN_QUERIES.includes(Object.keys(q)[0])) throw loc.parsing(path, `${name} [${key}] must be of type span query`);
  return q;
}

function int(v: unknown, name: string, key: string, loc: Locator, path: JsonPath): number {
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw loc.parsing(path, `[${name}] query does not support [${key}]`);
  return n;
}

export function spanParsers(sub: SubParser): Record<string, Parser> {
  return {
    span_term: (body, loc, path) => {
      const fields = Object.keys(body).filter((k) => k !== 'boost' && k !== '_name');
      if (fields.length !== 1) throw loc.parsing(path, fields.length ? `[span_term] query doesn't support multiple fields, found [${fields[0]}] and [${fields[1]}]` : '[span_term] query malformed, no field');
      const v = body[fields[0]];
      if (isObject(v)) {
        for (const k of Object.keys(v)) if (!['value', 'term', 'boost', '_name'].includes(k)) throw loc.parsing([...path, fields[0], k], `[span_term] query does not support [${k}]`);
        if (v.value === undefined && v.term === undefined) throw illegalArgument('value cannot be null');
      } else if (v === null || v === undefined) throw illegalArgument('value cannot be null');
      return { ...body };
    },
    span_near: (body, loc, path) => {
      known('span_near', body, ['clauses', 'slop', 'in_order'], loc, path);
      const clauses = body.clauses;
      if (!Array.isArray(clauses) || clauses.length === 0) throw loc.parsing(path, 'span_near must include [clauses]');
      const out: Obj = { ...body, slop: body.slop === undefined ? 0 : int(body.slop, 'span_near', 'slop', loc, [...path, 'slop']), in_order: body.in_order !== false };
      out.clauses = clauses.map((c, i) => {
        if (isObject(c) && Object.keys(c)[0] === 'span_gap') {
          const g = c.span_gap;
          if (!isObject(g) || Object.keys(g).length !== 1) throw loc.parsing([...path, 'clauses', i], '[span_gap] must be an object with a single field and its width');
          if (out.in_order === false) throw illegalArgument('Gaps can only be added to ordered near queries');
          return c;
        }
        return spanClause(sub, c, loc, [...path, 'clauses', i], 'span_near', 'clauses');
      });
      return out;
    },
    span_or: (body, loc, path) => {
      known('span_or', body, ['clauses'], loc, path);
      if (!Array.isArray(body.clauses) || body.clauses.length === 0) throw loc.parsing(path, 'spanOr must include [clauses]');
      return { ...body, clauses: body.clauses.map((c, i) => spanClause(sub, c, loc, [...path, 'clauses', i], 'span_or', 'clauses')) };
    },
    span_not: (body, loc, path) => {
      known('span_not', body, ['include', 'exclude', 'pre', 'post', 'dist'], loc, path);
      if (body.include === undefined) throw loc.parsing(path, 'span_not must have [include] span query clause');
      if (body.exclude === undefined) throw loc.parsing(path, 'span_not must have [exclude] span query clause');
      if (body.dist !== undefined && (body.pre !== undefined || body.post !== undefined)) throw loc.parsing(path, 'span_not can either use [dist] or [pre] & [post] (or none)');
      const out: Obj = { ...body };
      out.include = spanClause(sub, body.include, loc, [...path, 'include'], 'span_not', 'include');
      out.exclude = spanClause(sub, body.exclude, loc, [...path, 'exclude'], 'span_not', 'exclude');
      for (const k of ['pre', 'post', 'dist']) if (body[k] !== undefined) out[k] = Math.max(0, int(body[k], 'span_not', k, loc, [...path, k]));
      return out;
    },
    span_first: (body, loc, path) => {
      known('span_first', body, ['match', 'end'], loc, path);
      if (body.match === undefined) throw loc.parsing(path, 'span_first must have [match] span query clause');
      if (body.end === undefined) throw loc.parsing(path, 'span_first must have [end] set for it');
      return { ...body, match: spanClause(sub, body.match, loc, [...path, 'match'], 'span_first', 'match'), end: int(body.end, 'span_first', 'end', loc, [...path, 'end']) };
    },
    span_multi: (body, loc, path) => {
      known('span_multi', body, ['match'], loc, path);
      if (body.match === undefined) throw loc.parsing(path, 'spanMultiTerm must have [match] multi term query clause');
      const q = sub(body.match, loc, [...path, 'match']);
      if (!MULTI_TERM.includes(Object.keys(q)[0])) throw loc.parsing([...path, 'match'], '[span_multi] [match] must be of type multi term query');
      return { ...body, match: q };
    },
    span_containing: containment('span_containing'),
    span_within: containment('span_within'),
    field_masking_span: (body, loc, path) => {
      known('field_masking_span', body, ['query', 'field'], loc, path);
      if (body.query === undefined) throw loc.parsing(path, 'field_masking_span must have [query] span query clause');
      if (typeof body.field !== 'string') throw loc.parsing(path, 'field_masking_span must have [field] set for it');
      return { ...body, query: spanClause(sub, body.query, loc, [...path, 'query'], 'field_masking_span', 'query') };
    },
  };

  function containment(name: string): Parser {
    return (body, loc, path) => {
      known(name, body, ['big', 'little'], loc, path);
      if (body.big === undefined) throw loc.parsing(path, `${name} must include [big]`);
      if (body.little === undefined) throw loc.parsing(path, `${name} must include [little]`);
      return { ...body, big: spanClause(sub, body.big, loc, [...path, 'big'], name, 'big'), little: spanClause(sub, body.little, loc, [...path, 'little'], name, 'little') };
    };
  }
}
