export { ContextRegistry } from './registry';
export { ContextDirectory } from './directory';
export { ContextService, LEGACY_OWNER } from './service';
export type { ContextHandle } from './service';
export type { ContextRecord, ContextKind, PinnedShard, Tombstone, EndReason } from './registry';
export { reviveContexts } from './revive';
export type { ReviveResult } from './revive';
export { writeCheckpoint, readCheckpoint } from './checkpoint';
export type { ContextCheckpoint } from './checkpoint';
