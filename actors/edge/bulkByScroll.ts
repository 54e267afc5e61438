import { stringify } from '../wire/json';
import { filterSource } from '../shard/engine';
import { parseTimeValue } from '../wire/timeValue';
import type { ContextRecord } from '../contexts';
import { indexNames, parseSearchCall, startScroll, type PagingServices, type SearchCall } from '../search';
import { scrollPage } from '../search';
import { executeBulk, type BulkItemResult, type BulkOp } from './routes/bulk';
import { refreshIndices } from './routes/indices';
import type { SearchOutcome, ShardTarget } from '../search/coordinator';
import type { Authentication } from '../wire/security';

/** Where reindex writes and how (`dest`). */
export interface ReindexDest {
  index: string;
  opType: 'index' | 'create';
  /** `keep` (the source hit's routing), `discard`, or `=<value>`. */
  routing: { mode: 'keep' } | { mode: 'discard' } | { mode: 'set'; value: string };
}

/** A reindex or delete-by-query, validated. */
export interface ByScrollJob {
  kind: 'reindex' | 'delete_by_query' | 'update_by_query';
  /** The source search: index expression, URL-style params (q, routing…), body (query, _source, sort, size). */
  search: { index?: string; params: Record<string, string>; body: Record<string, unknown> };
  dest?: ReindexDest;
  maxDocs?: number;
  abortOnConflict: boolean;
  /** Scroll keep-alive (`scroll`, default 5m). */
  scroll: string;
  /** requests_per_second; Infinity = unthrottled (-1). */
  rps: number;
  /** A number, or `auto` (one per shard of the source index with the fewest shards). */
  slices: number | 'auto';
  refresh: boolean;
  auth?: Authentication;
  opaqueId?: string;
}

/** One worker's progress (BulkByScrollTask.Status); a sliced request's leader merges its slices'. */
export class ByScrollStatus {
  total = 0;
  updated = 0;
  created = 0;
  deleted = 0;
  batches = 0;
  versionConflicts = 0;
  noops = 0;
  bulkRetries = 0;
  searchRetries = 0;
  throttledMs = 0;
  throttledUntil = 0;
  canceled?: string;
  constructor(public rps: number, readonly sliceId?: number) {}

  get processed(): number {
    return this.created + this.updated + this.deleted;
  }

  /** ES key order; `created`/`updated` are left out of delete-by-query's REST response. */
  toJSON(opts: { created?: boolean; updated?: boolean } = {}): Record<string, unknown> {
    return {
      ...(this.sliceId !== undefined ? { slice_id: this.sliceId } : {}),
      total: this.total,
      ...(opts.updated === false ? {} : { updated: this.updated }),
      ...(opts.created === false ? {} : { created: this.created }),
      deleted: this.deleted,
      batches: this.batches,
      version_conflicts: this.versionConflicts,
      noops: this.noops,
      retries: { bulk: this.bulkRetries, search: this.searchRetries },
      throttled_millis: this.throttledMs,
      requests_per_second: rpsOut(this.rps),
      ...(this.canceled !== undefined ? { canceled: this.canceled } : {}),
      throttled_until_millis: Math.max(0, this.throttledUntil ? this.throttledUntil - Date.now() : 0),
    };
  }
}

const rpsOut = (rps: number) => (rps === Infinity ? -1 : rps);

/**
 * A leader's status (BulkByScrollTask.Status of slice statuses): sums of the slices that have
 * finished, `null` for those still running, as ES reports a sliced task's parent.
 */
