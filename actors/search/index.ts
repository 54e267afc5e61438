/**
 * The search service (Elasticsearch's SearchService / TransportSearchAction): plain, PIT and scroll
 * searches, context use, keep alives, index resolution, and the coordinator that fans a search out
 * to the shards (shard client, request mux) and merges their pages (hit list). The routes above it
 * only parse requests and render what it returns.
 */
export { runSearch, runCount, searchCallOf, parseSearchCall } from './searchService';
export { startScroll, openScroll, scrollPage, scrollFromFact, clearScrolls, clearAllScrolls } from './scrollService';
export { openPit, closePit } from './pitService';
export { contextMissing, useContext, mayUse, isSuperuser, requireLog } from './contextUse';
export { keepAliveLimits, keepAliveOrThrow, checkKeepAlive, keepAliveTooLarge, parseKeepAlive, formatKeepAlive } from './keepAlive';
export { resolveOptions, orderedTargets, searchIndices, withAliasFilters, refuseFilteredAliases, indexClosed, refuseClosedDoc } from './indices';
export { executeSearch, renderSearch, indexNames, sliceTargets, targetQuery } from './coordinator';
export { ShardClient, checkMaxPayload } from './shardClient';
export { IdCodec } from './ids';
export { newSearchStats } from './services';
export type { ScrollStart, ScrollPage } from './scrollService';
export type { PitOpened } from './pitService';
export type { SearchOutcome, ShardTarget, RenderExtra } from './coordinator';
export type { SearchServices, PagingServices, SearchCall, SearchStats, SecurityHooks, WriteGate } from './services';
export type { ScrollPosition, SigningKey } from './ids';
