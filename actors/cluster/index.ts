export { ClusterState, DocumentLogGap } from './clusterState';
export { snapshotSettings, KEEP_SNAPSHOTS } from './snapshots';
export { resolveExpression, validateIndexName } from './indexNames';
export { renderSettings, normalizeSettings, applySettings, defaultIndexSettings, docShard, routingSpec, validateCreate } from './indexSettings';
export type { IndexState, MetaEvent, StartResult } from './clusterState';
export type { SnapshotResult, SnapshotSettings } from './snapshots';
export type { IndexSettings, RoutedIndex, SettingsTarget } from './indexSettings';
export type { ResolveOptions } from './indexNames';
