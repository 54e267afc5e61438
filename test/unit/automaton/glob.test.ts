import { compileWildcard, simpleMatch, simpleMatcher } from '../../../actors/automaton';

describe('simpleMatch (ES Regex.simpleMatch)', () => {
  it.each([
    ['*', 'anything', true], ['logs-*', 'logs-2024', true], ['logs-*', 'log', false], ['*-x', 'a-x', true],
    ['a*b*c', 'aXbYc', true], ['a*b*c', 'aXbY', false], ['abc', 'abc', true], ['abc', 'abcd', false],
    ['a.b', 'axb', false], ['a+b', 'a+b', true], ['**', '', true], ['a*', 'a', true],
  ] as const)('%j against %j is %s', (p, s, expected) => {
    expect(simpleMatch(p, s)).toBe(expected);
  });

  it('stays fast on patterns with many stars', () => {
    const t0 = Date.now();
    expect(simpleMatch(`${'*a'.repeat(30)}*b`, 'a'.repeat(255))).toBe(false);
    expect(Date.now() - t0).toBeLessThan(200);
  });

  it('matches a list of patterns', () => {
    const m = simpleMatcher(['a', 'b*']);
    expect([m.test('a'), m.test('bcd'), m.test('c')]).toEqual([true, true, false]);
    expect(simpleMatcher([]).test('x')).toBe(false);
  });
});

describe('compileWildcard (Lucene WildcardQuery)', () => {
  it.each([
    ['ki*y', 'kimchy', true], ['ki*y', 'kimchi', false], ['k?y', 'kay', true], ['k?y', 'ky', false],
    ['a\\*b', 'a*b', true], ['a\\*b', 'axb', false], ['a\\', 'a\\', true], ['😀?', '😀x', true],
  ] as const)('%j against %j is %s', (p, s, expected) => {
    expect(compileWildcard(p).test(s)).toBe(expected);
  });

  it('folds ASCII case when asked', () => {
    expect(compileWildcard('Ki*Y', true).test('kimchy')).toBe(true);
    expect(compileWildcard('Ki*Y').test('kimchy')).toBe(false);
  });

  it('stays linear on many stars', () => {
    const t0 = Date.now();
    expect(compileWildcard(`${'*a'.repeat(40)}*b`).test('a'.repeat(100_000))).toBe(false);
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