export function mergedStatus(slices: Array<ByScrollStatus | null>, canceled: string | undefined, opts: { created?: boolean; updated?: boolean } = {}): Record<string, unknown> {
  const done = slices.filter((x): x is ByScrollStatus => x !== null);
  const sum = (f: (x: ByScrollStatus) => number) => done.reduce((a, x) => a + f(x), 0);
  const rps = done.some((x) => x.rps === Infinity) ? Infinity : sum((x) => x.rps);
  const until = done.length ? Math.min(...done.map((x) => x.throttledUntil || Infinity)) : Infinity;
  return {
    total: sum((x) => x.total),
    ...(opts.updated === false ? {} : { updated: sum((x) => x.updated) }),
    ...(opts.created === false ? {} : { created: sum((x) => x.created) }),
    deleted: sum((x) => x.deleted),
    batches: sum((x) => x.batches),
    version_conflicts: sum((x) => x.versionConflicts),
    noops: sum((x) => x.noops),
    retries: { bulk: sum((x) => x.bulkRetries), search: sum((x) => x.searchRetries) },
    throttled_millis: sum((x) => x.throttledMs),
    requests_per_second: done.length ? rpsOut(rps) : 0,
    ...(canceled !== undefined ? { canceled } : {}),
    throttled_until_millis: until === Infinity ? 0 : Math.max(0, until - Date.now()),
    slices: slices.map((x) => (x ? x.toJSON(opts) : null)),
  };
}

/** A worker's outcome: its status and failures (bulk failures, then search failures). */
export interface SliceResult {
  status: ByScrollStatus;
  failures: Array<Record<string, unknown>>;
  tookMs: number;
}

/** Hooks the task layer gives a worker: cancellation and the live requests_per_second. */
export interface WorkerControl {
  cancelled(): string | undefined;
  /** Wakes a throttled worker early (cancel, rethrottle). */
  wake?: () => void;
}

const sleep = (ms: number, control: { wake?: () => void }) =>
  new Promise<void>((resolve) => {
    const t = setTimeout(resolve, Math.min(ms, 2_147_483_647)); // setTimeout's largest delay
    control.wake = () => {
      clearTimeout(t);
      resolve();
    };
  });

/**
 * One worker of a reindex or delete-by-query (AbstractAsyncBulkByScrollAction): opens a scroll
 * through the node's own scroll machinery (the same context registry and lifecycle facts as any
 * `_search?scroll`), turns each page into bulk ops written through the normal bulk path, counts
 * outcomes, stops on a failure (a version conflict only with `conflicts: abort`), at `max_docs`,
 * or when cancelled, waits between batches for `requests_per_second`, and clears its scroll.
 */
