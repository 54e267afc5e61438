export { ContextRegistry } from './registry';
export type { ContextRecord, ContextKind, PinnedShard, Tombstone, EndReason } from './registry';
export { reviveContexts } from './revive';
export type { ReviveResult } from './revive';
export { writeCheckpoint, readCheckpoint } from './checkpoint';
export type { ContextCheckpoint } from './checkpoint';
