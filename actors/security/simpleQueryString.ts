/**
 * `simple_query_string` for the security query APIs (ES SimpleQueryStringBuilder as
 * FieldNameTranslators rewrites it): `+must -not "a phrase" pre* a | b` over the allowed fields a
 * pattern names (all of them by default), leniently (a value a field cannot parse matches nothing;
 * only disallowed fields: matches nothing).
 */
import type { Field, FieldTable, Predicate, Value } from './queryTypes';

/** What the query compiler lends (passed in, so this file and queryDsl.ts do not import each other's values). */
export interface Analysis {
  analyze(text: string): string[];
  coerce(f: Field<unknown>, v: unknown, now: number): Value;
  terms<T>(f: Field<T>, d: T): Value[];
}

type Obj = Record<string, unknown>;

interface Clause {
  occur: 'must' | 'must_not' | 'should';
  text: string;
  phrase: boolean;
  prefix: boolean;
}

/** Splits simple_query_string syntax: `+must -not "a phrase" pre* a | b` (default_operator joins the rest). */
function parseSimple(query: string, and: boolean): Clause[][] {
  const groups: Clause[][] = [[]];
  const re = /\s*(\|)|\s*([+-]?)("([^"]*)"|[^\s|"]+)/g;
  for (let m; (m = re.exec(query)); ) {
    if (m[1]) {
      groups.push([]);
      continue;
    }
    const sign = m[2];
    const phrase = m[4] !== undefined;
    let text = phrase ? m[4] : m[3];
    const prefix = !phrase && text.endsWith('*');
    if (prefix) text = text.slice(0, -1);
    if (!text) continue;
    groups[groups.length - 1].push({ occur: sign === '-' ? 'must_not' : sign === '+' || and ? 'must' : 'should', text, phrase, prefix });
  }
  return groups.filter((g) => g.length);
}

/** One clause against one field, leniently (a value the field cannot parse matches nothing). */
function clauseMatches<T>(c: Clause, f: Field<T>, d: T, now: number, a: Analysis): boolean {
  if (f.kind === 'text') {
    const want = a.analyze(c.text);
    const have = a.terms(f, d) as string[];
    if (!want.length) return false;
    if (c.prefix) return want.slice(0, -1).every((t) => have.includes(t)) && have.some((t) => t.startsWith(want[want.length - 1]));
    if (!c.phrase) return want.every((t) => have.includes(t));
    return have.some((_, i) => want.every((t, j) => have[i + j] === t));
  }
  if (f.kind === 'keyword') return f.values(d).some((x) => (c.prefix ? String(x).startsWith(c.text) : String(x) === c.text));
  if (c.prefix) return false;
  try {
    const v = a.coerce(f as Field<unknown>, c.text, now);
    return f.values(d).some((x) => x === v);
  } catch {
    return false;
  }
}

export function simpleQueryString<T>(b: Obj, fields: FieldTable<T>, now: number, a: Analysis): Predicate<T> {
  const names = Array.isArray(b.fields) && b.fields.length ? b.fields.map(String) : ['*'];
  // Field boosts (`name^2`) do not change what matches.
  const targets = [...new Set(names.flatMap((n) => fields.matching(n.replace(/\^[\d.]+$/, ''))))];
  if (!targets.length) return () => false; // only disallowed fields: matches nothing (ES: match_none)
  const and = String(b.default_operator ?? 'or').toLowerCase() === 'and';
  const groups = parseSimple(String(b.query ?? ''), and);
  const any = (c: Clause, d: T) => targets.some((f) => clauseMatches(c, f, d, now, a));
  return (d) =>
    groups.some((g) => {
      const must = g.filter((c) => c.occur === 'must');
      const should = g.filter((c) => c.occur === 'should');
      if (!must.every((c) => any(c, d)) || g.some((c) => c.occur === 'must_not' && any(c, d))) return false;
      return should.length === 0 || must.length > 0 || should.some((c) => any(c, d));
    });
}
