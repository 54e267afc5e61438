/**
 * `GET|POST /_security/_query/api_key` (ES TransportQueryApiKeyAction): the query DSL subset of
 * queryDsl.ts over the key fields ES exposes (FieldNameTranslators.API_KEY_FIELD_NAME_TRANSLATORS),
 * `aggs` (queryAggs.ts), `from`/`size`, `sort` and `search_after` as ES's search over `.security`
 * gives them. Keys not owned by a `manage_own_api_key` caller are filtered out before the query,
 * so neither hits nor aggregations ever see them.
 */
import type { ApiKeyRecord } from '../../machines/apiKey.machine';
import { renderKey } from './apiKeyViews';
import { parseAggs, runAggs } from './queryAggs';
import { compileQuery, fieldTable, type Field } from './queryDsl';
import { checkBodyFields, pageOf } from './queryPaging';
import { EsError } from '../wire/esErrors';

const field = (name: string, kind: Field<ApiKeyRecord>['kind'], values: (r: ApiKeyRecord) => Array<string | number | boolean>): Field<ApiKeyRecord> => ({
  name,
  kind,
  sortable: true,
  values,
});

/** The queryable fields (query names; ES maps them onto `.security` fields of these types). */
export const API_KEY_FIELDS = fieldTable<ApiKeyRecord>(
  [
    field('username', 'keyword', (r) => [r.owner.username]),
    field('realm_name', 'keyword', (r) => [r.owner.realm]),
    field('name', 'keyword', (r) => [r.name]),
    field('type', 'keyword', (r) => [r.keyType]),
    field('creation', 'date', (r) => [r.creation]),
    field('expiration', 'date', (r) => (r.expiration === undefined ? [] : [r.expiration])),
    field('invalidated', 'boolean', (r) => [r.status === 'invalidated']),
    field('invalidation', 'date', (r) => (r.invalidation === undefined ? [] : [r.invalidation])),
  ],
  [{ name: 'metadata', object: (r) => r.metadata }],
  (r) => r.keyId,
);

const BODY_FIELDS = ['query', 'aggs', 'aggregations', 'from', 'size', 'sort', 'search_after'] as const;
const PAYLOAD = 'query_api_key_request_payload';

export interface QueryKeysOptions {
  withLimitedBy?: boolean;
  typedKeys?: boolean;
  now?: number;
}

/** GET|POST /_security/_query/api_key over the keys the caller may see (in creation order). */
export function queryKeys(keys: ApiKeyRecord[], body: Record<string, unknown>, opts: QueryKeysOptions = {}): Record<string, unknown> {
  checkBodyFields(body, BODY_FIELDS, PAYLOAD);
  if (body.aggs !== undefined && body.aggregations !== undefined) throw new EsError('illegal_argument_exception', 400, "Duplicate 'aggs' or 'aggregations' field");
  const now = opts.now ?? Date.now();
  const predicate = body.query !== undefined && body.query !== null ? compileQuery(body.query, API_KEY_FIELDS, now) : undefined;
  const aggsDef = body.aggs ?? body.aggregations;
  const aggs = aggsDef === undefined || aggsDef === null ? undefined : parseAggs(aggsDef, { fields: API_KEY_FIELDS, now });
  const matched = predicate ? keys.filter(predicate) : keys;
  const positions = new Map(keys.map((r, i) => [r, i]));
  const page = pageOf(matched, positions, body, API_KEY_FIELDS, PAYLOAD, now);
  return {
    total: page.total,
    count: page.hits.length,
    api_keys: page.hits.map(({ doc, sort }) => ({ ...renderKey(doc, { withLimitedBy: opts.withLimitedBy }), ...(sort ? { _sort: sort } : {}) })),
    ...(aggs ? { aggregations: runAggs(aggs, matched, opts.typedKeys ?? false) } : {}),
  };
}
