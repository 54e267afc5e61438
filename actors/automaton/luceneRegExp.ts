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
import { Parser, RegExpFlag, type Node } from './regExpParser';
import {
  Budget, complementFragment, complementRanges, DEFAULT_DETERMINIZE_LIMIT, determinize, intersectFragments, intersectRanges,
  MAX_CODE_POINT, Nfa, normalizeRanges, type Dfa, type Fragment, type Ranges,
} from './automaton';

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

export { RegExpFlag } from './regExpParser';

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
