/**
 * The query string syntaxes, parsed into a small tree the shard compiles against its mapping:
 * Lucene's classic QueryParser (`query_string`, URL `q=`) and its SimpleQueryParser
 * (`simple_query_string`). Only the syntax lives here; fields, analysis and leniency are applied
 * by query/queryString.ts.
 */
import { EsError } from '../../../wire/esErrors';

export type Occur = 'must' | 'should' | 'must_not';

export type QsNode =
  | { t: 'bool'; clauses: Array<{ occur: Occur; q: QsNode }>; boost?: number; /** SimpleQueryParser's negation wrapper */ negated?: boolean }
  | { t: 'term'; field?: string; text: string; boost?: number; fuzzy?: string }
  | { t: 'phrase'; field?: string; text: string; slop?: number; boost?: number }
  | { t: 'prefix'; field?: string; text: string; boost?: number }
  | { t: 'wildcard'; field?: string; text: string; boost?: number }
  | { t: 'regexp'; field?: string; text: string; boost?: number }
  | { t: 'range'; field?: string; lower: string | null; upper: string | null; incLower: boolean; incUpper: boolean; boost?: number }
  | { t: 'all'; boost?: number };

/** ES's error for a query string that does not parse (QueryStringQueryBuilder wraps Lucene's ParseException). */
function parseError(query: string, detail: string): EsError {
  return new EsError('query_shard_exception', 400, `Failed to parse query [${query}]`, {
    causedBy: new EsError('parse_exception', 400, `Cannot parse '${query}': ${detail}`),
  });
}

type Tok =
  | { k: 'and' | 'or' | 'not' | 'plus' | 'minus' | 'lparen' | 'rparen' | 'colon' | 'star' }
  | { k: 'caret'; v: string }
  | { k: 'tilde'; v: string }
  | { k: 'quoted'; v: string }
  | { k: 'term'; v: string; raw: string }
  | { k: 'regexp'; v: string }
  | { k: 'range'; lower: string; upper: string; incLower: boolean; incUpper: boolean };

const SPECIAL = new Set([...'+-!():^[]"{}~*?\\/ \t\n\r\u3000']);

