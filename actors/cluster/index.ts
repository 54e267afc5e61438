export { ClusterState } from './clusterState';
export { resolveExpression, validateIndexName } from './indexNames';
export { renderSettings, normalizeSettings, applySettings, defaultIndexSettings } from './indexSettings';
export type { IndexState, MetaEvent } from './clusterState';
export type { IndexSettings } from './indexSettings';
export type { ResolveOptions } from './indexNames';
