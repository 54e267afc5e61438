import type { NatsConnection } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { EVENT_STREAM, StreamFollower, subjects, type Envelope, type LoggedMessage } from '../../streams';
import { applyContext, type ContextKind, type ContextState } from '../../streams/evolve';
import { readCompactedState } from '../../streams/compactedState';
import type { ContextRecord } from './registry';

const dec = new TextDecoder();
const MAX_ENDED = 100_000;

/**
 * Every scroll context and PIT of the cluster, as the lifecycle log tells them: each node folds the
 * scroll and PIT facts of ES_EVT as they are appended (one resumable ordered consumer), so any node
 * knows any context's pinned searchers, request, owner principal and owner node, whichever node
 * opened it. Pages are served from this (the pinned searchers are location-independent); the owner
 * node is told of each use (commands), and contexts of a dead owner are found here for adoption.
 */
/**
 * An ended context as the directory remembers it: why and when it ended, who owned it, on which
 * indices; not its pinned searchers or its scroll's request (up to 100,000 are kept, and they go into
 * every context checkpoint).
 */
function slim(s: ContextState): ContextState {
  if (!s.pinned.length && s.request === undefined && s.total === undefined) return s;
  const { request: _r, total: _t, ...rest } = s;
  return { ...rest, pinned: [] };
}

export class ContextDirectory {
  private readonly states = new Map<string, ContextState>();
  /** Ended contexts, oldest first (bounded; the 404 says why they are gone). */
  private ended = 0;
  private endedOrder: string[] = [];
  private endedHead = 0;
  private readonly follower: StreamFollower;
  /** Scroll paging data rebuilt from an opened fact, per context (parsed once). */
  private readonly scrolls = new Map<string, NonNullable<ContextRecord['scroll']>>();
  private readonly listeners: Array<(s: ContextState) => void> = [];
  private readonly others = new Map<string, (e: Envelope) => void>();

  constructor(nc: NatsConnection, log: Logger) {
    this.follower = new StreamFollower(nc, EVENT_STREAM, subjects.allFacts, (m) => this.dispatch(m), log);
    // Facts removed while this node was away: open contexts come back from the compacted state.
    this.follower.onGap = () =>
      void readCompactedState(nc)
        .then((cs) => {
          for (const st of cs.contexts) if ((this.states.get(st.id)?.seq ?? 0) < st.seq) this.put(st, false);
        })
        .catch((e: Error) => log.error({ err: e.message }, 'contexts could not be reloaded from the compacted state'));
  }

  /** Starts from the states folded at start-up (checkpoint + log up to `afterSeq`), then follows. */
  async start(states: Iterable<ContextState>, afterSeq: number): Promise<void> {
    for (const s of states) this.put(s, s.status !== 'open');
    await this.follower.start(afterSeq);
  }

  async stop(): Promise<void> {
    await this.follower.stop();
  }

  private dispatch(m: LoggedMessage): void {
    // es.v1.evt.<aggregate>.<id>.<fact>
    const dot = m.subject.indexOf('.', 'es.v1.evt.'.length);
    const aggregate = m.subject.slice('es.v1.evt.'.length, dot);
    if (aggregate !== 'scroll' && aggregate !== 'pit') {
      // async searches ride the same consumer (actors/contexts/asyncSearches.ts folds them)
      const fn = this.others.get(aggregate);
      if (fn) fn(JSON.parse(dec.decode(m.data)) as Envelope);
      return;
    }
    const e = JSON.parse(dec.decode(m.data)) as Envelope;
    this.apply(e);
  }

  /** Folds one fact (also called by the local registry right after its own appends). */
  apply(e: Envelope): void {
    const before = this.states.get(e.aggregateId);
    const seq = before?.seq ?? 0;
    const wasOpen = before?.status === 'open';
    const next = applyContext(before, e); // changes `before` in place
    if (!next || next.seq === seq) return;
    const endedNow = next.status !== 'open' && (wasOpen || !before);
    this.put(next, endedNow);
    if (endedNow) this.scrolls.delete(next.id);
    for (const fn of this.listeners) fn(next);
  }

  private put(s: ContextState, endedNow: boolean): void {
    this.states.set(s.id, s.status === 'open' ? s : slim(s));
    if (endedNow) this.bound(s.id);
  }

  /**
   * Keeps at most MAX_ENDED ended contexts (the oldest go first), from a queue of ids in the order
   * they ended: iterating the Map from its start for each one skips the holes its deletions leave,
   * which made a start-up over a million facts quadratic.
   */
  private bound(id: string): void {
    this.endedOrder.push(id);
    if (++this.ended <= MAX_ENDED) return;
    while (this.ended > MAX_ENDED && this.endedHead < this.endedOrder.length) {
      const old = this.endedOrder[this.endedHead++];
      if (this.states.get(old)?.status === 'open' || !this.states.delete(old)) continue;
      this.ended--;
    }
    if (this.endedHead > 65_536) {
      this.endedOrder = this.endedOrder.slice(this.endedHead);
      this.endedHead = 0;
    }
  }

  /** Every fact of another aggregate the follower reads (`asyncsearch`), as it is appended. */
  onFacts(aggregate: string, fn: (e: Envelope) => void): void {
    this.others.set(aggregate, fn);
  }

  /** A change of a context (opened, extended, adopted, ended). */
  onChange(fn: (s: ContextState) => void): void {
    this.listeners.push(fn);
  }

  get(id: string): ContextState | undefined {
    return this.states.get(id);
  }

  /** Waits until the follower has read everything appended so far (a context opened a moment ago elsewhere). */
  async catchUp(timeoutMs = 3_000): Promise<void> {
    await this.follower.reachEnd(timeoutMs).catch(() => undefined);
  }

  /** Stream sequence of the last fact folded. */
  get position(): number {
    return this.follower.position;
  }

  open(kind?: ContextKind): ContextState[] {
    return [...this.states.values()].filter((s) => s.status === 'open' && (!kind || s.kind === kind));
  }

  /** Every context the directory remembers (open and ended), for checkpoints. */
  all(): ContextState[] {
    return [...this.states.values()];
  }

  /** Paging data of a scroll, rebuilt once from its opened fact. */
  scrollOf(s: ContextState, rebuild: (request: NonNullable<ContextState['request']>, total: ContextState['total']) => NonNullable<ContextRecord['scroll']>) {
    let sc = this.scrolls.get(s.id);
    if (!sc && s.request) this.scrolls.set(s.id, (sc = rebuild(s.request, s.total)));
    return sc;
  }
}
