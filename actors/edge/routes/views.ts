import type { Server } from 'node:http';
import type { Router } from '../router';
import type { PagingServices } from '../../search';
import { aliasRoutes } from './aliases';
import { catRoutes } from './cat';
import { clusterViewRoutes } from './clusterViews';
import { dataStreamRoutes } from './dataStreams';
import { healthRoutes } from './health';
import { nodeRoutes } from './nodes';
import { statsRoutes } from './stats';
import { templateRoutes } from './templates';
import { watchGc, watchHttp } from '../views/runtime';

/**
 * The metadata and operator APIs of issue 13 (aliases, templates, data streams, `_cat`, nodes,
 * stats, cluster health/state/stats): one call for actors/system.ts.
 */
export function viewRoutes(r: Router, s: PagingServices): void {
  watchGc();
  aliasRoutes(r, s);
  templateRoutes(r, s);
  dataStreamRoutes(r, s);
  healthRoutes(r, s);
  nodeRoutes(r, s);
  statsRoutes(r, s);
  clusterViewRoutes(r, s);
  catRoutes(r, s);
}

/** Once the edge listens: its connection counts feed `_nodes/stats` `http`. */
export function viewsAttach(server: Server): void {
  watchHttp(server);
}
