import { EsError, illegalArgument, toErrorBody } from '../wire/esErrors';

/** A task as `_tasks` shows it (ES TaskInfo). */
export interface TaskInfoBody {
  node: string;
  id: number;
  type: 'transport';
  action: string;
  status?: unknown;
  description?: string;
  start_time_in_millis: number;
  running_time_in_nanos: number;
  cancellable: boolean;
  cancelled?: boolean;
  parent_task_id?: string;
  headers: Record<string, string>;
}

/** A finished task's stored result (ES TaskResult in `.tasks`): `completed`, `task`, `response` or `error`. */
export interface StoredTaskResult {
  completed: true;
  task: TaskInfoBody;
  response?: unknown;
  error?: unknown;
}

/** A running task of this node. */
export class Task {
  /** Why it was cancelled (`by user request`), once it was. */
  cancelReason?: string;
  private finished!: () => void;
  /** Resolves when the task has finished (result stored or not). */
  readonly done = new Promise<void>((r) => (this.finished = r));
  readonly startNanos = process.hrtime.bigint();
  readonly startTime = Date.now();

  constructor(
    readonly nodeId: string,
    readonly id: number,
    readonly action: string,
    readonly description: string,
    readonly status: () => unknown,
    readonly opts: { parent?: Task; headers?: Record<string, string>; cancellable?: boolean; onCancel?: (reason: string) => void },
  ) {}

  get taskId(): string {
    return `${this.nodeId}:${this.id}`;
  }

  get cancellable(): boolean {
    return this.opts.cancellable ?? false;
  }

  /** TaskInfo: status and description only when detailed (GET of one task is always detailed). */
  info(detailed: boolean, forStorage = false): TaskInfoBody {
    const status = detailed ? this.status() : undefined;
    return {
      node: this.nodeId,
      id: this.id,
      type: 'transport',
      action: this.action,
      ...(status !== undefined ? { status } : {}),
      ...(detailed ? { description: this.description } : {}),
      start_time_in_millis: this.startTime,
      running_time_in_nanos: Number(process.hrtime.bigint() - this.startNanos),
      cancellable: this.cancellable,
      // ES leaves `cancelled` out of the copy it stores in `.tasks`.
      ...(this.cancellable && !forStorage ? { cancelled: this.cancelReason !== undefined } : {}),
      ...(this.opts.parent ? { parent_task_id: this.opts.parent.taskId } : {}),
      headers: { ...(this.opts.headers ?? {}) },
    };
  }

  /** @internal the registry calls it once the task is over. */
  markDone(): void {
    this.finished();
  }
}

const MAX_STORED = 1000;

/**
 * The node's tasks (ES TaskManager, in memory): running tasks by number, and the results of tasks
 * started with `wait_for_completion=false`, which ES writes to the `.tasks` index (kept here, the
 * newest 1,000, until the node stops).
 */
export class TaskRegistry {
  private seq = 0;
  private readonly running = new Map<number, Task>();
  private readonly stored = new Map<string, StoredTaskResult>();

  constructor(readonly nodeId: string) {}

  start(action: string, description: string, status: () => unknown, opts: Task['opts'] = {}): Task {
    const t = new Task(this.nodeId, ++this.seq, action, description, status, opts);
    this.running.set(t.id, t);
    return t;
  }

  /** Unregisters a finished task; with `store`, keeps its result for `GET /_tasks/<id>`. */
  finish(t: Task, outcome: { response?: unknown; error?: EsError }, store: boolean): void {
    if (store) {
      const result: StoredTaskResult = {
        completed: true,
        task: t.info(true, true),
        ...(outcome.error ? { error: errorObject(outcome.error) } : { response: outcome.response }),
      };
      this.stored.set(t.taskId, result);
      if (this.stored.size > MAX_STORED) this.stored.delete(this.stored.keys().next().value as string);
    }
    this.running.delete(t.id);
    t.markDone();
  }

  list(): Task[] {
    return [...this.running.values()];
  }

  /** A running task or a stored result by `node:id`; ES's 400 for a malformed id. */
  lookup(taskId: string): { running?: Task; stored?: StoredTaskResult } {
    const { node, id } = parseTaskId(taskId);
    const running = node === this.nodeId ? this.running.get(id) : undefined;
    return running ? { running } : { stored: this.stored.get(`${node}:${id}`) };
  }

  /** Cancels a running cancellable task and its children. */
  cancel(t: Task, reason = 'by user request'): void {
    if (t.cancelReason !== undefined) return;
    t.cancelReason = reason;
    t.opts.onCancel?.(reason);
    for (const c of this.running.values()) if (c.opts.parent === t) this.cancel(c, reason);
  }
}

/** `node:number` (TaskId(String)); anything else is ES's `malformed task id`. */
export function parseTaskId(taskId: string): { node: string; id: number } {
  const parts = taskId.split(':');
  if (parts.length !== 2 || !parts[0] || !/^-?\d+$/.test(parts[1])) throw illegalArgument(`malformed task id ${taskId}`);
  return { node: parts[0], id: Number(parts[1]) };
}

/** An error as ES stores it in a task result (`generateThrowableXContent`: no root_cause). */
function errorObject(e: EsError): unknown {
  const { root_cause: _rc, ...rest } = toErrorBody(e).error as Record<string, unknown>;
  return rest;
}
