/**
 * Issue 13: the pure parts of update (UpdateRequest parsing and validation, XContentHelper.update
 * merge and noop detection, the refused-script error), of reindex / delete-by-query request
 * parsing, and of the task registry.
 */
import { parse as losslessParse, stringify as losslessStringify } from 'lossless-json';
import { mergeSource, parseUpdateBody, scriptRefused, validateUpdate } from '../../../../actors/edge/routes/update';
import { parseRequestsPerSecond, parseSlices } from '../../../../actors/edge/reindexRequest';
import { ByScrollStatus, mergedStatus } from '../../../../actors/edge/bulkByScroll';
import { TaskRegistry, parseTaskId } from '../../../../actors/edge/taskRegistry';
import { EsError, toErrorBody } from '../../../../actors/wire/esErrors';

function esError(fn: () => unknown): EsError {
  try {
    fn();
  } catch (e) {
    if (e instanceof EsError) return e;
    throw e;
  }
  throw new Error('expected an EsError');
}

const merge = (source: string, doc: string, detectNoop = true) => {
  const s = losslessParse(source) as Record<string, unknown>;
  const changed = mergeSource(s, losslessParse(doc) as Record<string, unknown>, detectNoop);
  return { changed, source: losslessStringify(s) };
};

describe('update merge (XContentHelper.update)', () => {
  it('merges objects recursively and replaces anything else, keeping number spelling', () => {
    expect(merge('{"a":{"b":1,"c":[1,2]},"d":1.50}', '{"a":{"c":[3]},"e":12345678901234567890}')).toEqual({
      changed: true,
      source: '{"a":{"b":1,"c":[3]},"d":1.50,"e":12345678901234567890}',
    });
  });

  it('detects a noop when every given value equals what is there', () => {
    expect(merge('{"a":{"b":"x","c":[1,{"d":true}]},"n":2}', '{"a":{"c":[1,{"d":true}]},"n":2}').changed).toBe(false);
    expect(merge('{"a":1}', '{}').changed).toBe(false);
  });

  it('tells 1 from 1.0 (ES compares Integer and Double boxes), but not 1.0 from 1.00', () => {
    expect(merge('{"a":1}', '{"a":1.0}').changed).toBe(true);
    expect(merge('{"a":1.0}', '{"a":1.00}').changed).toBe(false);
  });

  it('counts any given key as a change without detect_noop', () => {
    expect(merge('{"a":1}', '{"a":1}', false).changed).toBe(true);
  });

  it('replaces an object by a scalar and a scalar by an object', () => {
    expect(merge('{"a":{"b":1},"c":1}', '{"a":2,"c":{"d":1}}').source).toBe('{"a":2,"c":{"d":1}}');
  });
});

describe('update body', () => {
  it('reads doc, upsert, flags, _source and compare-and-set numbers', () => {
    const spec = parseUpdateBody('{"doc":{"a":1},"upsert":{"b":2},"doc_as_upsert":"true","detect_noop":false,"_source":["a"],"if_seq_no":3,"if_primary_term":1}');
    expect(spec).toMatchObject({ docAsUpsert: true, detectNoop: false, ifSeqNo: 3, ifPrimaryTerm: 1, fetchSource: { fetch: true, includes: ['a'], excludes: [] } });
    expect(losslessStringify(spec.doc)).toBe('{"a":1}');
  });

  it('refuses an unknown field as ObjectParser does, with a suggestion', () => {
    const e = esError(() => parseUpdateBody('{"docs":{}}'));
    expect([e.type, e.message]).toEqual(['x_content_parse_exception', '[1:2] [UpdateRequest] unknown field [docs] did you mean [doc]?']);
  });

  it('refuses a doc that is not an object', () => {
    expect(esError(() => parseUpdateBody('{"doc":5}')).message).toBe("[1:8] [UpdateRequest] doc doesn't support values of type: VALUE_NUMBER");
  });

  it('validates as UpdateRequest.validate, every message at once', () => {
    expect(validateUpdate(parseUpdateBody('{}'))).toEqual(['script or doc is missing']);
    expect(validateUpdate(parseUpdateBody('{"doc":{},"script":"x"}'))).toEqual(["can't provide both script and doc"]);
    expect(validateUpdate(parseUpdateBody('{"doc_as_upsert":true,"script":"x"}'))).toEqual(['doc must be specified if doc_as_upsert is enabled']);
    const cas = { ...parseUpdateBody('{"doc":{},"doc_as_upsert":true,"upsert":{}}'), ifSeqNo: 1, ifPrimaryTerm: 1, retryOnConflict: 2 };
    expect(validateUpdate(cas)).toEqual([
      'compare and write operations can not be retried',
      'compare and write operations can not be used with upsert',
      "upsert requests don't support `if_seq_no` and `if_primary_term`",
    ]);
    expect(validateUpdate({ ...parseUpdateBody('{"doc":{}}'), ifSeqNo: 1 })).toEqual(['ifSeqNo is set, but primary term is [0]']);
    expect(validateUpdate({ ...parseUpdateBody('{"doc":{}}'), ifPrimaryTerm: 1 })).toEqual(['ifSeqNo is unassigned, but primary term is [1]']);
  });

  it('refuses a script the way a node without scripting does', () => {
    expect(toErrorBody(scriptRefused({ source: 'ctx._source.n++' }))).toEqual({
      error: {
        root_cause: [{ type: 'illegal_argument_exception', reason: 'failed to execute script' }],
        type: 'illegal_argument_exception',
        reason: 'failed to execute script',
        caused_by: { type: 'illegal_argument_exception', reason: 'cannot execute [inline] scripts' },
      },
      status: 400,
    });
    expect(scriptRefused({ source: 'x', lang: 'groovy' }).extra.causedBy!.message).toBe('script_lang not supported [groovy]');
    expect(scriptRefused({ id: 'stored-1' }).extra.causedBy!.message).toBe('unable to find script [stored-1] in cluster state');
  });
});

