/**
 * Issue 10 item 21: how ES's BulkRequestParser reads the end of a `_bulk` body. An action line that
 * ends the body has no source line: ES drops it (no item, no error, no index created), so the
 * request runs the items before it, or fails validation when nothing is left.
 */
import { startTestNode, type TestNode } from '../../support/node';
import { raw } from './helpers';

let t: TestNode;
const line = (o: unknown) => `${JSON.stringify(o)}\n`;

beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t?.stop();
});

describe('_bulk ending with an action line and no source', () => {
  it('runs the complete items and drops the trailing action', async () => {
    const body = line({ index: { _index: 'bk', _id: '1' } }) + line({ v: 1 }) + line({ index: { _index: 'bk', _id: '2' } });
    const r = await raw(t, 'POST', '/_bulk?refresh=true', body);
    expect(r.status).toBe(200);
    expect(r.json.errors).toBe(false);
    expect(r.json.items).toHaveLength(1);
    expect(r.json.items[0].index).toMatchObject({ _id: '1', status: 201, result: 'created' });
    expect((await raw(t, 'GET', '/bk/_doc/2')).status).toBe(404);
    expect((await t.es.count({ index: 'bk' })).count).toBe(1);
  });

  it('keeps a delete before the dropped action', async () => {
    const body = line({ delete: { _index: 'bk', _id: '1' } }) + line({ create: { _index: 'bk', _id: '3' } });
    const r = await raw(t, 'POST', '/_bulk', body);
    expect(r.status).toBe(200);
    expect(r.json.items).toEqual([{ delete: expect.objectContaining({ _id: '1', status: 200, result: 'deleted' }) }]);
  });

  it('answers ES\'s validation error when the only action has no source', async () => {
    const r = await raw(t, 'POST', '/_bulk', line({ index: { _index: 'never_made', _id: '1' } }));
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'action_request_validation_exception', reason: 'Validation Failed: 1: no requests added;' });
    expect(await t.es.indices.exists({ index: 'never_made' })).toBe(false);
  });

  it('drops the trailing action of an index-scoped bulk too', async () => {
    const r = await raw(t, 'POST', '/bk/_bulk', line({ index: { _id: '4' } }) + line({ v: 4 }) + line({ update: { _id: '4' } }));
    expect(r.status).toBe(200);
    expect(r.json.items.map((i: Record<string, unknown>) => Object.keys(i)[0])).toEqual(['index']);
  });
});

describe('_bulk source lines', () => {
  it('takes a blank line after an action as its (empty) source: the item fails, not the request', async () => {
    const body = line({ index: { _index: 'bk', _id: '5' } }) + '\n' + line({ index: { _index: 'bk', _id: '6' } }) + line({ v: 6 });
    const r = await raw(t, 'POST', '/_bulk', body);
    expect(r.status).toBe(200);
    expect(r.json.errors).toBe(true);
    expect(r.json.items).toHaveLength(2);
    expect(r.json.items[0].index.status).toBe(400);
    expect(r.json.items[1].index).toMatchObject({ _id: '6', status: 201 });
  });

  it('still needs the body to end with a newline', async () => {
    const r = await raw(t, 'POST', '/_bulk', `${JSON.stringify({ index: { _index: 'bk', _id: '7' } })}\n{"v":7}`);
    expect(r.status).toBe(400);
    expect(r.json.error.reason).toBe('The bulk request must be terminated by a newline [\\n]');
  });
});
