import type { IndexState } from '../../cluster';
import type { EsRequest } from '../../wire/rest';
import type { SearchServices } from '../../search/services';

/**
 * The indices of a view the caller may see (ES lists only authorized indices in `_cat/indices`,
 * `_cat/shards`, `_cat/count`, `_stats` and `GET _alias`); all of them when security is off.
 */
export function visibleIndices(s: SearchServices, req: EsRequest, action: string, indices: IndexState[]): IndexState[] {
  if (!s.security) return indices;
  const ok = new Set(s.security.allowedIndices(req.auth, action, indices.map((i) => i.name)));
  return indices.filter((i) => ok.has(i.name));
}
