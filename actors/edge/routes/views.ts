import type { Router } from '../router';
import type { PagingServices } from './search';
import { aliasRoutes } from './aliases';
import { dataStreamRoutes } from './dataStreams';
import { templateRoutes } from './templates';

/**
 * The metadata and operator APIs of issue 13 (aliases, templates, data streams, `_cat`, nodes,
 * stats, cluster state): one call for actors/system.ts.
 */
export function viewRoutes(r: Router, s: PagingServices): void {
  aliasRoutes(r, s);
  templateRoutes(r, s);
  dataStreamRoutes(r, s);
}
