/**
 * Lucene's regular expression syntax (`org.apache.lucene.util.automaton.RegExp`, Lucene 9 as in
 * Elasticsearch 8), parsed with its grammar and error texts and compiled to an automaton:
 *
 * - the whole term must match (implicitly anchored); `.` is any code point;
 * - `|` union, `&` intersection, `~` complement, `?` `*` `+` `{n}` `{n,}` `{n,m}` repetition;
 * - `[…]` / `[^…]` classes (reserved characters must be escaped inside them too), `\d \D \s \S \w \W`;
 * - `"…"` literal strings, `()` the empty string, `#` the empty language, `@` any string,
 *   `<n-m>` decimal intervals, `<name>` named automata (none are defined: an error, as in ES).
 *
 * Optional operators follow the syntax flags (ES `flags`: ALL by default); `caseInsensitive`
 * folds ASCII letters of characters and strings, as Lucene's ASCII_CASE_INSENSITIVE does.
 */
import { illegalArgument } from '../wire/esErrors';
import {
  Budget, complementFragment, complementRanges, DEFAULT_DETERMINIZE_LIMIT, determinize, intersectFragments, intersectRanges,
  MAX_CODE_POINT, Nfa, normalizeRanges, type Dfa, type Fragment, type Ranges,
} from './automaton';

/** Syntax flags (Lucene RegExp constants; ES RegexpFlag). */
export const RegExpFlag = {
  INTERSECTION: 0x0001,
  COMPLEMENT: 0x0002,
  EMPTY: 0x0004,
  ANYSTRING: 0x0008,
  AUTOMATON: 0x0010,
  INTERVAL: 0x0020,
  ALL: 0xff,
  NONE: 0,
} as const;

/** Deepest nesting of groups and operators a pattern may have (the parser and compiler recurse on it). */
export const MAX_REGEXP_DEPTH = 500;

type Node =
  | { k: 'union' | 'concat' | 'inter'; parts: Node[] }
  | { k: 'opt' | 'star' | 'compl'; a: Node }
  | { k: 'min'; a: Node; min: number }
  | { k: 'minmax'; a: Node; min: number; max: number }
  | { k: 'char'; c: number }
  | { k: 'range'; from: number; to: number }
  | { k: 'any' | 'empty' | 'anystring' }
  | { k: 'string'; s: string }
  | { k: 'named'; s: string }
  | { k: 'interval'; min: number; max: number; digits: number }
  | { k: 'pre'; c: string };

const fail = (reason: string) => illegalArgument(reason);
const tooDeep = () => fail(`regular expression is nested too deeply (more than ${MAX_REGEXP_DEPTH} levels)`);

/** Depth of a parsed tree, without recursion (the compiler recurses on it). */
function depthOf(root: Node): number {
  let max = 0;
  const stack: Array<[Node, number]> = [[root, 1]];
  while (stack.length) {
    const [n, d] = stack.pop()!;
    if (d > max) max = d;
    if ('parts' in n) for (const p of n.parts) stack.push([p, d + 1]);
    else if ('a' in n) stack.push([n.a, d + 1]);
  }
  return max;
}

/** Java Integer.parseInt of a run of ASCII digits (NumberFormatException text on overflow). */
function parseJavaInt(s: string): number {
  const n = Number(s);
  if (!/^\d+$/.test(s) || n > 0x7fffffff) throw fail(`For input string: "${s}"`);
  return n;
}

class Parser {
  pos = 0;
  constructor(readonly s: string, readonly flags: number) {}

  private cp(): number {
    return this.s.codePointAt(this.pos)!;
  }
  more(): boolean {
    return this.pos < this.s.length;
  }
  peek(chars: string): boolean {
    return this.more() && chars.includes(String.fromCodePoint(this.cp()));
  }
  match(c: string): boolean {
    if (!this.more() || this.cp() !== c.codePointAt(0)) return false;
    this.pos += c.length;
    return true;
  }
  next(): number {
    if (!this.more()) throw fail('unexpected end-of-string');
    const c = this.cp();
    this.pos += c > 0xffff ? 2 : 1;
    return c;
  }
  check(flag: number): boolean {
    return (this.flags & flag) !== 0;
  }

