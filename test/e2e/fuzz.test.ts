/**
 * A seeded sample of the bad-input fuzz (scripts/fuzz.ts runs ≥ 10,000): every generator —
 * malformed JSON, wrong types for every paging field, deep nesting, huge numbers, long strings,
 * invalid UTF-8, bad NDJSON, forged scroll/PIT ids, junk Authorization, compressed bodies and
 * bombs, raw-socket garbage, the probes of issue 21 (scripts/fuzzEdgeCases.ts) — against a node with
 * security on. No answer may be a 5xx, none may hang, each probe gets the status ES gives it, every
 * 4xx carries ES's error body, and the node must still answer afterwards.
 */
import { setupFixtures } from '../../scripts/fuzzFixtures';
import { formatReport, runFuzz } from '../../scripts/fuzzRunner';
import { ELASTIC_PASSWORD, startTestNode, type TestNode } from '../support/node';

jest.setTimeout(60_000);

let t: TestNode;
const auth = `Basic ${Buffer.from(`elastic:${ELASTIC_PASSWORD}`).toString('base64')}`;

beforeAll(async () => {
  t = await startTestNode({ security: true });
});
afterAll(() => t.stop());

it('answers 600 seeded bad requests without a 5xx or a hang, and keeps serving', async () => {
  const fixtures = await setupFixtures(t.url, auth);
  const report = await runFuzz({ url: t.url, seed: 2026, requests: 600, concurrency: 4, timeoutMs: 10_000, maxSeconds: 45, fixtures });
  const text = formatReport(report);
  expect({ sent: report.sent, fiveXX: report.fiveXX, hangs: report.hangs, unexpected: report.unexpected, unshaped: report.unshaped, report: report.findings.length ? text : 'clean' }).toEqual({
    sent: 600,
    fiveXX: 0,
    hangs: 0,
    unexpected: 0,
    unshaped: 0,
    report: 'clean',
  });
  // every generator took part
  expect(Object.keys(report.byLabel).sort()).toEqual([
    'admin', 'auth', 'bulk', 'compressed', 'deep', 'docs', 'edges', 'ids', 'json.malformed', 'numbers', 'paging.body', 'paging.url', 'random', 'raw', 'security', 'strings', 'utf8',
  ]);
  const after = await fetch(`${t.url}/fz1/_count`, { headers: { authorization: auth } });
  expect([after.status, ((await after.json()) as { count: number }).count]).toEqual([200, expect.any(Number)]);
});
