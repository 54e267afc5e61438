import { EsError, illegalArgument } from '../../wire/esErrors';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { Router } from '../router';
import type { PagingServices as SearchServices } from '../../search';
import { resolveOptions } from '../../search';
import type { IndexState } from '../../cluster';
import type { ShardRef } from '../../shard/shardActor';
import { catResponse, type Column, type Row } from '../views/catTable';
import { clusterNodes } from '../views/nodes';
import { visibleIndices } from '../views/visible';

/**
 * Segment administration: `_flush` (write buffers to segments and commit), `_forcemerge`
 * (`max_num_segments`, `only_expunge_deletes`, `flush`), `_cat/segments`. Each acts on every copy
 * of every shard (copies on other nodes through their copy-addressed shard subjects).
 */

type Op = 'flush' | 'forcemerge' | 'segments';

/**
 * How long a flush or force merge may take on a copy. ES's `_forcemerge` answers once the merges
 * are done, however long; the shard client's default wait (15 s, asked again once) answered a
 * 2 GB force merge with a shard failure after 30 s while it went on, and sent it twice.
 */
const LONG_OP_MS: Partial<Record<Op, number>> = { flush: 3_600_000, forcemerge: 6 * 3_600_000 };

/** Every copy of a shard and where it lives (the primary first). */
function copies(s: SearchServices, idx: IndexState, n: number): Array<{ node: string; primary: boolean }> {
  const c = s.cluster.copyNodes(idx, n);
  return c.length ? c : [{ node: s.ctx.node.id, primary: true }];
}

async function onEveryCopy<T>(s: SearchServices, indices: IndexState[], op: Op, body: unknown): Promise<Array<{ idx: IndexState; n: number; node: string; primary: boolean; result?: T; error?: unknown }>> {
  const jobs = indices.flatMap((idx) =>
    idx.shards.flatMap((sh, n) =>
      copies(s, idx, n).map(async (c) => {
        try {
          const result = await s.shards.call<T>(sh.ref as ShardRef, op, body, { node: c.node, ...(LONG_OP_MS[op] ? { timeoutMs: LONG_OP_MS[op] } : {}) });
          return { idx, n, ...c, result };
        } catch (error) {
          return { idx, n, ...c, error };
        }
      }),
    ),
  );
  return Promise.all(jobs);
}