/** Tokens of the classic syntax (QueryParserTokenManager). */
function tokenize(s: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i];
    if (/\s/.test(c)) { i++; continue; }
    if (s.startsWith('&&', i)) { out.push({ k: 'and' }); i += 2; continue; }
    if (s.startsWith('||', i)) { out.push({ k: 'or' }); i += 2; continue; }
    if (c === '+') { out.push({ k: 'plus' }); i++; continue; }
    if (c === '-') { out.push({ k: 'minus' }); i++; continue; }
    if (c === '!') { out.push({ k: 'not' }); i++; continue; }
    if (c === '(') { out.push({ k: 'lparen' }); i++; continue; }
    if (c === ')') { out.push({ k: 'rparen' }); i++; continue; }
    if (c === ':') { out.push({ k: 'colon' }); i++; continue; }
    if (c === '^' || c === '~') {
      let j = i + 1;
      while (j < n && /[0-9.]/.test(s[j])) j++;
      out.push({ k: c === '^' ? 'caret' : 'tilde', v: s.slice(i + 1, j) });
      i = j;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      let v = '';
      while (j < n && s[j] !== '"') {
        if (s[j] === '\\' && j + 1 < n) { v += s[j + 1]; j += 2; } else v += s[j++];
      }
      if (j >= n) throw new Error("Lexical error: unterminated quoted phrase");
      out.push({ k: 'quoted', v });
      i = j + 1;
      continue;
    }
    if (c === '/') {
      let j = i + 1;
      let v = '';
      while (j < n && s[j] !== '/') {
        if (s[j] === '\\' && j + 1 < n && s[j + 1] === '/') { v += '/'; j += 2; } else v += s[j++];
      }
      if (j >= n) throw new Error("Lexical error: unterminated regular expression");
      out.push({ k: 'regexp', v });
      i = j + 1;
      continue;
    }
    if (c === '[' || c === '{') {
      const close = s.slice(i + 1).search(/[\]}]/);
      if (close < 0) throw new Error(`Encountered "<EOF>": unterminated range`);
      const inner = s.slice(i + 1, i + 1 + close).trim();
      const m = /^(\S+|"[^"]*")\s+TO\s+(\S+|"[^"]*")$/.exec(inner);
      if (!m) throw new Error(`Encountered "${inner}": expected "TO"`);
      const unq = (x: string) => (x.startsWith('"') && x.endsWith('"') ? x.slice(1, -1) : x);
      out.push({ k: 'range', lower: unq(m[1]), upper: unq(m[2]), incLower: c === '[', incUpper: s[i + 1 + close] === ']' });
      i = i + 2 + close;
      continue;
    }
    if (c === '*' && (i + 1 >= n || SPECIAL.has(s[i + 1]) && s[i + 1] !== '*' && s[i + 1] !== '?')) {
      out.push({ k: 'star' });
      i++;
      continue;
    }
    // a term: anything up to a special character; `\x` escapes, `*` and `?` are wildcards, + and - inside are plain
    let j = i;
    let v = '';
    let raw = '';
    while (j < n) {
      const d = s[j];
      if (d === '\\' && j + 1 < n) { v += s[j + 1]; raw += d + s[j + 1]; j += 2; continue; }
      if (j > i && (d === '-' || d === '+')) { v += d; raw += d; j++; continue; }
      if (d === '*' || d === '?') { v += d; raw += d; j++; continue; }
      if (SPECIAL.has(d)) break;
      v += d;
      raw += d;
      j++;
    }
    if (j === i) throw new Error(`Encountered "${c}"`);
    if (raw === 'AND') out.push({ k: 'and' });
    else if (raw === 'OR') out.push({ k: 'or' });
    else if (raw === 'NOT') out.push({ k: 'not' });
    else out.push({ k: 'term', v, raw });
    i = j;
  }
  return out;
}

/**
 * Lucene's classic QueryParser: clauses joined by the default operator, `AND`/`OR`/`NOT`,
 * `+`/`-`, groups, `field:` prefixes, `^boost`, `~fuzziness` / `~slop`, ranges, wildcards, regexps.
 * @throws EsError 400 `query_shard_exception` "Failed to parse query [...]" as ES.
 */
