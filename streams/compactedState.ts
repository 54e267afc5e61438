import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Aggregate, EVENT_STREAM, STATE_STREAM, subjects } from './subjects';
import { readStream } from './eventLog';
import type { Envelope } from './envelope';
import type { AsyncSearchState, ContextState } from './evolve';

/**
 * The compacted state in ES_STATE (node-only; streams/subjects.ts): one message per live aggregate
 * and the ES_EVT position it covers. Credentials are kept as their facts (as appended: secret fields
 * sealed), contexts as their folded state. Start-up reads it plus the ES_EVT tail after `seq`.
 */
export interface CompactedState {
  /** ES_EVT sequence up to which every fact is reflected in the states below (0: nothing compacted yet). */
  seq: number;
  /** Credential facts (users, roles, API keys, tokens, service tokens), oldest aggregate first. */
  facts: Envelope[];
  /** Open scroll contexts and PITs. */
  contexts: ContextState[];
  /** Async searches not ended (running or completed), folded. */
  asyncSearches: AsyncSearchState[];
  /**
   * Whether the state keeps async searches (written by a compactor that does): an ES_STATE from an
   * earlier build does not, and its readers fold the async search facts of the whole log instead.
   */
  asyncSearchesKept: boolean;
}

/** What an ES_STATE message holds. */
export type StateMessage =
  | { kind: 'facts'; facts: Envelope[] }
  | { kind: 'context'; state: ContextState }
  | { kind: 'asyncsearch'; state: AsyncSearchState }
  | { kind: 'position'; seq: number; at: number; node: string; asyncSearches?: true };

/** Aggregates kept as their facts (nodes: only their last few, for the sequence of their next fact). */
export const CREDENTIAL_AGGREGATES: ReadonlySet<string> = new Set([Aggregate.User, Aggregate.Role, Aggregate.ApiKey, Aggregate.Token, Aggregate.ServiceToken]);
export const NODE_FACTS_KEPT = 4;
/** Aggregates kept folded while open. */
export const CONTEXT_AGGREGATES: ReadonlySet<string> = new Set([Aggregate.Scroll, Aggregate.Pit]);
/** Async searches are kept folded while not ended. */
export const ASYNC_SEARCH_AGGREGATE: string = Aggregate.AsyncSearch;

const dec = new TextDecoder();

/** Reads ES_STATE: the position first, then every state (a state newer than the position is harmless: folds skip what they have). */
export async function readCompactedState(nc: NatsConnection, filterSubject?: string): Promise<CompactedState> {
  const jsm = await jetstreamManager(nc);
  for (let attempt = 0; ; attempt++) {
    const pos = await readPosition(nc);
    const out: CompactedState = { seq: pos?.seq ?? 0, facts: [], contexts: [], asyncSearches: [], asyncSearchesKept: pos?.asyncSearches === true };
    for await (const m of readStream(nc, STATE_STREAM, filterSubject ? { filterSubject } : {})) {
      if (m.subject === subjects.statePosition) continue;
      const s = JSON.parse(dec.decode(m.data)) as StateMessage;
      if (s.kind === 'facts') for (const f of s.facts) out.facts.push(f);
      else if (s.kind === 'context') out.contexts.push(s.state);
      else if (s.kind === 'asyncsearch') out.asyncSearches.push(s.state);
    }
    // The compactor may have written a newer position and removed the facts after ours meanwhile:
    // then what was read may lack them, and the tail no longer has them. Read again.
    const first = (await jsm.streams.info(EVENT_STREAM)).state.first_seq;
    if (first <= out.seq + 1 || attempt >= 5) return out;
  }
}

/** The ES_EVT sequence the compacted state covers (0 when nothing was compacted yet). */
export async function compactedPosition(nc: NatsConnection): Promise<number> {
  return (await readPosition(nc))?.seq ?? 0;
}

/** The last position message of ES_STATE, if any. */
async function readPosition(nc: NatsConnection): Promise<Extract<StateMessage, { kind: 'position' }> | undefined> {
  const jsm = await jetstreamManager(nc);
  const pos = await jsm.streams.getMessage(STATE_STREAM, { last_by_subj: subjects.statePosition }).catch(() => null);
  return pos ? (JSON.parse(dec.decode(pos.data)) as Extract<StateMessage, { kind: 'position' }>) : undefined;
}

/** The kept history of ES_EVT: its first sequence and when that fact was stored (facts before it were compacted away). */
export async function keptHistory(nc: NatsConnection): Promise<{ firstSeq: number; firstTime?: string; lastSeq: number }> {
  const st = (await (await jetstreamManager(nc)).streams.info(EVENT_STREAM)).state;
  return { firstSeq: st.first_seq, lastSeq: st.last_seq, ...(st.messages ? { firstTime: st.first_ts } : {}) };
}

/**
 * Whether start-up may fold a local checkpoint taken at ES_EVT `seq` plus the log after it: only when
 * nothing after `seq` was removed (the compactor removes facts it has compacted, older than the
 * retention). Otherwise the compacted state is the starting point.
 */
export const checkpointUsable = (seq: number, firstSeq: number): boolean => seq + 1 >= firstSeq;
