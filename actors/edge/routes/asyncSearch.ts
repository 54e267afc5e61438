import type { Router } from '../router';
import type { PagingServices } from '../../search/services';
import type { AsyncSearchRegistry } from '../../contexts/asyncSearches';
import { deleteAsyncSearch, getAsyncSearch, submitAsyncSearch } from '../../search/asyncSearchService';

/**
 * `_async_search` (ES's async search plugin): submit, get, status, delete; the service is
 * actors/search/asyncSearchService.ts, the actors and stored results actors/contexts/asyncSearches.ts.
 * Submit authorizes the indices as a search does; get, status and delete are the owner's only
 * (another user's id is ES's 404), status of any search also for holders of `monitor`.
 */
export function asyncSearchRoutes(r: Router, s: PagingServices, reg: AsyncSearchRegistry): void {
  r.add('POST', '/_async_search', (req) => submitAsyncSearch(s, reg, req), { kind: 'handler' });
  r.add('POST', '/{index}/_async_search', (req) => submitAsyncSearch(s, reg, req), { kind: 'handler' });
  r.add('GET', '/_async_search/{id}', (req) => getAsyncSearch(s, reg, req, false), { kind: 'none' });
  r.add('GET', '/_async_search/status/{id}', (req) => getAsyncSearch(s, reg, req, true), { kind: 'none' });
  r.add('DELETE', '/_async_search/{id}', (req) => deleteAsyncSearch(s, reg, req), { kind: 'none' });
}