  parse(): Node {
    if (this.s.length === 0) return { k: 'string', s: '' };
    const e = this.union();
    if (this.pos < this.s.length) throw fail(`end-of-string expected at position ${this.pos}`);
    if (depthOf(e) > MAX_REGEXP_DEPTH) throw tooDeep();
    return e;
  }

  /** Nesting depth of groups/classes/complements being parsed (stack safety; Java would overflow). */
  private depth = 0;
  private enter(): void {
    if (++this.depth > MAX_REGEXP_DEPTH) throw tooDeep();
  }

  // The binary rules of Lucene's grammar are right-recursive; loops give the same trees, flattened.
  union(): Node {
    const parts = [this.inter()];
    while (this.match('|')) parts.push(this.inter());
    return parts.length === 1 ? parts[0] : { k: 'union', parts };
  }

  inter(): Node {
    const parts = [this.concat()];
    while (this.check(RegExpFlag.INTERSECTION) && this.match('&')) parts.push(this.concat());
    return parts.length === 1 ? parts[0] : { k: 'inter', parts };
  }

  concat(): Node {
    const parts = [this.repeat()];
    while (this.more() && !this.peek(')|') && (!this.check(RegExpFlag.INTERSECTION) || !this.peek('&'))) parts.push(this.repeat());
    return parts.length === 1 ? parts[0] : { k: 'concat', parts };
  }

  repeat(): Node {
    let e = this.compl();
    while (this.peek('?*+{')) {
      if (this.match('?')) e = { k: 'opt', a: e };
      else if (this.match('*')) e = { k: 'star', a: e };
      else if (this.match('+')) e = { k: 'min', a: e, min: 1 };
      else if (this.match('{')) {
        let start = this.pos;
        while (this.peek('0123456789')) this.next();
        if (start === this.pos) throw fail(`integer expected at position ${this.pos}`);
        const n = parseJavaInt(this.s.slice(start, this.pos));
        let m = -1;
        if (this.match(',')) {
          start = this.pos;
          while (this.peek('0123456789')) this.next();
          if (start !== this.pos) m = parseJavaInt(this.s.slice(start, this.pos));
        } else m = n;
        if (!this.match('}')) throw fail(`expected '}' at position ${this.pos}`);
        e = m === -1 ? { k: 'min', a: e, min: n } : { k: 'minmax', a: e, min: n, max: m };
      }
    }
    return e;
  }

  compl(): Node {
    let n = 0;
    while (this.check(RegExpFlag.COMPLEMENT) && this.match('~')) n++;
    let e = this.charClass();
    for (let i = 0; i < n; i++) e = { k: 'compl', a: e };
    return e;
  }

  charClass(): Node {
    if (this.match('[')) {
      const negate = this.match('^');
      let e = this.classes();
      if (negate) e = { k: 'inter', parts: [{ k: 'any' }, { k: 'compl', a: e }] };
      if (!this.match(']')) throw fail(`expected ']' at position ${this.pos}`);
      return e;
    }
    return this.simple();
  }

  classes(): Node {
    const parts = [this.oneClass()];
    while (this.more() && !this.peek(']')) parts.push(this.oneClass());
    return parts.length === 1 ? parts[0] : { k: 'union', parts };
  }

  oneClass(): Node {
    const pre = this.predefined();
    if (pre) return pre;
    const c = this.charExp();
    if (this.match('-')) {
      const to = this.charExp();
      if (c > to) throw fail(`invalid range: from (${c}) cannot be > to (${to})`);
      return { k: 'range', from: c, to };
    }
    return { k: 'char', c };
  }

  /** `\d \D \s \S \w \W`, `\\`; other escaped letters are errors (as in java.util.regex). Consumes the backslash. */
  predefined(): Node | undefined {
    if (this.match('\\')) {
      if (this.peek('dDwWsS')) return { k: 'pre', c: String.fromCodePoint(this.next()) };
      if (this.peek('\\')) return { k: 'char', c: this.next() };
      if (this.peek('abcefghijklmnopqrtuvxyz') || this.peek('ABCEFGHIJKLMNOPQRTUVXYZ')) {
        throw fail(`invalid character class \\${String.fromCodePoint(this.next())}`);
      }
    }
    return undefined;
  }

