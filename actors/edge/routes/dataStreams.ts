import { illegalArgument, indexNotFound } from '../../wire/esErrors';
import type { Router } from '../router';
import type { EsRequest } from '../../wire/rest';
import type { SearchServices } from '../../search/services';

const isPattern = (p: string) => p === '_all' || p === '*' || p.includes('*');

/**
 * Data streams: this node has none. ES answers a name that is not a data stream (an index of that
 * name included) with 404 `index_not_found_exception`, a pattern with an empty list, and refuses
 * to create one without a matching data-stream template (which no template here can be).
 * Python's `helpers.reindex` probes `GET /_data_stream/<dest>` and tolerates exactly that 404.
 */
export function dataStreamRoutes(r: Router, _s: SearchServices): void {
  const monitor = { kind: 'cluster' as const, action: 'indices:admin/data_stream/get' };
  const list = (req: EsRequest) => {
    const names = (req.params.name ?? '*').split(',').map((x) => x.trim()).filter(Boolean);
    const explicit = names.find((n) => !isPattern(n) && !n.startsWith('-'));
    if (explicit !== undefined) throw indexNotFound(explicit);
    return { body: { data_streams: [] } };
  };
  r.add('GET', '/_data_stream', list, monitor);
  r.add('GET', '/_data_stream/{name}', list, monitor);
  r.add('PUT', '/_data_stream/{name}', (req) => {
    throw illegalArgument(`no matching index template found for data stream [${req.params.name}]`);
  }, { kind: 'cluster', action: 'indices:admin/data_stream/create' });
  r.add('DELETE', '/_data_stream/{name}', (req) => {
    const names = req.params.name.split(',').filter((n) => !isPattern(n));
    if (names.length) throw indexNotFound(names[0]);
    return { body: { acknowledged: true } };
  }, { kind: 'cluster', action: 'indices:admin/data_stream/delete' });
}
