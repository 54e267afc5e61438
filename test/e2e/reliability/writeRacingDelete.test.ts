/**
 * A write racing the deletion of its index (found by the fuzz, seed 3: a document write that
 * created an index while another request deleted it got no answer for a minute, waiting for a copy
 * that would never start). Now it answers at once, as ES does (TransportReplicationAction resolves the
 * index again on every cluster state change): ES's 404 `index_not_found_exception`, or the write
 * done when it came first. Rounds of concurrent auto-creating writes and a delete; every answer
 * within 5 s.
 */
import { startTestNode, type TestNode } from '../../support/node';

jest.setTimeout(120_000);
let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(() => t.stop());

const send = async (method: string, path: string, body?: string, type = 'application/json') => {
  const start = Date.now();
  try {
    const res = await fetch(`${t.url}${path}`, { method, headers: body ? { 'content-type': type } : {}, body, signal: AbortSignal.timeout(5_000) });
    const json = (await res.json()) as { error?: { type: string } };
    return { status: res.status, type: json.error?.type, ms: Date.now() - start };
  } catch (e) {
    return { status: 0, type: (e as Error).message, ms: Date.now() - start };
  }
};

it('answers every write racing the deletion of its index within 5 s: done, ES’s 400 for a bad document, or ES’s 404', async () => {
  const seen = new Set<string>();
  for (let round = 0; round < 20; round++) {
    const index = `race${round}`;
    const answers = await Promise.all([
      send('POST', `/${index}/_doc`, '{"n":1}'),
      send('POST', `/${index}/_doc`, '{"o.x":"-1","_source":"*"}'),
      send('POST', `/${index}/_bulk`, `{"index":{}}\n{"n":2}\n`, 'application/x-ndjson'),
      send('DELETE', `/${index}`),
    ]);
    for (const a of answers.slice(0, 3)) {
      seen.add(`${a.status} ${a.type ?? ''}`.trim());
      expect([index, a.status === 0 ? a.type : 'answered']).toEqual([index, 'answered']);
      expect([200, 201, 400, 404]).toContain(a.status);
      if (a.status === 404) expect(a.type).toBe('index_not_found_exception');
    }
  }
  console.log(`answers: ${[...seen].join(', ')}`);
});
