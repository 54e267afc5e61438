export { subjects, Aggregate, ShardOp, PRIMARY_OPS, EVENT_STREAM, DATA_STREAM } from './subjects';
export { fencedAppend, Fenced, AppendUncertain } from './fencedAppend';
export type { FencedAppendOptions } from './fencedAppend';
export { makeEnvelope, aggregateOf, factOf, upcast } from './envelope';
export { Bus } from './bus';
export { ensureStreams, readStream, readFacts, READ_MAX_BYTES } from './eventLog';
export type { Envelope, MakeEnvelope } from './envelope';
export type { LoggedMessage, ReadOptions, LogOptions } from './eventLog';
export type { Slice, ReleaseReason, Owner, ScrollFact, PitFact } from './events';
