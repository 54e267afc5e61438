/**
 * The parser of Lucene's regexp syntax (Lucene 9 `RegExp`: its grammar, flags and error texts),
 * producing the tree luceneRegExp.ts compiles. Binary rules are parsed with loops into n-ary nodes,
 * and nesting is bounded, so a long or deep pattern cannot exhaust the stack.
 */
import { illegalArgument } from '../wire/esErrors';

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

export type Node =
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

export class Parser {
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