export async function runWorker(
  s: PagingServices,
  job: ByScrollJob,
  st: ByScrollStatus,
  control: WorkerControl,
  slice?: { id: number; max: number },
  maxDocs = job.maxDocs,
): Promise<SliceResult> {
  const started = Date.now();
  const failures: Array<Record<string, unknown>> = [];
  // Delete-by-query deletes each hit only if it is still the version the scroll saw (ES's
  // compare-and-set): the hits must carry `_seq_no` / `_primary_term`. In the body, so a scroll
  // revived from its opened fact asks for them too.
  const body = { ...job.search.body, ...(job.kind !== 'reindex' ? { seq_no_primary_term: true } : {}), ...(slice ? { slice } : {}) };
  const call: SearchCall = {
    params: job.search.index === undefined ? {} : { index: job.search.index },
    query: { ...job.search.params, scroll: job.scroll },
    body,
    text: stringify(body),
    auth: job.auth,
    opaqueId: job.opaqueId,
    internal: true,
  };
  const sr = parseSearchCall(call);
  const keepAliveMs = parseTimeValue(job.scroll, 'scroll');
  const first = await startScroll(s, call, sr);
  let rec: ContextRecord | undefined = first.rec;
  let page: { out: SearchOutcome; targets: ShardTarget[]; scrollId?: string } = first;
  st.total = maxDocs === undefined ? first.total.value : Math.min(first.total.value, maxDocs);
  const touched = new Set<string>();
  try {
    for (;;) {
      if ((st.canceled = control.cancelled()) !== undefined) break;
      let hits = page.out.hits;
      if (!hits.length) break;
      if (maxDocs !== undefined) hits = hits.slice(0, Math.max(0, maxDocs - st.processed));
      const nameOf = indexNames(page.targets);
      const shardOf = new Map(page.targets.map((t) => [t.shardIndex, t.ref.n]));
      const ops: BulkOp[] = hits.map((h) => {
        const raw = (h as unknown as { source?: string }).source;
        // source._source filtering applies to what is copied (reindex's `_source` includes/excludes).
        const src = raw !== undefined && sr.source ? filterSource(raw, sr.source) : raw;
        if (job.kind === 'delete_by_query') {
          const index = nameOf(h.shardIndex);
          touched.add(index);
          // The hit's shard is known: the delete goes there whatever routing put the doc on it, and
          // only if the doc is unchanged since the scroll saw it (else a version conflict, as ES).
          return { action: 'delete', index, id: h._id, shard: shardOf.get(h.shardIndex), ifSeqNo: h.seqNo, ifPrimaryTerm: h.primaryTerm };
        }
        if (job.kind === 'update_by_query') {
          // ES's update-by-query without a script writes each hit back as it is (picking up mapping
          // changes), in place, only if it is still the version the scroll saw (else a conflict)
          const index = nameOf(h.shardIndex);
          touched.add(index);
          return { action: 'index', index, id: h._id, source: raw ?? '{}', shard: shardOf.get(h.shardIndex), ifSeqNo: h.seqNo, ifPrimaryTerm: h.primaryTerm, ...(h.routing !== undefined ? { routing: h.routing } : {}) };
        }
        const d = job.dest!;
        touched.add(d.index);
        // dest.routing: `keep` (default) copies the hit's own `_routing`, `discard` drops it, `=v` sets v.
        const routing = d.routing.mode === 'set' ? d.routing.value : d.routing.mode === 'keep' ? h.routing : undefined;
        return { action: d.opType, index: d.index, id: h._id, source: src ?? '{}', ...(routing !== undefined ? { routing } : {}) };
      });
      const batchStart = Date.now();
      st.batches++;
      const results = await executeBulk(s, job.auth, ops);
      const stop = count(job, st, results, failures);
      if (stop || (maxDocs !== undefined && st.processed >= maxDocs)) break;
      // requests_per_second: the next batch starts no earlier than batchSize / rps after this one.
      // As ES, the next page is fetched at once with its keep-alive stretched by that wait, and the
      // wait delays the next bulk (a long throttle never lets the scroll context expire).
      const due = st.rps === Infinity ? 0 : batchStart + (hits.length / st.rps) * 1000;
      const wait = Math.max(0, Math.ceil(due - Date.now()));
      page = await scrollPage(s, { auth: job.auth }, page.scrollId!, wait > 0 ? `${keepAliveMs + wait}ms` : job.scroll);
      if (due > Date.now() && page.out.hits.length) {
        st.throttledUntil = due;
        const t0 = Date.now();
        await sleep(due - t0, control);
        st.throttledMs += Date.now() - t0;
        st.throttledUntil = 0;
      }
    }
  } finally {
    // Through its owner node (this one, unless it was adopted while this job ran).
    if (rec) await s.contextService.clear(rec.id, 'scroll', s.security?.ownerOf(job.auth)?.username, undefined, () => true).catch(() => 0);
    rec = undefined;
  }
  if (job.refresh && touched.size) {
    await refreshIndices(s, [...touched].flatMap((n) => (s.cluster.get(n) ? [s.cluster.get(n)!] : [])));
  }
  return { status: st, failures, tookMs: Date.now() - started };
}

/**
 * Counts a batch's bulk results into the status. Returns true when the worker must stop: any
 * failure other than a version conflict, or a conflict under `conflicts: abort`.
 */
function count(job: ByScrollJob, st: ByScrollStatus, results: BulkItemResult[], failures: Array<Record<string, unknown>>): boolean {
  let stop = false;
  for (const r of results) {
    const [, v] = Object.entries(r)[0] as [string, Record<string, unknown>];
    const error = v.error as Record<string, unknown> | undefined;
    const status = v.status as number;
    // (A delete-by-query hit changed or gone since the scroll saw it fails its compare-and-set:
    // the shard's 409, counted here as a conflict.)
    if (error) {
      const isConflict = status === 409 && error.type === 'version_conflict_engine_exception';
      if (isConflict) st.versionConflicts++;
      if (!isConflict || job.abortOnConflict) {
        failures.push({ index: v._index, id: v._id, cause: error, status });
        stop = true;
      }
      continue;
    }
    switch (v.result) {
      case 'created':
        st.created++;
        break;
      case 'updated':
        st.updated++;
        break;
      case 'deleted':
        st.deleted++;
        break;
      case 'noop':
        st.noops++;
        break;
    }
  }
  return stop;
}
