import { EsError } from '../../wire/esErrors';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import { readFactBatches } from '../../../streams/factReader';
import { applyContext, evolveAsyncSearch, type AsyncSearchState, type ContextState } from '../../../streams/evolve';
import { parseAsyncId } from '../../search/asyncSearchService';
import type { Envelope } from '../../../streams';
import type { PagingServices } from '../../search';
import { liveOf } from './contextList';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The context uuid behind a scroll id, a PIT id, or a bare uuid; undefined for anything else. */
function contextIdOf(s: PagingServices, id: string): string | undefined {
  if (UUID.test(id)) return id.toLowerCase();
  for (const parse of [(x: string) => s.ids.parseScrollId(x).contextId, (x: string) => s.ids.parsePitId(x), (x: string) => parseAsyncId(x)]) {
    try {
      return parse(id);
    } catch {
      // not this kind of id
    }
  }
  return undefined;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

/**
 * `GET /_contexts/<id>` (our extension): a scroll context's or PIT's whole life from the lifecycle
 * log, folded by the same `evolve` the replay tool uses, plus its live expiry when it is open here.
 * 404 `resource_not_found_exception` when the log holds nothing for it.
 */
async function getContext(s: PagingServices, req: EsRequest): Promise<EsResponse> {
  const given = req.params.id;
  const id = contextIdOf(s, given);
  const facts: Envelope[] = [];
  if (id) {
    for await (const batch of readFactBatches(s.ctx.nc, { filterSubject: `es.v1.evt.*.${id}.>` })) facts.push(...batch);
  }
  facts.sort((a, b) => a.seq - b.seq);
  let state: ContextState | undefined;
  let async: AsyncSearchState | undefined;
  for (const f of facts) {
    if (f.type.startsWith('scroll.') || f.type.startsWith('pit.')) state = applyContext(state, f);
    else if (f.type.startsWith('asyncsearch.')) async = evolveAsyncSearch(async, f);
  }
  if (id && async) return { body: asyncContext(async, facts) };
  if (!id || !state) {
    throw new EsError(
      'resource_not_found_exception',
      404,
      `no search context [${given}] in the lifecycle log: it never existed here, or its events are older than the retention (events.retention)`,
    );
  }
  // Its live expiry is known by its owner node only (a PIT search need not log a fact).
  const live = state.status === 'open' ? (await liveOf(s, [state])).get(state.id) : undefined;
  const pins = state.status === 'open' ? await pinnedSegments(s, state) : [];
  return {
    body: {
      id: state.id,
      kind: state.kind,
      status: state.status,
      indices: state.indices,
      owner: state.owner ?? null,
      shards: state.shards,
      ...(state.slice ? { slice: state.slice } : {}),
      keep_alive: `${state.keepAliveMs}ms`,
      opened_at: iso(state.openedAt),
      last_activity_at: iso(state.lastActivityAt),
      extensions: state.extensions,
      ...(state.node ? { node: state.node } : {}),
      ...(state.status === 'open' ? { expires_at: live ? (live.expiresAt === null ? null : iso(live.expiresAt)) : null, in_use: live?.inUse ?? false } : {}),
      ...(state.status === 'open'
        ? { pinned_segments: pins, pinned_segments_count: pins.reduce((n, p) => n + p.segments.length, 0), pinned_size_in_bytes: pins.reduce((n, p) => n + p.size_in_bytes, 0) }
        : {}),
      ...(state.endedAt !== undefined ? { ended_at: iso(state.endedAt) } : {}),
      ...(state.reason ? { reason: state.reason } : {}),
      ...(state.by ? { by: state.by } : {}),
      history: facts.map((f) => ({ seq: f.seq, type: f.type, time: f.time, ...(f.correlationId ? { correlation_id: f.correlationId } : {}), data: trim(f) })),
    },
  };
}

interface PinnedCopy {
  index: string;
  shard: number;
  node: string;
  seq_no: number;
  segments: Array<{ name: string; size_in_bytes: number; live: boolean }>;
  size_in_bytes: number;
}

/** The segments every copy of the context's shards keeps for it (its pinned searcher's). */
async function pinnedSegments(s: PagingServices, st: ContextState): Promise<PinnedCopy[]> {
  const out: PinnedCopy[] = [];
  await Promise.all(
    st.pinned.map(async (p) => {
      const idx = s.cluster.getByUuid(p.indexUuid);
      if (!idx) return;
      const nodes = s.cluster.copyNodes(idx, p.n).map((c) => c.node);
      for (const node of nodes.length ? nodes : [s.ctx.node.id]) {
        type Seg = { name: string; sizeBytes: number; live: boolean };
        const r = await s.shards
          .call<{ pinned: Array<{ seqNo: number; contexts: string[]; segments: Seg[] }> }>(idx.shards[p.n].ref, 'segments', {}, { node })
          .catch(() => undefined);
        const mine = r?.pinned.find((x) => x.contexts.includes(st.id));
        if (!mine) continue;
        const segments = mine.segments.map((g) => ({ name: g.name, size_in_bytes: g.sizeBytes, live: g.live }));
        out.push({ index: idx.name, shard: p.n, node, seq_no: mine.seqNo, segments, size_in_bytes: segments.reduce((n, g) => n + g.size_in_bytes, 0) });
      }
    }),
  );
  return out.sort((a, b) => (a.index < b.index ? -1 : a.index > b.index ? 1 : a.shard - b.shard || (a.node < b.node ? -1 : 1)));
}

/** An async search's life (`GET /_contexts/<async search id>`). */
function asyncContext(a: AsyncSearchState, facts: Envelope[]): Record<string, unknown> {
  return {
    id: a.id,
    kind: 'async_search',
    es_id: a.esId,
    status: a.status,
    indices: a.indices,
    owner: a.owner ?? null,
    keep_alive: `${a.keepAliveMs}ms`,
    submitted_at: iso(a.submittedAt),
    expires_at: iso(a.expiresAt),
    ...(a.completedAt !== undefined ? { completed_at: iso(a.completedAt), completion_status: a.completion?.status } : {}),
    extensions: a.extensions,
    ...(a.node ? { node: a.node } : {}),
    ...(a.endedAt !== undefined ? { ended_at: iso(a.endedAt) } : {}),
    ...(a.by ? { by: a.by } : {}),
    history: facts.map((f) => ({ seq: f.seq, type: f.type, time: f.time, ...(f.correlationId ? { correlation_id: f.correlationId } : {}), data: trim(f) })),
  };
}

/** History entries without the bulky revival fields (pinned searchers, request text). */
function trim(f: Envelope): unknown {
  const { pinned: _p, request: _r, ...rest } = (f.data ?? {}) as Record<string, unknown>;
  return rest;
}

export function contextRoutes(r: Router, s: PagingServices): void {
  r.add('GET', '/_contexts/{id}', (req) => getContext(s, req), { kind: 'cluster', action: 'cluster:monitor/contexts/get' });
}
