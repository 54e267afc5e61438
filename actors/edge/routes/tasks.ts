import { EsError, illegalArgument } from '../../wire/esErrors';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import { parseTimeValue } from '../../wire/timeValue';
import { parseTaskId, type Task, type TaskInfoBody, type TaskRegistry } from '../taskRegistry';

const LIST = 'cluster:monitor/tasks/lists';
const GET = 'cluster:monitor/task/get';
const CANCEL = 'cluster:admin/tasks/cancel';

const splitComma = (s: string | undefined) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);

/** `*` wildcards, as ES's Regex.simpleMatch on action names. */
function simpleMatch(pattern: string, s: string): boolean {
  const re = new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
  return re.test(s);
}

function bool(v: string | undefined, dflt: boolean): boolean {
  if (v === undefined) return dflt;
  if (v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw illegalArgument(`Failed to parse value [${v}] as only [true] or [false] are allowed.`);
}

/** Tasks matching `actions`, `parent_task_id`, `nodes` (ListTasksRequest / CancelTasksRequest filters). */
function matching(s: SearchServices, tasks: TaskRegistry, q: Record<string, string>): Task[] {
  const actions = splitComma(q.actions);
  const nodes = splitComma(q.nodes);
  const parent = q.parent_task_id;
  if (parent !== undefined && parent !== '' && parent !== 'unset') parseTaskId(parent);
  const node = s.ctx.node;
  const onThisNode = !nodes.length || nodes.some((n) => n === '_all' || n === '_local' || n === node.id || n === node.name || n === '_master' || simpleMatch(n, node.name));
  if (!onThisNode) return [];
  return tasks.list().filter(
    (t) => (!actions.length || actions.some((a) => simpleMatch(a, t.action))) && (parent === undefined || parent === '' || parent === 'unset' || t.opts.parent?.taskId === parent),
  );
}

/** ListTasksResponse: grouped by node (default), by parent (children nested), or a flat list. */
function renderList(s: SearchServices, tasks: Task[], detailed: boolean, groupBy: string): Record<string, unknown> {
  const infos = tasks.map((t) => ({ t, info: t.info(detailed) }));
  if (groupBy === 'none') return { tasks: infos.map((x) => x.info) };
  if (groupBy === 'parents') {
    const byId = new Map<string, TaskInfoBody & { children?: unknown[] }>(infos.map((x) => [x.t.taskId, { ...x.info }]));
    const roots: Record<string, unknown> = {};
    for (const x of infos) {
      const p = x.t.opts.parent && byId.get(x.t.opts.parent.taskId);
      if (p) (p.children ??= []).push(byId.get(x.t.taskId));
      else roots[x.t.taskId] = byId.get(x.t.taskId);
    }
    return { tasks: roots };
  }
  if (groupBy !== 'nodes') throw illegalArgument(`failed to parse setting [group_by] with value [${groupBy}] as a group_by, must be one of [nodes, parents, none]`);
  if (!infos.length) return { nodes: {} };
  const node = s.ctx.node;
  return {
    nodes: {
      [node.id]: {
        name: node.name,
        transport_address: `${node.host}:9300`,
        host: node.host,
        ip: `${node.host}:9300`,
        roles: ['data', 'ingest', 'master'],
        attributes: {},
        tasks: Object.fromEntries(infos.map((x) => [x.t.taskId, x.info])),
      },
    },
  };
}

const timedOut = (what: string) => new EsError('timeout_exception', 429, `Timed out waiting for completion of [${what}]`);

async function waitFor(p: Promise<unknown>, ms: number, what: string): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([p, new Promise((_, reject) => (timer = setTimeout(() => reject(timedOut(what)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

const timeoutOf = (q: Record<string, string>) => (q.timeout !== undefined ? parseTimeValue(q.timeout, 'timeout') : 30_000);

/** `GET /_tasks`: this node's running tasks (the listing itself included, as in ES). */
async function listTasks(s: SearchServices, tasks: TaskRegistry, req: EsRequest): Promise<EsResponse> {
  const q = req.query;
  const detailed = bool(q.detailed, false);
  const groupBy = q.group_by ?? 'nodes';
  const self = tasks.start(LIST, '', () => undefined, { headers: req.opaqueId ? { 'X-Opaque-Id': req.opaqueId } : {} });
  try {
    if (bool(q.wait_for_completion, false)) {
      const others = matching(s, tasks, q).filter((t) => t !== self);
      await waitFor(Promise.all(others.map((t) => t.done)), timeoutOf(q), others.map((t) => t.taskId).join(', '));
    }
    return { body: renderList(s, matching(s, tasks, q), detailed, groupBy) };
  } finally {
    tasks.finish(self, {}, false);
  }
}

/**
 * `GET /_tasks/<id>`: a running task (`completed: false`, detailed), or the stored result of one
 * run with `wait_for_completion=false` (`completed: true` with `response` or `error`);
 * `wait_for_completion=true` waits for it (timeout 30s).
 */
async function getTask(tasks: TaskRegistry, req: EsRequest): Promise<EsResponse> {
  const id = req.params.task_id;
  const q = req.query;
  const found = tasks.lookup(id);
  if (found.running) {
    const t = found.running;
    if (!bool(q.wait_for_completion, false)) return { body: { completed: false, task: t.info(true) } };
    await waitFor(t.done, timeoutOf(q), id);
    // A task that stored no result: the snapshot taken when it finished (TransportGetTaskAction).
    return { body: tasks.lookup(id).stored ?? { completed: true, task: t.info(true) } };
  }
  if (found.stored) return { body: found.stored };
  const { node } = parseTaskId(id);
  if (node !== tasks.nodeId) {
    throw new EsError('resource_not_found_exception', 404, `task [${id}] belongs to the node [${node}] which isn't part of the cluster and there is no record of the task`);
  }
  throw new EsError('resource_not_found_exception', 404, `task [${id}] isn't running and hasn't stored its results`);
}

/** `POST /_tasks/_cancel`, `/_tasks/<id>/_cancel`: cancels cancellable tasks; answers them as a task list. */
async function cancelTasks(s: SearchServices, tasks: TaskRegistry, req: EsRequest): Promise<EsResponse> {
  const q = req.query;
  let targets: Task[];
  if (req.params.task_id !== undefined) {
    const { running } = tasks.lookup(req.params.task_id);
    if (!running) throw new EsError('resource_not_found_exception', 404, `task [${req.params.task_id}] is not found`);
    if (!running.cancellable) throw illegalArgument(`task [${req.params.task_id}] doesn't support cancellation`);
    targets = [running];
  } else targets = matching(s, tasks, q).filter((t) => t.cancellable);
  for (const t of targets) tasks.cancel(t);
  if (bool(q.wait_for_completion, false)) await waitFor(Promise.all(targets.map((t) => t.done)), timeoutOf(q), targets.map((t) => t.taskId).join(', '));
  return { body: renderList(s, targets, true, q.group_by ?? 'nodes') };
}

export function taskRoutes(r: Router, s: SearchServices, tasks: TaskRegistry): void {
  r.add('GET', '/_tasks', (req) => listTasks(s, tasks, req), { kind: 'cluster', action: LIST });
  r.add('GET', '/_tasks/{task_id}', (req) => getTask(tasks, req), { kind: 'cluster', action: GET });
  r.add('POST', '/_tasks/_cancel', (req) => cancelTasks(s, tasks, req), { kind: 'cluster', action: CANCEL });
  r.add('POST', '/_tasks/{task_id}/_cancel', (req) => cancelTasks(s, tasks, req), { kind: 'cluster', action: CANCEL });
}