describe('reindex parameters', () => {
  it('reads slices as a positive integer or auto', () => {
    expect([parseSlices(undefined), parseSlices('3'), parseSlices('auto')]).toEqual([1, 3, 'auto']);
    for (const bad of ['0', 'junk', '-1']) {
      expect(esError(() => parseSlices(bad)).message).toBe(`[slices] must be a positive integer or the string "auto", but was [${bad}]`);
    }
  });

  it('reads requests_per_second as a positive float, -1 meaning unthrottled', () => {
    expect([parseRequestsPerSecond(undefined), parseRequestsPerSecond('-1'), parseRequestsPerSecond('0.5')]).toEqual([Infinity, Infinity, 0.5]);
    for (const bad of ['', '0', '-12', 'unlimited']) {
      expect(esError(() => parseRequestsPerSecond(bad)).message).toBe('[requests_per_second] must be a float greater than 0. Use -1 to disable throttling.');
    }
  });

  it('merges finished slices into the leader status, null for the running ones', () => {
    const a = new ByScrollStatus(Infinity, 0);
    Object.assign(a, { total: 3, created: 2, updated: 1, batches: 1 });
    const merged = mergedStatus([a, null], undefined);
    expect(merged).toMatchObject({ total: 3, created: 2, updated: 1, batches: 1, requests_per_second: -1 });
    expect(merged.slices).toEqual([expect.objectContaining({ slice_id: 0, total: 3 }), null]);
  });

  it('leaves created and updated out of a delete-by-query response', () => {
    const st = new ByScrollStatus(Infinity).toJSON({ created: false, updated: false });
    expect(Object.keys(st)).toEqual(['total', 'deleted', 'batches', 'version_conflicts', 'noops', 'retries', 'throttled_millis', 'requests_per_second', 'throttled_until_millis']);
  });
});

describe('task registry', () => {
  it('numbers tasks per node and shows them as ES TaskInfo', () => {
    const reg = new TaskRegistry('node1');
    const t = reg.start('indices:data/write/reindex', 'reindex from [a] to [b]', () => ({ total: 1 }), { cancellable: true, headers: { 'X-Opaque-Id': 'o' } });
    expect(t.taskId).toBe('node1:1');
    expect(t.info(true)).toMatchObject({
      node: 'node1', id: 1, type: 'transport', action: 'indices:data/write/reindex', status: { total: 1 },
      description: 'reindex from [a] to [b]', cancellable: true, cancelled: false, headers: { 'X-Opaque-Id': 'o' },
    });
    expect(t.info(false)).not.toHaveProperty('status');
    expect(t.info(false)).not.toHaveProperty('description');
  });

  it('keeps the result of a stored task after it finished, and forgets one that is not stored', async () => {
    const reg = new TaskRegistry('n');
    const a = reg.start('x', 'd', () => ({}));
    const b = reg.start('x', 'd', () => ({}));
    reg.finish(a, { response: { ok: 1 } }, true);
    reg.finish(b, { response: { ok: 2 } }, false);
    await a.done;
    expect(reg.lookup('n:1')).toEqual({ stored: { completed: true, task: expect.objectContaining({ id: 1 }), response: { ok: 1 } } });
    expect(reg.lookup('n:2')).toEqual({ stored: undefined });
    expect(reg.list()).toEqual([]);
  });

  it('stores an error without root_cause, as ES stores task errors', () => {
    const reg = new TaskRegistry('n');
    const t = reg.start('x', 'd', () => ({}));
    reg.finish(t, { error: new EsError('index_not_found_exception', 404, 'no such index [a]') }, true);
    expect(reg.lookup('n:1').stored!.error).toEqual({ type: 'index_not_found_exception', reason: 'no such index [a]' });
  });

  it('cancels a task and its children', () => {
    const reg = new TaskRegistry('n');
    const seen: string[] = [];
    const parent = reg.start('x', 'd', () => ({}), { cancellable: true, onCancel: (r) => seen.push(`p:${r}`) });
    const child = reg.start('x', 'd', () => ({}), { cancellable: true, parent, onCancel: (r) => seen.push(`c:${r}`) });
    reg.cancel(parent);
    expect(seen).toEqual(['p:by user request', 'c:by user request']);
    expect(child.info(true)).toMatchObject({ cancelled: true, parent_task_id: 'n:1' });
  });

  it.each(['x', 'a:b', 'a:1:2', ':1'])('refuses the malformed task id %s', (id) => {
    expect(esError(() => parseTaskId(id)).message).toBe(`malformed task id ${id}`);
  });
});
