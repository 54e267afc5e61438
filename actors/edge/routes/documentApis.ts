import type { Router } from '../router';
import { TaskRegistry } from '../taskRegistry';
import { mgetRoutes } from './mget';
import { msearchRoutes } from './msearch';
import { reindexRoutes } from './reindex';
import type { PagingServices } from '../../search';
import { taskRoutes } from './tasks';
import { updateRoutes } from './update';

/**
 * The document and search APIs around paging (issue 13): `_msearch`, `_mget`, `_update`,
 * `_reindex`, `_delete_by_query` and `_tasks`, sharing one task registry per node.
 * @returns the registry and a stop hook (running reindex / delete-by-query jobs stop at their next batch).
 */
export function documentApiRoutes(r: Router, s: PagingServices): { tasks: TaskRegistry; stop(): void } {
  const tasks = new TaskRegistry(s.ctx.node.id);
  msearchRoutes(r, s);
  mgetRoutes(r, s);
  updateRoutes(r, s);
  const stop = reindexRoutes(r, s, tasks);
  taskRoutes(r, s, tasks);
  return { tasks, stop };
}
