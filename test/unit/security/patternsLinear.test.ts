import { indexNamesRegExp } from '../../../actors/security/permission';
import { patternsRegExp } from '../../../actors/security/privileges';

describe('role patterns match in linear time (issue 10 item 10)', () => {
  it('matches a role\'s /(a+)+b/ index pattern against a long name at once', () => {
    const names = indexNamesRegExp(['/(a+)+b/']);
    const t0 = Date.now();
    expect(names.test('a'.repeat(200))).toBe(false);
    expect(names.test(`${'a'.repeat(200)}b`)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(500);
  });

  it('reads index-name patterns as ES Automatons.patterns does', () => {
    const names = indexNamesRegExp(['logs-*', 'm?trics', '/~(([.]|ilm-history-).*)/']);
    expect(['logs-1', 'metrics', 'x'].map((n) => names.test(n))).toEqual([true, true, true]);
    expect(indexNamesRegExp(['/~(([.]|ilm-history-).*)/']).test('.security')).toBe(false);
    expect(indexNamesRegExp(['/~(([.]|ilm-history-).*)/']).test('ilm-history-1')).toBe(false);
    expect(indexNamesRegExp(['a\\*']).test('a*')).toBe(true);
    expect(indexNamesRegExp([]).test('a')).toBe(false);
  });

  it('matches a user\'s action pattern of many stars at once', () => {
    const p = patternsRegExp([`indices:${'*a'.repeat(15)}*b`]);
    const t0 = Date.now();
    expect(p.test(`indices:${'a'.repeat(60)}`)).toBe(false);
    expect(p.test(`indices:${'a'.repeat(60)}b`)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(500);
    expect(patternsRegExp(['indices:data/read/*', 'cluster:monitor/main']).test('cluster:monitor/main')).toBe(true);
    expect(patternsRegExp(['indices:data/read/*']).test('indices:data/write/index')).toBe(false);
  });
});
