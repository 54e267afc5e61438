import { EsError, asEsError, validationFailed } from '../../wire/esErrors';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import { ByScrollStatus, mergedStatus, runWorker, type ByScrollJob, type SliceResult } from '../bulkByScroll';
import { checkSearch, parseBool, parseDeleteByQuery, parseReindex, parseRequestsPerSecond, parseUpdateByQuery } from '../reindexRequest';
import type { Task, TaskRegistry } from '../taskRegistry';
import { searchIndices, type PagingServices } from '../../search';

type Json = Record<string, unknown>;

export const REINDEX_ACTION = 'indices:data/write/reindex';
export const DELETE_BY_QUERY_ACTION = 'indices:data/write/delete/byquery';
export const UPDATE_BY_QUERY_ACTION = 'indices:data/write/update/byquery';

/** Splits max_docs over slices (AbstractBulkByScrollRequest.forSlice): the remainder to the first ones. */
const sliceMaxDocs = (maxDocs: number | undefined, slices: number, id: number) =>
  maxDocs === undefined ? undefined : Math.floor(maxDocs / slices) + (id < maxDocs % slices ? 1 : 0);

/** Live controls of a running job's workers, for rethrottle and cancel. */
interface JobControl {
  workers: ByScrollStatus[];
  wakes: Array<() => void>;
}

/**
 * Runs a job under its task: resolves `slices: auto` (the fewest shards among the source indices),
 * checks reindex never writes into an index it reads, then one worker, or one child task per slice
 * whose statuses the parent merges. Returns ES's response body and status (the highest failure
 * status, 200 without failures).
 */
async function execute(s: PagingServices, tasks: TaskRegistry, job: ByScrollJob, task: Task, control: JobControl, holder: { status: () => unknown }): Promise<{ status: number; body: Json; stored: Json }> {
  const started = Date.now();
  const sources = await searchIndices(s, { params: job.search.index ? { index: job.search.index } : {}, query: job.search.params, auth: job.auth });
  if (job.kind === 'reindex' && sources.some((i) => i.name === job.dest!.index)) {
    throw validationFailed([`reindex cannot write into an index its reading from [${job.dest!.index}]`]);
  }
  const shardCounts = sources.map((i) => i.settings.numberOfShards);
  const n = job.slices === 'auto' ? (shardCounts.length ? Math.min(...shardCounts) : 1) : job.slices;
  const opts = job.kind === 'delete_by_query' ? { created: false, updated: false } : job.kind === 'update_by_query' ? { created: false } : {};
  let results: SliceResult[];
  let statusBody: (o: typeof opts) => Json;
  if (n === 1) {
    const st = new ByScrollStatus(job.rps);
    control.workers.push(st);
    holder.status = () => st.toJSON();
    const wc = workerControl(task, control);
    results = [await runWorker(s, job, st, wc)];
    statusBody = (o) => st.toJSON(o);
  } else {
    const done: Array<ByScrollStatus | null> = new Array(n).fill(null);
    holder.status = () => mergedStatus(done, task.cancelReason);
    // As ES's leader task: wait for every slice, then fail with the first slice's error if any.
    const settled = await Promise.allSettled(
      Array.from({ length: n }, async (_, id) => {
        const st = new ByScrollStatus(job.rps === Infinity ? Infinity : job.rps / n, id);
        control.workers.push(st);
        const child = tasks.start(task.action, task.description, () => st.toJSON(), {
          parent: task,
          headers: task.opts.headers,
          cancellable: true,
        });
        try {
          const r = await runWorker(s, job, st, workerControl(child, control), { id, max: n }, sliceMaxDocs(job.maxDocs, n, id));
          done[id] = st;
          return r;
        } finally {
          tasks.finish(child, {}, false);
        }
      }),
    );
    const failed = settled.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (failed) throw failed.reason;
    results = settled.map((x) => (x as PromiseFulfilledResult<SliceResult>).value);
    statusBody = (o) => mergedStatus(done, task.cancelReason, o);
  }
  const failures = results.flatMap((r) => r.failures);
  const took = Math.max(Date.now() - started, ...results.map((r) => r.tookMs));
  const status = failures.reduce((m, f) => Math.max(m, Number(f.status) || 500), 200);
  const canceled = task.cancelReason;
  const make = (o: typeof opts): Json => {
    const st = statusBody(o);
    if (n > 1 && canceled !== undefined) st.canceled = canceled;
    return { took, timed_out: false, ...st, failures };
  };
  return { status, body: make(opts), stored: make({}) };
}

function workerControl(task: Task, control: JobControl) {
  const wc: { cancelled: () => string | undefined; wake?: () => void } = { cancelled: () => task.cancelReason ?? task.opts.parent?.cancelReason };
  control.wakes.push(() => wc.wake?.());
  return wc;
}

