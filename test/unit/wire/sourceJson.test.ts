/**
 * parseSourceJson against parseJson (the reference): on random JSON texts, valid and broken, the
 * same values (bigint where parseJson gives one) or the same error.
 */
import { parseJson } from '../../../actors/wire/json';
import { parseSourceJson } from '../../../actors/wire/sourceJson';
import { rng } from '../../support/rng';

type Rand = ReturnType<typeof rng>;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)];

const NUMBERS = [
  '0', '-0', '7', '-12', '1234567890123456', '9007199254740991', '9007199254740992', '-9007199254740993', '12345678901234567890',
  '-98765432109876543210123', '18446744073709551615', '1.5', '1234567890123456789.5', '1e21', '12345678901234567e3', '-1.25E-7', '0.1234567890123456789',
];
const STRINGS = [
  '""', '"plain"', '"12345678901234567890"', '"a\\"b\\\\c"', '"\\u00e9\\n"', '"日本 😀"', '"\\ue001123"', '"\uE0019999999999999999999"', '"x\\\\"', '"1234567890123456: not a key"',
];
const KEYS = ['"a"', '"b"', '"n"', '"__proto__"', '"12345678901234567"', '"a.b"', '"\\"k\\""', '"é"'];
const WS = ['', '', ' ', '\n  ', '\t'];

function value(r: Rand, depth: number): string {
  const k = r();
  if (depth > 3 || k < 0.45) return pick(r, [...NUMBERS, ...NUMBERS, ...STRINGS, 'true', 'false', 'null']);
  if (k < 0.7) return `[${Array.from({ length: Math.floor(r() * 4) }, () => pick(r, WS) + value(r, depth + 1) + pick(r, WS)).join(',')}]`;
  const n = Math.floor(r() * 5);
  const fields: string[] = [];
  for (let i = 0; i < n; i++) {
    const key = r() < 0.15 && fields.length ? fields[Math.floor(r() * fields.length)].split(':')[0] : pick(r, KEYS);
    fields.push(`${key}${pick(r, WS)}:${pick(r, WS)}${value(r, depth + 1)}`);
  }
  return `{${fields.join(',')}}`;
}

/** A broken variant now and then: truncated, a character inserted or dropped, a number as a key. */
function mangle(r: Rand, text: string): string {
  const k = r();
  if (k < 0.8) return text;
  const at = Math.floor(r() * text.length);
  if (k < 0.85) return text.slice(0, at);
  if (k < 0.9) return text.slice(0, at) + pick(r, ['"', '}', ',', ':', '1234567890123456789', '\\', ']']) + text.slice(at);
  if (k < 0.95) return text.slice(0, at) + text.slice(at + 1);
  return `{12345678901234567890:1,${text.slice(1)}`;
}

function outcome(f: () => unknown): { value?: unknown; error?: string; proto?: unknown } {
  try {
    const value = f();
    return { value, proto: value && typeof value === 'object' ? Object.getPrototypeOf(value) : undefined };
  } catch (e) {
    return { error: `${(e as Error).name}: ${(e as Error).message}` };
  }
}

describe('parseSourceJson', () => {
  it('gives what parseJson gives (values, bigints, errors) on random texts', () => {
    let bigs = 0;
    let errors = 0;
    for (let seed = 1; seed <= 6000; seed++) {
      const r = rng(seed);
      const text = mangle(r, `${pick(r, WS)}${value(r, 0)}${pick(r, WS)}`);
      const want = outcome(() => parseJson(text));
      const got = outcome(() => parseSourceJson(text));
      expect({ text, ...got }).toEqual({ text, ...want });
      if (want.error) errors++;
      if (/\d{17}/.test(text) && !want.error) bigs++;
    }
    expect(errors).toBeGreaterThan(300);
    expect(bigs).toBeGreaterThan(1000);
  });

  it('reads unsafe integers as bigint and keeps safe ones as numbers', () => {
    expect(parseSourceJson('{"a":12345678901234567890,"b":[-9007199254740993,9007199254740991],"c":"12345678901234567890"}')).toEqual({
      a: 12345678901234567890n, b: [-9007199254740993n, 9007199254740991], c: '12345678901234567890',
    });
  });

  it('keeps `__proto__` an own key, whatever its value', () => {
    for (const text of ['{"__proto__":12345678901234567890,"a":1}', '{"__proto__":{"x":12345678901234567890}}', '{"__proto__":[1234567890123456789]}']) {
      const want = parseJson<Record<string, unknown>>(text);
      const got = parseSourceJson<Record<string, unknown>>(text);
      expect(Object.getPrototypeOf(got)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(got, '__proto__')).toEqual(Object.getOwnPropertyDescriptor(want, '__proto__'));
    }
  });

  it('refuses duplicate keys with different values as parseJson does when it reads losslessly', () => {
    const text = '{"n":1234567890123456789,"a":1,"a":2}';
    expect(() => parseSourceJson(text)).toThrow("Duplicate key 'a' encountered at position 32");
    expect(parseSourceJson('{"n":1234567890123456789,"a":1,"a":1}')).toEqual({ n: 1234567890123456789n, a: 1 });
  });
});