  simple(): Node {
    if (this.match('.')) return { k: 'any' };
    if (this.check(RegExpFlag.EMPTY) && this.match('#')) return { k: 'empty' };
    if (this.check(RegExpFlag.ANYSTRING) && this.match('@')) return { k: 'anystring' };
    if (this.match('"')) {
      const start = this.pos;
      while (this.more() && !this.peek('"')) this.next();
      if (!this.match('"')) throw fail(`expected '"' at position ${this.pos}`);
      return { k: 'string', s: this.s.slice(start, this.pos - 1) };
    }
    if (this.match('(')) {
      if (this.match(')')) return { k: 'string', s: '' };
      this.enter();
      const e = this.union();
      this.depth--;
      if (!this.match(')')) throw fail(`expected ')' at position ${this.pos}`);
      return e;
    }
    if ((this.check(RegExpFlag.AUTOMATON) || this.check(RegExpFlag.INTERVAL)) && this.match('<')) {
      const start = this.pos;
      while (this.more() && !this.peek('>')) this.next();
      if (!this.match('>')) throw fail(`expected '>' at position ${this.pos}`);
      const body = this.s.slice(start, this.pos - 1);
      const i = body.indexOf('-');
      if (i === -1) {
        if (!this.check(RegExpFlag.AUTOMATON)) throw fail(`interval syntax error at position ${this.pos - 1}`);
        return { k: 'named', s: body };
      }
      if (!this.check(RegExpFlag.INTERVAL)) throw fail(`illegal identifier at position ${this.pos - 1}`);
      const smin = body.slice(0, i), smax = body.slice(i + 1);
      const ok = (x: string) => /^[0-9]+$/.test(x) && Number(x) <= 0x7fffffff;
      if (i === 0 || i === body.length - 1 || i !== body.lastIndexOf('-') || !ok(smin) || !ok(smax)) {
        throw fail(`interval syntax error at position ${this.pos - 1}`);
      }
      let min = Number(smin), max = Number(smax);
      const digits = smin.length === smax.length ? smin.length : 0;
      if (min > max) [min, max] = [max, min];
      return { k: 'interval', min, max, digits };
    }
    const pre = this.predefined();
    if (pre) return pre;
    return { k: 'char', c: this.charExp() };
  }

  charExp(): number {
    this.match('\\');
    return this.next();
  }
}

const PRE: Record<string, Ranges> = {
  d: [0x30, 0x39],
  s: [0x09, 0x0a, 0x0d, 0x0d, 0x20, 0x20],
  w: normalizeRanges([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]),
};
const preRanges = (c: string): Ranges => (c === c.toLowerCase() ? PRE[c] : complementRanges(PRE[c.toLowerCase()]));

/** Lucene toCaseInsensitiveChar: ASCII letters (code points up to 128) also match their other case. */
function charRanges(c: number, ci: boolean): Ranges {
  if (!ci || c > 128) return [c, c];
  const s = String.fromCodePoint(c);
  const alt = s === s.toLowerCase() ? s.toUpperCase() : s.toLowerCase();
  return normalizeRanges([c, c, alt.codePointAt(0)!, alt.codePointAt(0)!]);
}

/** A `~x` operand inside an intersection is a set difference only if some other operand is a plain set. */
const p0IsSet = (n: { parts: Node[] }) => n.parts.some((p) => p.k !== 'compl');

class Compiler {
  readonly nfa = new Nfa();
  constructor(readonly source: string, readonly ci: boolean, readonly budget: Budget) {}

