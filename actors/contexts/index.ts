export { ContextRegistry } from './registry';
export type { ContextRecord, ContextKind, PinnedShard, Tombstone, EndReason } from './registry';
