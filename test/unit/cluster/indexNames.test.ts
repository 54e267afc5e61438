import { resolveExpression } from '../../../actors/cluster';

describe('index expressions', () => {
  it('resolves wildcards, lists and exclusions', () => {
    const names = ['logs-1', 'logs-2', 'metrics', '.hidden'];
    expect(resolveExpression('logs-*', names)).toEqual(['logs-1', 'logs-2']);
    expect(resolveExpression('*,-logs-2', names)).toEqual(['logs-1', 'metrics']);
    expect(resolveExpression('l*s-?', names, { ignoreUnavailable: true })).toEqual([]);
    expect(resolveExpression('.h*', names)).toEqual(['.hidden']);
  });

  it('matches a pattern of many stars against a long name at once (no backtracking RegExp)', () => {
    const t0 = Date.now();
    expect(resolveExpression(`${'*a'.repeat(9)}*b`, ['a'.repeat(80)])).toEqual([]);
    expect(resolveExpression(`${'*a'.repeat(9)}*`, ['a'.repeat(80)])).toEqual(['a'.repeat(80)]);
    expect(Date.now() - t0).toBeLessThan(500);
  });
});