function shardsSummary(indices: IndexState[], res: Array<{ error?: unknown; idx: IndexState; n: number }>): Record<string, unknown> {
  const total = indices.reduce((a, i) => a + i.settings.numberOfShards * (1 + i.settings.numberOfReplicas), 0);
  const failed = res.filter((r) => r.error !== undefined);
  return {
    total,
    successful: res.length - failed.length,
    failed: failed.length,
    ...(failed.length
      ? {
        failures: failed.map((f) => {
          const e = f.error as EsError;
          return { index: f.idx.name, shard: f.n, status: e instanceof EsError && e.status >= 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_REQUEST', reason: { type: e instanceof EsError ? e.type : 'exception', reason: (e as Error).message } };
        }),
      }
      : {}),
  };
}

const bool = (v: string | undefined, name: string, dflt: boolean): boolean => {
  if (v === undefined) return dflt;
  if (v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw illegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`);
  void name;
};

const SEGMENTS: Column[] = [
  { name: 'index', aliases: ['i', 'idx'], desc: 'index name' },
  { name: 'shard', aliases: ['s', 'sh'], desc: 'shard name', align: 'right', kind: 'number' },
  { name: 'prirep', aliases: ['p', 'pr', 'primaryOrReplica'], desc: 'primary or replica' },
  { name: 'ip', desc: 'ip of node where it lives' },
  { name: 'id', desc: 'unique id of node where it lives', default: false },
  { name: 'segment', aliases: ['seg'], desc: 'segment name' },
  { name: 'generation', aliases: ['g', 'gen'], desc: 'segment generation', align: 'right', kind: 'number' },
  { name: 'docs.count', aliases: ['dc', 'docsCount'], desc: 'number of docs in segment', align: 'right', kind: 'number' },
  { name: 'docs.deleted', aliases: ['dd', 'docsDeleted'], desc: 'number of deleted docs in segment', align: 'right', kind: 'number' },
  { name: 'size', aliases: ['si'], desc: 'segment size in bytes', align: 'right', kind: 'bytes' },
  { name: 'size.memory', aliases: ['sm', 'sizeMemory'], desc: 'segment memory in bytes', align: 'right', kind: 'bytes' },
  { name: 'committed', aliases: ['ic', 'isCommitted'], desc: 'is segment committed' },
  { name: 'searchable', aliases: ['is', 'isSearchable'], desc: 'is segment searched' },
  { name: 'version', aliases: ['v', 'ver'], desc: 'version' },
  { name: 'compound', aliases: ['ico', 'isCompound'], desc: 'is segment compound' },
];

interface SegmentRow {
  name: string;
  generation: number;
  docs: number;
  deleted: number;
  sizeBytes: number;
  memoryBytes: number;
  committed: boolean;
  searchable: boolean;
}

async function catSegments(s: SearchServices, req: EsRequest): Promise<EsResponse> {
  const indices = visibleIndices(s, req, 'indices:monitor/segments', s.cluster.resolve(req.params.index, { ...resolveOptions(req), expandWildcards: 'all' }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
  const nodes = new Map(clusterNodes(s).map((n) => [n.id, n]));
  const res = await onEveryCopy<{ segments: SegmentRow[] }>(s, indices, 'segments', {});
  const rows: Row[] = [];
  for (const r of res.sort((a, b) => (a.idx.name < b.idx.name ? -1 : a.idx.name > b.idx.name ? 1 : a.n - b.n || Number(b.primary) - Number(a.primary)))) {
    const node = nodes.get(r.node);
    for (const seg of r.result?.segments ?? []) {
      rows.push({
        index: r.idx.name, shard: r.n, prirep: r.primary ? 'p' : 'r', ip: node?.ip ?? null, id: r.node,
        segment: seg.name, generation: seg.generation, 'docs.count': seg.docs, 'docs.deleted': seg.deleted,
        size: seg.sizeBytes, 'size.memory': seg.memoryBytes, committed: seg.committed, searchable: seg.searchable,
        version: '1', compound: false,
      });
    }
  }
  return catResponse(req, SEGMENTS, rows);
}

export function segmentRoutes(r: Router, s: SearchServices): void {
  const named = (req: EsRequest) => [req.params.index];
  const all = () => ['*'];

  const flush = async (req: EsRequest): Promise<EsResponse> => {
    const indices = s.cluster.resolve(req.params.index, resolveOptions(req));
    const res = await onEveryCopy(s, indices, 'flush', {});
    return { body: { _shards: shardsSummary(indices, res) } };
  };
  r.add(['POST', 'GET'], '/_flush', flush, { kind: 'indices', action: 'indices:admin/flush', indices: all });
  r.add(['POST', 'GET'], '/{index}/_flush', flush, { kind: 'indices', action: 'indices:admin/flush', indices: named });

  const forceMerge = async (req: EsRequest): Promise<EsResponse> => {
    const q = req.query;
    const only = bool(q.only_expunge_deletes, 'only_expunge_deletes', false);
    let max: number | undefined;
    if (q.max_num_segments !== undefined) {
      max = Number(q.max_num_segments);
      if (!Number.isInteger(max)) throw illegalArgument(`Failed to parse int parameter [max_num_segments] with value [${q.max_num_segments}]`);
    }
    if (only && max !== undefined && max !== -1) {
      throw new EsError('action_request_validation_exception', 400, 'Validation Failed: 1: cannot set only_expunge_deletes and max_num_segments at the same time, those two parameters are mutually exclusive;');
    }
    const flushFirst = bool(q.flush, 'flush', true);
    const indices = s.cluster.resolve(req.params.index, resolveOptions(req));
    const body = { ...(max !== undefined && max > 0 ? { maxNumSegments: max } : {}), onlyExpungeDeletes: only, flush: flushFirst };
    const run = onEveryCopy(s, indices, 'forcemerge', body);
    if (q.wait_for_completion === 'false') {
      void run;
      return { body: { task: `${s.ctx.node.id}:forcemerge-${Date.now()}` } };
    }
    const res = await run;
    return { body: { _shards: shardsSummary(indices, res) } };
  };
  r.add('POST', '/_forcemerge', forceMerge, { kind: 'indices', action: 'indices:admin/forcemerge', indices: all });
  r.add('POST', '/{index}/_forcemerge', forceMerge, { kind: 'indices', action: 'indices:admin/forcemerge', indices: named });

  const monitor = { kind: 'cluster' as const, action: 'cluster:monitor/state' };
  r.add('GET', '/_cat/segments', (req) => catSegments(s, req), monitor);
  r.add('GET', '/_cat/segments/{index}', (req) => catSegments(s, req), monitor);
}