  /** The node as a set of single code points, when it is one (classes, `.`, chars). */
  private charset(n: Node): Ranges | undefined {
    switch (n.k) {
      case 'char': return charRanges(n.c, this.ci);
      case 'range': return [n.from, n.to];
      case 'any': return [0, MAX_CODE_POINT];
      case 'pre': return preRanges(n.c);
      case 'union': {
        const all: Ranges = [];
        for (const p of n.parts) {
          const r = this.charset(p);
          if (!r) return undefined;
          all.push(...r);
        }
        return normalizeRanges(all);
      }
      case 'inter': {
        // [^…] is `. & ~(…)`: a set difference, no automaton needed
        let acc: Ranges = [0, MAX_CODE_POINT];
        for (const p of n.parts) {
          const r = p.k === 'compl' ? this.charset(p.a) : this.charset(p);
          if (!r) return undefined;
          acc = intersectRanges(acc, p.k === 'compl' ? complementRanges(r) : r);
        }
        return p0IsSet(n) ? acc : undefined;
      }
      default: return undefined;
    }
  }

  private ranges(r: Ranges): Fragment {
    const start = this.nfa.newState(), end = this.nfa.newState();
    for (let i = 0; i < r.length; i += 2) this.nfa.addRange(start, r[i], r[i + 1], end);
    return { start, end };
  }

  private epsilon(): Fragment {
    const start = this.nfa.newState(), end = this.nfa.newState();
    this.nfa.addEps(start, end);
    return { start, end };
  }

  private seq(parts: Fragment[]): Fragment {
    if (!parts.length) return this.epsilon();
    for (let i = 0; i + 1 < parts.length; i++) this.nfa.addEps(parts[i].end, parts[i + 1].start);
    return { start: parts[0].start, end: parts[parts.length - 1].end };
  }

  /** One entry and one exit for all alternatives (a chain of binary ones would put every exit in every closure). */
  private alt(...frags: Fragment[]): Fragment {
    const start = this.nfa.newState(), end = this.nfa.newState();
    for (const f of frags) {
      this.nfa.addEps(start, f.start);
      this.nfa.addEps(f.end, end);
    }
    return { start, end };
  }

  private star(a: Fragment): Fragment {
    const start = this.nfa.newState(), end = this.nfa.newState();
    this.nfa.addEps(start, a.start);
    this.nfa.addEps(start, end);
    this.nfa.addEps(a.end, a.start);
    this.nfa.addEps(a.end, end);
    return { start, end };
  }

  private string(s: string): Fragment {
    const start = this.nfa.newState();
    let cur = start;
    for (const ch of s) {
      const next = this.nfa.newState();
      const r = charRanges(ch.codePointAt(0)!, this.ci);
      for (let i = 0; i < r.length; i += 2) this.nfa.addRange(cur, r[i], r[i + 1], next);
      cur = next;
    }
    return { start, end: cur };
  }

  /** n copies of the node (each compiled afresh), refusing what Lucene would find too complex. */
  private copies(n: Node, count: number): Fragment[] {
    if (count === 0) return [];
    const before = this.nfa.size;
    const first = this.compile(n);
    const per = this.nfa.size - before;
    if (per * count > this.budget.limit * 20) this.budget.fail();
    const out = [first];
    for (let i = 1; i < count; i++) out.push(this.compile(n));
    return out;
  }

  compile(n: Node): Fragment {
    const set = this.charset(n);
    if (set) return this.ranges(set);
    switch (n.k) {
      case 'union': return this.alt(...n.parts.map((p) => this.compile(p)));
      case 'concat': return this.seq(n.parts.map((p) => this.compile(p)));
      case 'inter': return n.parts.map((p) => this.compile(p)).reduce((a, b) => intersectFragments(this.nfa, a, b, this.budget));
      case 'compl': return complementFragment(this.nfa, this.compile(n.a), this.budget);
      case 'opt': return this.alt(this.compile(n.a), this.epsilon());
      case 'star': return this.star(this.compile(n.a));
      case 'min': {
        if (n.min === 0) return this.star(this.compile(n.a));
        const parts = this.copies(n.a, n.min);
        parts.push(this.star(this.compile(n.a)));
        return this.seq(parts);
      }
      case 'minmax': {
        // Operations.repeat(a, min, max): nothing when min > max
        if (n.min > n.max) return { start: this.nfa.newState(), end: this.nfa.newState() };
        const parts = this.copies(n.a, n.min);
        const optional = this.copies(n.a, n.max - n.min).map((f) => this.alt(f, this.epsilon()));
        return this.seq([...parts, ...optional]);
      }
      case 'empty': return { start: this.nfa.newState(), end: this.nfa.newState() };
      case 'anystring': return this.star(this.ranges([0, MAX_CODE_POINT]));
      case 'string': return this.string(n.s);
      case 'named': throw illegalArgument(`'${n.s}' not found`);
      case 'interval': return this.interval(n.min, n.max, n.digits);
      default: throw new Error(`unexpected regexp node ${n.k}`);
    }
  }

