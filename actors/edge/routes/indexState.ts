import { illegalArgument } from '../../wire/esErrors';
import type { EsRequest } from '../../wire/rest';
import type { Router } from '../router';
import type { SearchServices } from '../../search/services';
import { resolveOptions } from '../../search';

/**
 * `POST /<index>/_close` and `POST /<index>/_open` (ES MetadataIndexStateService): the state is a
 * metadata fact on the document log, applied by every node before the answer, so every node refuses
 * searches, PITs and scrolls on a closed index alike (`index_closed_exception`), and the contexts
 * pinned on it are released (`index_closed`).
 */

/** ES's `action.destructive_requires_name` (default true in 8.x): no wildcard or `_all` closes. */
function checkDestructive(s: SearchServices, expr: string): void {
  if (!s.ctx.settings.bool('action.destructive_requires_name', true)) return;
  if (expr === '_all' || expr.split(',').some((p) => p.includes('*') || p === '_all')) {
    throw illegalArgument('Wildcard expressions or all indices are not allowed');
  }
}

async function setState(s: SearchServices, req: EsRequest, state: 'open' | 'close') {
  const expr = req.params.index;
  if (state === 'close') checkDestructive(s, expr);
  // _open expands wildcards to closed indices by default, _close to open ones (ES's request defaults)
  const opts = resolveOptions(req);
  const targets = s.cluster.resolve(expr, { ...opts, expandWildcards: opts.expandWildcards ?? (state === 'open' ? 'closed' : 'open') });
  for (const idx of targets) {
    if (!!idx.settings.closed === (state === 'close')) continue;
    await s.cluster.setIndexState(idx, state);
  }
  if (state === 'open') return { body: { acknowledged: true, shards_acknowledged: true } };
  return { body: { acknowledged: true, shards_acknowledged: true, indices: Object.fromEntries(targets.map((i) => [i.name, { closed: true }])) } };
}

export function indexStateRoutes(r: Router, s: SearchServices): void {
  const named = (req: EsRequest) => [req.params.index];
  r.add('POST', '/{index}/_close', (req) => setState(s, req, 'close'), { kind: 'indices', action: 'indices:admin/close', indices: named });
  r.add('POST', '/{index}/_open', (req) => setState(s, req, 'open'), { kind: 'indices', action: 'indices:admin/open', indices: named });
}