export function parseQueryString(query: string, defaultOperator: 'or' | 'and'): QsNode {
  let toks: Tok[];
  try {
    toks = tokenize(query);
  } catch (e) {
    throw parseError(query, (e as Error).message);
  }
  let pos = 0;
  const peek = () => toks[pos];
  const fail = (what: string): never => {
    throw parseError(query, what);
  };

  const parseBoost = (node: QsNode): QsNode => {
    const t = peek();
    if (t?.k === 'caret') {
      pos++;
      const b = Number(t.v);
      if (t.v === '' || Number.isNaN(b)) fail(`Encountered "^" expecting <NUMBER>`);
      return { ...node, boost: b };
    }
    return node;
  };

  const parseTerm = (field: string | undefined): QsNode => {
    const t = toks[pos++];
    if (!t) return fail('Encountered "<EOF>" at end of input');
    if (t.k === 'quoted') {
      let slop: number | undefined;
      if (peek()?.k === 'tilde') slop = Math.trunc(Number((toks[pos++] as { v: string }).v || 0));
      return parseBoost({ t: 'phrase', field, text: t.v, ...(slop !== undefined ? { slop } : {}) });
    }
    if (t.k === 'range') return parseBoost({ t: 'range', field, lower: t.lower === '*' ? null : t.lower, upper: t.upper === '*' ? null : t.upper, incLower: t.incLower, incUpper: t.incUpper });
    if (t.k === 'regexp') return parseBoost({ t: 'regexp', field, text: t.v });
    if (t.k === 'star') return parseBoost(field === undefined || field === '*' ? { t: 'all' } : { t: 'wildcard', field, text: '*' });
    if (t.k !== 'term') return fail(`Encountered "${t.k}"`);
    let fuzzy: string | undefined;
    if (peek()?.k === 'tilde') fuzzy = `~${(toks[pos++] as { v: string }).v}`;
    let node: QsNode;
    const wild = /(?<!\\)[*?]/.test(t.raw);
    if (fuzzy !== undefined && !wild) node = { t: 'term', field, text: t.v, fuzzy };
    else if (wild && /^[^*?]*\*$/.test(t.raw.replace(/\\./g, 'x'))) node = { t: 'prefix', field, text: t.v.slice(0, -1) };
    else if (wild) node = { t: 'wildcard', field, text: t.v };
    else node = { t: 'term', field, text: t.v };
    return parseBoost(node);
  };

  const parseClause = (): QsNode => {
    let field: string | undefined;
    const t = peek();
    const next = toks[pos + 1];
    if ((t?.k === 'term' || t?.k === 'star') && next?.k === 'colon') {
      field = t.k === 'term' ? t.v : '*';
      pos += 2;
    }
    if (peek()?.k === 'lparen') {
      pos++;
      const inner = parseQuery(field);
      if (toks[pos++]?.k !== 'rparen') fail('Encountered "<EOF>" expecting ")"');
      return parseBoost(inner);
    }
    return parseTerm(field);
  };

  // QueryParserBase.addClause: the conjunction can change the previous clause's occur
  const parseQuery = (field: string | undefined): QsNode => {
    const clauses: Array<{ occur: Occur; q: QsNode }> = [];
    let first = true;
    while (pos < toks.length && peek().k !== 'rparen') {
      let conj: 'and' | 'or' | null = null;
      if (!first && (peek().k === 'and' || peek().k === 'or')) conj = (toks[pos++].k as 'and' | 'or');
      let mod: 'req' | 'not' | null = null;
      const m = peek()?.k;
      if (m === 'plus') { mod = 'req'; pos++; } else if (m === 'minus' || m === 'not') { mod = 'not'; pos++; }
      if (pos >= toks.length) fail('Encountered "<EOF>" at end of input');
      const q = withField(parseClause(), field);
      if (clauses.length && conj === 'and') {
        const c = clauses[clauses.length - 1];
        if (c.occur !== 'must_not') c.occur = 'must';
      }
      if (clauses.length && defaultOperator === 'and' && conj === 'or') {
        const c = clauses[clauses.length - 1];
        if (c.occur !== 'must_not') c.occur = 'should';
      }
      let required: boolean;
      const prohibited = mod === 'not';
      if (defaultOperator === 'or') {
        required = mod === 'req' || (conj === 'and' && !prohibited);
      } else required = !prohibited && conj !== 'or';
      clauses.push({ occur: prohibited ? 'must_not' : required ? 'must' : 'should', q });
      first = false;
    }
    if (clauses.length === 1 && clauses[0].occur !== 'must_not') return clauses[0].q;
    return { t: 'bool', clauses };
  };

  const withField = (q: QsNode, field: string | undefined): QsNode => {
    if (field === undefined || q.t === 'bool' || q.t === 'all' || q.field !== undefined) return q;
    return { ...q, field };
  };

  const root = parseQuery(undefined);
  if (pos < toks.length) fail(`Encountered ")"`);
  return root;
}

/** SimpleQueryParser flags. */
export const SQ = { AND: 1, NOT: 2, OR: 4, PREFIX: 8, PHRASE: 16, PRECEDENCE: 32, ESCAPE: 64, WHITESPACE: 128, FUZZY: 256, NEAR: 512 } as const;

/**
 * Lucene's SimpleQueryParser: `+` and, `|` or, `-` not, `"phrase"~slop`, `prefix*`, `term~edits`,
 * `( )`; whitespace means the default operator; left to right, never an error.
 */
