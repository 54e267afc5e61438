/**
 * Building blocks of the bad-input fuzz (scripts/fuzz.ts): a seeded PRNG, JSON text with literals
 * JavaScript cannot hold (`1e400`, 30-digit integers, lone surrogates), junk values of every type,
 * deep nesting and malformed-text mutations. Pure functions of the PRNG: a seed replays a run.
 */
import { rng } from '../test/support/rng';

/** The seeded PRNG (test/support/rng.ts) with the picks the fuzz needs; the same seed gives the same cases. */
export class Rng {
  /** The next number in [0, 1). */
  readonly next: () => number;
  constructor(seed: number) {
    this.next = rng(seed);
  }
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** JSON text written as is (numbers and escapes JavaScript values cannot represent). */
export class Lit {
  constructor(readonly text: string) {}
}

/** JSON.stringify that writes Lit values verbatim. */
export function toJson(v: unknown): string {
  if (v instanceof Lit) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    return `{${Object.entries(v as Record<string, unknown>).map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(',')}}`;
  }
  if (v === undefined) return 'null';
  return JSON.stringify(v);
}

export const HUGE_NUMBERS = [
  '1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-123456789012345678901234567890', '9223372036854775807',
  '9223372036854775808', '-9223372036854775809', '18446744073709551616', '1.7976931348623157e309', '4.9e-325', '-0',
  '0.00000000000000000000000000000000001', '2147483648', '-2147483649', '1e19', '99999999999999999999.5',
];

/** Nesting of arrays/objects `depth` deep around `leaf`. */
export function deep(depth: number, leaf: unknown = 1, kind: 'array' | 'object' | 'mixed' = 'mixed'): Lit {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    const arr = kind === 'array' || (kind === 'mixed' && i % 2 === 1);
    open += arr ? '[' : '{"a":';
    close = (arr ? ']' : '}') + close;
  }
  return new Lit(open + toJson(leaf) + close);
}

/** Depths around the limits (1,000 for bodies, 30 for queries, 20 for mappings) and far beyond. */
export const DEPTHS = [21, 31, 500, 999, 1000, 1001, 5000, 100_000];

/** A junk JSON value of a random type. */
export function junk(r: Rng): unknown {
  switch (r.int(14)) {
    case 0: return null;
    case 1: return r.chance(0.5);
    case 2: return r.pick([0, -1, 1, -0.5, 3.7, 1e308, -1e308, 2 ** 31, 10001, 1025]);
    case 3: return new Lit(r.pick(HUGE_NUMBERS));
    case 4: return r.pick(['', ' ', 'abc', '1m', '-1', '0', 'true', 'null', '_all', '*', '_doc', '1e400', '\u0000', '%00', '../../etc', '5x', '1d']);
    case 5: return [];
    case 6: return r.pick([[1, 2], ['a'], [null], [[]], [{}], [1, 'a', true, null, {}]]);
    case 7: return {};
    case 8: return r.pick([{ a: 1 }, { '': null }, { match_all: {} }, { id: 'x', keep_alive: '1m' }, { field: 'n' }]);
    case 9: return 'x'.repeat(r.pick([300, 5000, 40000]));
    case 10: return deep(r.pick(DEPTHS.slice(0, 6)), 1, r.pick(['array', 'object', 'mixed'] as const));
    case 11: return new Lit(r.pick(['"\\ud800"', '"\\udc00x"', '"\\u0000"', '"\\uffff"', '"a\\"b"', '"\\\\"']));
    case 12: return r.pick(['NaN', 'Infinity', '-Infinity', '1.5e3', '0x10', '1_000']);
    default: return r.int(1000) - 500;
  }
}

/** Malformed text from valid JSON: truncation, stray bytes, garbage after, broken tokens. */
export function mangle(r: Rng, text: string): string {
  const at = text.length ? r.int(text.length) : 0;
  switch (r.int(10)) {
    case 0: return text.slice(0, at);
    case 1: return text.slice(0, at) + r.pick(['{', '}', '[', ']', ',', ':', '"', '\\', 'x', '\u0000', ' ']) + text.slice(at);
    case 2: return text + r.pick(['}', ']', ',', 'x', '{}', '\n{"a":1}', ' garbage', '\u0000']);
    case 3: return text.replace(/"/g, "'");
    case 4: return text.replace(/:/, '');
    case 5: return r.pick(['', ' ', '\n', 'null', 'true', '1', '"s"', '[]', '[1,2]', '{', '}', '{]', '{"a"}', '{"a":}', '{,}', '{"a":1,}', '//x\n{}', '{"a":1}{"b":2}']);
    case 6: return text.slice(0, at) + text.slice(at + 1 + r.int(5));
    case 7: return text.replace(/\d+/, r.pick(HUGE_NUMBERS));
    case 8: return `{"a":1,"a":2,${text.slice(1)}`;
    default: return text.slice(at) + text.slice(0, at);
  }
}

/** Bytes that are not valid UTF-8 (overlong, lone continuation, surrogate halves, 0xff). */
export function invalidUtf8(r: Rng): Buffer {
  return Buffer.from(r.pick([[0xff], [0xfe, 0xff], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3]]));
}

/** A base64url string of `n` random bytes. */
export function randomB64(r: Rng, n: number): string {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = r.int(256);
  return b.toString('base64url');
}
