/**
 * The small seeded version of `scripts/segmentsScale.ts` (issue 19's "Must show" at scale, whose
 * full run loads 1.25 GB into a 512 MB heap): a node in a child process with a 192 MB heap, 4,000
 * docs of ~1 KB, 100 docs updated 40 times each, a kill -9 during a load. Every check of the script
 * must print ok.
 */
import { runCli } from '../../support/cli';

jest.setTimeout(180_000);

it('segmentsScale, small and seeded: every check ok', async () => {
  const r = await runCli('segmentsScale', [
    '--heap-mb', '192', '--docs', '4000', '--updates', '4000', '--update-docs', '100', '--deletes-retention', '0s',
    '--settle', '3', '--kill-within', '2', '--batch', '500', '--seed', '19',
  ], {}, 170_000);
  const checks = r.stdout.split('\n').filter((l) => /^(ok|FAILED) /.test(l));
  expect(checks.filter((l) => l.startsWith('FAILED'))).toEqual([]);
  expect(checks.length).toBeGreaterThanOrEqual(13);
  expect(r.stdout).toMatch(/kill -9: no acknowledged doc lost.*: [\d,]+ docs back/);
  expect(r.code).toBe(0);
});
