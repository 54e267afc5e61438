import { compileRegExp, RegExpFlag } from '../../../actors/automaton';
import { EsError } from '../../../actors/wire/esErrors';

const m = (pattern: string, opts = {}) => compileRegExp(pattern, opts);

/** The error a pattern raises (type and reason). */
function errorOf(pattern: string, opts = {}): { type: string; status: number; reason: string } {
  try {
    compileRegExp(pattern, opts);
  } catch (e) {
    const x = e as EsError;
    return { type: x.type, status: x.status, reason: x.message };
  }
  throw new Error(`${pattern} compiled`);
}

describe('Lucene regexp semantics', () => {
  it.each([
    // [pattern, matches, does not match]
    ['abc', ['abc'], ['ab', 'abcd', 'xabc', '']],
    ['a.c', ['abc', 'a😀c', 'a c'], ['ac', 'abbc']],
    ['a|bc', ['a', 'bc'], ['abc', 'b']],
    ['ab*', ['a', 'ab', 'abbb'], ['b', 'abc']],
    ['ab+', ['ab', 'abb'], ['a']],
    ['ab?c', ['ac', 'abc'], ['abbc']],
    ['a{2}', ['aa'], ['a', 'aaa']],
    ['a{2,}', ['aa', 'aaaa'], ['a']],
    ['a{1,3}', ['a', 'aa', 'aaa'], ['', 'aaaa']],
    ['a{3,1}', [], ['a', 'aa', 'aaa', '']],
    ['[a-c]x', ['ax', 'bx', 'cx'], ['dx', 'x']],
    ['[^a-c]x', ['dx', '😀x'], ['ax', 'x']],
    ['[abc\\-]', ['a', '-'], ['d']],
    ['\\d+', ['0', '123'], ['a', '']],
    ['\\D', ['a'], ['5']],
    ['\\w+\\s\\S', ['ab_9 x'], ['ab  x', 'ab\nx\n']],
    ['\\W', ['-', ' '], ['a', '_']],
    ['"a.b"', ['a.b'], ['axb']],
    ['a\\.b', ['a.b'], ['axb']],
    ['()', [''], ['a']],
    ['', [''], ['a']],
    ['a@', ['a', 'abc', 'a😀'], ['b']],
    ['#|a', ['a'], ['']],
    ['~(abc)', ['', 'ab', 'abcd', 'x'], ['abc']],
    ['~(a.*)', ['b', ''], ['a', 'abc']],
    ['a.*&.*b', ['ab', 'axxb'], ['a', 'ba']],
    ['[a-z]+&~(foo)', ['bar', 'fo', 'fooo'], ['foo', 'Bar']],
    ['<1-100>', ['1', '42', '100', '007', '0100'], ['0', '101', '', 'a']],
    ['<01-10>', ['01', '09', '10'], ['1', '11', '001']],
    ['x<5-12>', ['x5', 'x12', 'x09'], ['x4', 'x13']],
    ['(a+)+b', ['ab', 'aaab'], ['aaaa', 'b']],
  ])('%j matches what Lucene matches', (pattern, yes, no) => {
    const re = m(pattern);
    for (const s of yes) expect([s, re.test(s)]).toEqual([s, true]);
    for (const s of no) expect([s, re.test(s)]).toEqual([s, false]);
  });

  it('treats the optional operators as literals when their flags are off', () => {
    const re = m('a&b~c#@<1-2>', { flags: RegExpFlag.NONE });
    expect(re.test('a&b~c#@<1-2>')).toBe(true);
    expect(m('a@', { flags: RegExpFlag.ALL & ~RegExpFlag.ANYSTRING }).test('a@')).toBe(true);
  });

  it('folds ASCII letters of characters and strings when case insensitive, not ranges', () => {
    const re = m('ab"cd"[e]', { caseInsensitive: true });
    expect(re.test('ABCDE')).toBe(true);
    expect(re.test('aBcDe')).toBe(true);
    expect(m('[a-c]', { caseInsensitive: true }).test('B')).toBe(false);
    expect(m('é', { caseInsensitive: true }).test('É')).toBe(false);
  });

  it('answers "(a+)+b" over a long run of a in linear time', () => {
    const re = m('(a+)+b');
    const t0 = Date.now();
    for (let n = 20; n <= 200_000; n *= 10) expect(re.test('a'.repeat(n))).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1000);
  });
});

describe('Lucene regexp errors', () => {
  it.each([
    ['(', 'unexpected end-of-string'],
    ['[z-a]', 'invalid range: from (122) cannot be > to (97)'],
    ['a)', 'end-of-string expected at position 1'],
    ['(a', "expected ')' at position 2"],
    ['[ab', "expected ']' at position 3"],
    ['a{x}', 'integer expected at position 2'],
    ['a{2', "expected '}' at position 3"],
    ['"ab', 'expected \'"\' at position 3'],
    ['<1-', "expected '>' at position 3"],
    ['<1-x>', 'interval syntax error at position 4'],
    ['<-1>', 'interval syntax error at position 3'],
    ['a\\n', 'invalid character class \\n'],
    ['a\\', 'unexpected end-of-string'],
    ['a{99999999999}', 'For input string: "99999999999"'],
    ['<foo>', "'foo' not found"],
  ])('refuses %j with ES\'s 400: %s', (pattern, reason) => {
    expect(errorOf(pattern)).toEqual({ type: 'illegal_argument_exception', status: 400, reason });
  });

  it('refuses a pattern whose automaton is too large to determinize with a 400', () => {
    const t0 = Date.now();
    expect(errorOf('(a|b)*a(a|b){20}')).toEqual({
      type: 'too_complex_to_determinize_exception',
      status: 400,
      reason: 'Determinizing (a|b)*a(a|b){20} would require more than 10000 effort.',
    });
    expect(errorOf('.{100}{1000}').type).toBe('too_complex_to_determinize_exception');
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('answers long and deeply nested patterns with a 400 or a match, never a stack overflow', () => {
    expect(errorOf(`${'('.repeat(600)}a${')'.repeat(600)}`).reason).toBe('regular expression is nested too deeply (more than 500 levels)');
    expect(errorOf(`a${'*'.repeat(600)}`).status).toBe(400);
    expect(errorOf(`${'~'.repeat(600)}a`).status).toBe(400);
    expect(m(`${'('.repeat(100)}a${')'.repeat(100)}`).test('a')).toBe(true);
    expect(m(`${'ab|'.repeat(2000)}c`).test('c')).toBe(true);
    expect(m('x'.repeat(5000)).test('x'.repeat(5000))).toBe(true);
    expect(errorOf('x'.repeat(20_000)).type).toBe('too_complex_to_determinize_exception');
  });

  it('honours a larger max_determinized_states', () => {
    expect(m('(a|b)*a(a|b){14}', { maxDeterminizedStates: 100_000 }).test(`b${'a'.repeat(15)}`)).toBe(true);
  });
});