export function parseSimpleQueryString(query: string, defaultOperator: 'or' | 'and', flags = -1): QsNode | null {
  const on = (f: number) => (flags & f) !== 0;
  let i = 0;
  const n = query.length;
  const defOcc: Occur = defaultOperator === 'and' ? 'must' : 'should';

  const parseGroup = (): QsNode | null => {
    let top: QsNode | null = null;
    let current: Occur | null = null;
    let previous: Occur | null = null;
    let not = 0;
    const add = (branch: QsNode | null) => {
      if (branch) {
        if (not % 2 === 1) branch = { t: 'bool', negated: true, clauses: [{ occur: 'must_not', q: branch }, { occur: 'should', q: { t: 'all' } }] };
        if (top === null) top = branch;
        else {
          const op = current ?? defOcc;
          if (previous !== op || top.t !== 'bool' || top.negated) top = { t: 'bool', clauses: [{ occur: op, q: top }] };
          (top as Extract<QsNode, { t: 'bool' }>).clauses.push({ occur: op, q: branch });
          previous = op;
        }
      }
      current = null;
      not = 0;
    };
    while (i < n) {
      const c = query[i];
      if (c === '(' && on(SQ.PRECEDENCE)) {
        i++;
        add(parseGroup());
        continue;
      }
      if (c === ')' && on(SQ.PRECEDENCE)) {
        i++;
        return top;
      }
      if (c === '"' && on(SQ.PHRASE)) {
        let j = i + 1;
        let text = '';
        while (j < n && query[j] !== '"') {
          if (query[j] === '\\' && on(SQ.ESCAPE) && j + 1 < n) { text += query[j + 1]; j += 2; } else text += query[j++];
        }
        if (j >= n) {
          // no closing quote: the quote is ignored and the rest read as terms
          i++;
          continue;
        }
        i = j + 1;
        let slop: number | undefined;
        if (query[i] === '~' && on(SQ.NEAR)) {
          const m = /^~(\d*)/.exec(query.slice(i))!;
          slop = m[1] ? Number(m[1]) : 0;
          i += m[0].length;
        }
        add({ t: 'phrase', text, ...(slop !== undefined ? { slop } : {}) });
        continue;
      }
      if (c === '+' && on(SQ.AND)) {
        i++;
        if (top !== null && current === null) current = 'must';
        continue;
      }
      if (c === '|' && on(SQ.OR)) {
        i++;
        if (top !== null && current === null) current = 'should';
        continue;
      }
      if (c === '-' && on(SQ.NOT)) {
        i++;
        not++;
        continue;
      }
      if ((c === ' ' || c === '\t' || c === '\n' || c === '\r') && on(SQ.WHITESPACE)) {
        i++;
        continue;
      }
      // a term up to whitespace or an operator
      let text = '';
      let j = i;
      while (j < n) {
        const d = query[j];
        if (d === '\\' && on(SQ.ESCAPE) && j + 1 < n) { text += query[j + 1]; j += 2; continue; }
        if ((/\s/.test(d) && on(SQ.WHITESPACE)) || (d === '|' && on(SQ.OR)) || (d === '+' && on(SQ.AND)) || (d === '"' && on(SQ.PHRASE)) ||
          ((d === '(' || d === ')') && on(SQ.PRECEDENCE)) || (d === '~' && on(SQ.FUZZY))) break;
        text += d;
        j++;
      }
      i = j;
      let fuzzy: string | undefined;
      if (query[i] === '~' && on(SQ.FUZZY)) {
        const m = /^~(\d*)/.exec(query.slice(i))!;
        fuzzy = `~${m[1]}`;
        i += m[0].length;
      }
      if (!text) continue;
      if (fuzzy !== undefined) add({ t: 'term', text, fuzzy: fuzzy === '~' ? '~2' : fuzzy });
      else if (text.endsWith('*') && on(SQ.PREFIX) && text.length > 1) add({ t: 'prefix', text: text.slice(0, -1) });
      else add({ t: 'term', text });
    }
    return top;
  };
  return parseGroup();
}