function description(job: ByScrollJob): string {
  const src = job.search.index === undefined ? '[all indices]' : `[${job.search.index.split(',').join(', ')}]`;
  return job.kind === 'reindex' ? `reindex from ${src} to [${job.dest!.index}]` : job.kind === 'update_by_query' ? `update-by-query ${src}` : `delete-by-query ${src}`;
}

/**
 * Starts the job as a task. `wait_for_completion=false`: answers `{"task":"node:id"}` at once and
 * keeps the result for `GET /_tasks/<id>` (ES stores it in `.tasks`); otherwise answers the result.
 */
async function startJob(s: PagingServices, tasks: TaskRegistry, controls: Map<string, JobControl>, job: ByScrollJob, req: EsRequest): Promise<EsResponse> {
  const wait = parseBool(req.query.wait_for_completion, true);
  checkSearch(job, req.path);
  const control: JobControl = { workers: [], wakes: [] };
  const holder: { status: () => unknown } = { status: () => new ByScrollStatus(job.rps).toJSON() };
  const task = tasks.start(job.kind === 'reindex' ? REINDEX_ACTION : job.kind === 'update_by_query' ? UPDATE_BY_QUERY_ACTION : DELETE_BY_QUERY_ACTION, description(job), () => holder.status(), {
    headers: req.opaqueId ? { 'X-Opaque-Id': req.opaqueId } : {},
    cancellable: true,
    onCancel: () => control.wakes.forEach((w) => w()),
  });
  controls.set(task.taskId, control);
  const run = execute(s, tasks, job, task, control, holder).finally(() => controls.delete(task.taskId));
  if (!wait) {
    run.then(
      (r) => tasks.finish(task, { response: r.stored }, true),
      (e) => tasks.finish(task, { error: asEsError(e) }, true),
    );
    return { body: { task: task.taskId } };
  }
  try {
    const r = await run;
    return { status: r.status, body: r.body };
  } finally {
    tasks.finish(task, {}, false);
  }
}

/** `POST /_reindex/<task>/_rethrottle`, `/_delete_by_query/<task>/_rethrottle`: new requests_per_second for a running job. */
function rethrottle(tasks: TaskRegistry, controls: Map<string, JobControl>, req: EsRequest, action: string): EsResponse {
  const rpsParam = req.query.requests_per_second;
  if (rpsParam === undefined) throw validationFailed(['requests_per_second must be set']);
  const rps = parseRequestsPerSecond(rpsParam);
  const { running } = tasks.lookup(req.params.task_id);
  const control = running && running.action === action ? controls.get(running.taskId) : undefined;
  if (!running || !control) {
    throw new EsError('resource_not_found_exception', 404, `task [${req.params.task_id}] is missing`);
  }
  const per = rps === Infinity ? Infinity : rps / Math.max(1, control.workers.length);
  for (const w of control.workers) w.rps = per;
  control.wakes.forEach((w) => w());
  return { body: { nodes: { [tasks.nodeId]: { tasks: { [running.taskId]: running.info(true) } } } } };
}

/** Reindex, delete-by-query and their rethrottle APIs. */
export function reindexRoutes(r: Router, s: PagingServices, tasks: TaskRegistry): () => void {
  const controls = new Map<string, JobControl>();
  // The scroll and the bulk writes authorize themselves as the caller, index by index (as ES's sub-requests).
  const authz = { kind: 'handler' as const };
  r.add('POST', '/_reindex', (req) => startJob(s, tasks, controls, parseReindex(req, (name) => s.cluster.metadata.aliases.has(name)), req), authz);
  r.add('POST', '/{index}/_delete_by_query', (req) => startJob(s, tasks, controls, parseDeleteByQuery(req), req), authz);
  r.add('POST', '/{index}/_update_by_query', (req) => startJob(s, tasks, controls, parseUpdateByQuery(req), req), authz);
  r.add('POST', '/_update_by_query/{task_id}/_rethrottle', (req) => rethrottle(tasks, controls, req, UPDATE_BY_QUERY_ACTION), { kind: 'cluster', action: 'cluster:admin/reindex/rethrottle' });
  r.add('POST', '/_reindex/{task_id}/_rethrottle', (req) => rethrottle(tasks, controls, req, REINDEX_ACTION), { kind: 'cluster', action: 'cluster:admin/reindex/rethrottle' });
  r.add('POST', '/_delete_by_query/{task_id}/_rethrottle', (req) => rethrottle(tasks, controls, req, DELETE_BY_QUERY_ACTION), {
    kind: 'cluster',
    action: 'cluster:admin/reindex/rethrottle',
  });
  // Node shutdown: running jobs stop at their next batch.
  return () => {
    for (const t of tasks.list()) if (t.cancellable) tasks.cancel(t, 'node shutdown');
  };
}

/** @internal exported for unit tests. */
export const _test = { sliceMaxDocs };