  /** Decimal strings of exactly `len` digits between lo and hi (same length, zero-padded). */
  private between(lo: string, hi: string): Fragment {
    if (!lo.length) return this.epsilon();
    const a = lo.charCodeAt(0), b = hi.charCodeAt(0);
    const rest = lo.length - 1;
    if (a === b) return this.seq([this.ranges([a, a]), this.between(lo.slice(1), hi.slice(1))]);
    let f = this.seq([this.ranges([a, a]), this.between(lo.slice(1), '9'.repeat(rest))]);
    if (b - a > 1) f = this.alt(f, this.seq([this.ranges([a + 1, b - 1]), ...Array.from({ length: rest }, () => this.ranges([0x30, 0x39]))]));
    return this.alt(f, this.seq([this.ranges([b, b]), this.between('0'.repeat(rest), hi.slice(1))]));
  }

  /**
   * Automata.makeDecimalInterval: with `digits` the strings have exactly that many digits (zero
   * padded); without, any number of leading zeros before the value.
   */
  private interval(min: number, max: number, digits: number): Fragment {
    if (digits > 0) return this.between(String(min).padStart(digits, '0'), String(max).padStart(digits, '0'));
    const lengths: Fragment[] = [];
    for (let len = String(min).length; len <= String(max).length; len++) {
      const lo = Math.max(min, len === 1 ? 0 : 10 ** (len - 1));
      const hi = Math.min(max, 10 ** len - 1);
      if (lo <= hi) lengths.push(this.between(String(lo), String(hi)));
    }
    const value = this.alt(...lengths);
    return this.seq([this.star(this.ranges([0x30, 0x30])), value]);
  }
}

/** What compileRegExp needs besides the pattern. */
export interface RegExpOptions {
  /** Syntax flags (RegExpFlag bits); ALL by default, as ES. */
  flags?: number;
  /** Lucene ASCII_CASE_INSENSITIVE (ES `case_insensitive`). */
  caseInsensitive?: boolean;
  /** Most states the matching automaton may have (ES `max_determinized_states`, 10000). */
  maxDeterminizedStates?: number;
}

/** A compiled pattern: `test` runs in time linear in the input. */
export interface Matcher {
  test(s: string): boolean;
}

/**
 * Parses a Lucene regexp. Syntax errors are ES's 400 `illegal_argument_exception` with Lucene's
 * text (`unexpected end-of-string`, `invalid range: from (122) cannot be > to (97)`, …).
 */
export function parseLuceneRegExp(pattern: string, flags: number = RegExpFlag.ALL): void {
  new Parser(pattern, flags).parse();
}

/**
 * Compiles a Lucene regexp into a deterministic automaton.
 * @throws EsError 400 for syntax errors, unknown named automata and patterns too complex to determinize
 * @example compileRegExp('(a+)+b').test('a'.repeat(50_000)) // false, at once
 */
export function compileRegExp(pattern: string, opts: RegExpOptions = {}): Matcher & { dfa: Dfa } {
  const ast = new Parser(pattern, opts.flags ?? RegExpFlag.ALL).parse();
  const budget = new Budget(opts.maxDeterminizedStates ?? DEFAULT_DETERMINIZE_LIMIT, () => pattern);
  const c = new Compiler(pattern, opts.caseInsensitive === true, budget);
  const frag = c.compile(ast);
  const dfa = determinize(c.nfa, frag, budget);
  return { dfa, test: (s: string) => dfa.run(s) };
}
