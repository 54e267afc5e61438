import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
import type { Logger } from 'pino';
import { v5 as uuidv5 } from 'uuid';
import { Aggregate, makeEnvelope, readFacts, subjects, type Envelope, type NodeJoinedData, type NodeLeftData } from '../../streams';
import { readCompactedState } from '../../streams/compactedState';
import { evolveNode, type NodeState } from '../../streams/evolve';
import type { Membership } from './membership';

/** Namespace of the uuid v5 message ids of node facts. */
const NODE_FACT_NS = '257f6261-c4db-4153-bf68-fb2af305c1f3';

/**
 * The envelope id (and Nats-Msg-Id) of a node's fact `seq`: the same whoever appends it, so when the
 * node itself and the allocator lease holder both append a node's next fact, JetStream stores one
 * (the same idea as the credential facts' `factMsgId`).
 */
export const nodeFactMsgId = (nodeId: string, seq: number) => uuidv5(`node:${nodeId}:${seq}`, NODE_FACT_NS);

/**
 * Node facts (all nodes, or one): each node's last facts from the compacted state (ES_STATE), then
 * ES_EVT after the position it covers (older facts may have aged out: actors/compaction).
 */
export async function readNodes(nc: NatsConnection, nodeId?: string): Promise<Map<string, NodeState>> {
  const nodes = new Map<string, NodeState>();
  const fold = (e: Envelope) => {
    const next = evolveNode(nodes.get(e.aggregateId), e);
    if (next) nodes.set(e.aggregateId, next);
  };
  const compacted = await readCompactedState(nc, nodeId ? subjects.state(Aggregate.Node, nodeId) : `es.v1.state.${Aggregate.Node}.>`);
  for (const e of compacted.facts) fold(e);
  const filterSubject = nodeId ? subjects.factsOf(Aggregate.Node, nodeId) : subjects.factsOfType(Aggregate.Node);
  for await (const e of readFacts(nc, { filterSubject, ...(compacted.seq ? { startSeq: compacted.seq + 1 } : {}) })) fold(e);
  return nodes;
}

const enc = new TextEncoder();
const dec = new TextDecoder();

/**
 * Appends fact `seq` of node `nodeId`, appended by node `by`; resolves `false` when another node had
 * already appended that `seq` (JetStream de-duplicated it).
 */
export async function appendNodeFact(
  js: JetStreamClient,
  nodeId: string,
  seq: number,
  fact: { type: 'node.joined'; data: NodeJoinedData } | { type: 'node.left'; data: NodeLeftData },
  by: string,
  timeoutMs = 5_000,
): Promise<boolean> {
  const env = { ...makeEnvelope({ type: fact.type, aggregateId: nodeId, seq, data: fact.data, node: by }), id: nodeFactMsgId(nodeId, seq) };
  const ack = await js.publish(subjects.fact(Aggregate.Node, nodeId, fact.type.slice('node.'.length)), enc.encode(JSON.stringify(env)), { msgID: env.id, timeout: timeoutMs });
  return !ack.duplicate;
}

export interface NodeFactsOptions {
  nc: NatsConnection;
  log: Logger;
  /** This node's membership: its own record (name, host, HTTP URL, version, start time), who is live, who left how. */
  membership: Membership;
  /** The shard allocator: its lease holder records the nodes that stopped heartbeating. */
  allocator: { readonly leader: boolean };
  /** Bound on each append (default 5 s) and on the clean-stop `left` (3 s). */
  appendTimeoutMs?: number;
}

/**
 * A node's own facts in ES_EVT (aggregate `node`, subject `es.v1.evt.node.<nodeId>.<fact>`):
 *
 * - `node.joined` when the node is up (its HTTP edge listens), continuing the node's own `seq` (a
 *   node restarted on its DATA_DIR keeps its id); again whenever it learns the log took it for gone
 *   while it was alive (a `left` published for it, or one appended while it was cut off);
 * - `node.left {reason: 'stopped'}` at the start of a clean stop;
 * - `node.left {reason: 'timed_out', by, silent_ms}` for another node that stopped heartbeating,
 *   appended by the node holding the allocator lease (also for nodes that went silent while no
 *   lease holder was warm: it looks at every node the log says joined and membership does not see).
 *
 * Message ids are uuid v5 of `node:<id>:<seq>`, so the node and the lease holder (or two holders
 * across a lease handover) racing for the same `seq` store one fact; the loser reads again.
 */
export class NodeFacts {
  private readonly js: JetStreamClient;
  private readonly timeoutMs: number;
  private stopping = false;
  private sub?: Subscription;
  private timer?: NodeJS.Timeout;
  private statusIter?: { stop?(): void };
  private checkedAsLeader = false;
  private reconciling?: Promise<void>;
  private again = false;
  private readonly joining = new Set<Promise<void>>();
  /**
   * Since when this node has been steadily listening: connected to NATS (0 while it is not) and its
   * event loop not stalled. Right after a reconnect, or after the process was paused (a long GC, a
   * frozen VM, SIGSTOP), it has not heard the others' heartbeats for a while and membership takes
   * them all for gone: recording that would write false leaves.
   */
  private steadySince = Date.now();
  /** Last run of this node's own interval: a gap longer than a node timeout means the loop stalled. */
  private lastTick = Date.now();

  constructor(private readonly o: NodeFactsOptions) {
    this.js = jetstream(o.nc);
    this.timeoutMs = o.appendTimeoutMs ?? 5_000;
  }

  private get self() {
    return this.o.membership.record(this.o.membership.id)!;
  }

  async start(): Promise<void> {
    await this.joined(true).catch((e: Error) => this.o.log.warn({ err: e.message }, 'node.joined fact not appended'));
    // A `left` for this node while it runs: the lease holder took it for gone (it was cut off).
    this.sub = this.o.nc.subscribe(subjects.fact(Aggregate.Node, this.o.membership.id, 'left'), {
      callback: (err, msg) => {
        if (err || this.stopping) return;
        let seq = 0;
        try {
          seq = (JSON.parse(dec.decode(msg.data)) as { seq: number }).seq;
        } catch {
          return; // not a fact
        }
        void this.joined(false, seq).catch((e: Error) => this.o.log.warn({ err: e.message }, 'node.joined fact not appended'));
      },
    });
    void this.watchReconnects().catch((e: Error) => this.o.log.debug({ err: e.message }, 'connection status no longer followed'));
    this.o.membership.onLeft(() => {
      if (!this.o.allocator.leader) return;
      if (this.sure()) this.kick();
      else this.checkedAsLeader = false; // the interval looks once this node is sure
    });
    // Becoming the lease holder (the last one may have died with nodes unrecorded): look once, when
    // sure of who is live; again after a failed attempt or a reconnect.
    this.timer = setInterval(() => {
      this.sure(); // notices a stall before anything else asks
      this.lastTick = Date.now();
      if (!this.o.allocator.leader) this.checkedAsLeader = false;
      else if (this.sure() && !this.checkedAsLeader) {
        this.checkedAsLeader = true;
        this.kick();
      }
    }, this.o.membership.heartbeatMs);
    this.timer.unref();
  }

  /**
   * Whether this node knows who is live: it listened for one node timeout (membership `warm`) and
   * its connection has been up that long (after a reconnect the others' heartbeats are still to come).
   */
  private sure(): boolean {
    const now = Date.now();
    const timeout = this.o.membership.timeoutMs;
    if (this.steadySince > 0 && now - this.lastTick > timeout) this.steadySince = now; // woke from a stall
    return this.o.membership.warm && this.steadySince > 0 && now - this.steadySince >= timeout;
  }

  /** Facts appended while this node was cut off reach it after the reconnect: it may have been taken for gone. */
  private async watchReconnects(): Promise<void> {
    const it = this.o.nc.status();
    this.statusIter = it as unknown as { stop?(): void }; // a QueuedIterator: stop() ends it
    for await (const st of it) {
      if (this.stopping) return;
      if (st.type === 'disconnect') this.steadySince = 0;
      if (st.type === 'reconnect') {
        this.steadySince = Date.now();
        this.checkedAsLeader = false; // nodes may have died while this one was away: look again once sure
        void this.rejoinAfterReconnect();
      }
    }
  }

  /**
   * After a reconnect, whether the lease holder recorded this node as gone: JetStream may need a
   * moment to answer again, so a failed read is tried again a few times (bounded, about 15 s).
   */
  private async rejoinAfterReconnect(): Promise<void> {
    for (let attempt = 0; attempt < 5 && !this.stopping; attempt++) {
      try {
        await this.joined(false);
        return;
      } catch (e) {
        if (attempt === 4) this.o.log.warn({ err: (e as Error).message }, 'node.joined fact not appended after a reconnect');
        else await new Promise((r) => setTimeout(r, 1_000 * (attempt + 1)));
      }
    }
  }

  /**
   * Appends `node.joined` as the node's next fact: at start always (after a crash the last fact may
   * be a `joined` nobody closed), later only when the log says this node left.
   */
  private joined(atStart: boolean, seenSeq = 0): Promise<void> {
    // Tracked so that a clean stop waits for it: a `joined` landing after the `left` would leave the
    // node looking alive in the log (until the lease holder took it for timed out).
    const p = this.joinedNow(atStart, seenSeq);
    this.joining.add(p);
    void p.catch(() => undefined).finally(() => this.joining.delete(p));
    return p;
  }

  private async joinedNow(atStart: boolean, seenSeq: number): Promise<void> {
    const self = this.self;
    const data: NodeJoinedData = { name: self.name, host: self.host, http_address: httpAddress(self.http), version: self.version, started_at: self.startedAt };
    for (let attempt = 0; attempt < 5 && !this.stopping; attempt++) {
      let st = (await readNodes(this.o.nc, self.id)).get(self.id);
      // A `left` seen as it was published may not be readable from the stream yet.
      for (let wait = 0; (st?.seq ?? 0) < seenSeq && wait < 20 && !this.stopping; wait++) {
        await new Promise((r) => setTimeout(r, 100));
        st = (await readNodes(this.o.nc, self.id)).get(self.id);
      }
      if (!atStart && st?.status !== 'left') return;
      if (await appendNodeFact(this.js, self.id, (st?.seq ?? 0) + 1, { type: 'node.joined', data }, self.id, this.timeoutMs)) {
        if (!atStart) this.o.log.info({ by: st?.by, reason: st?.reason }, 'the log said this node had left: joined again');
        return;
      }
      // Another node appended that seq first (a lease holder recording our previous run's end): read again.
    }
  }

  /** Records the nodes that left without a `left` fact (coalesced). */
  private kick(): void {
    if (this.stopping) return;
    if (this.reconciling) {
      this.again = true;
      return;
    }
    this.reconciling = this.recordLeft()
      .catch((e: Error) => {
        this.checkedAsLeader = false; // the interval tries again
        this.o.log.warn({ err: e.message }, 'node.left facts not appended; trying again');
      })
      .finally(() => {
        this.reconciling = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async recordLeft(): Promise<void> {
    const { membership, allocator } = this.o;
    if (!allocator.leader) return;
    if (!this.sure()) {
      this.checkedAsLeader = false; // the interval looks again once this node is sure
      return;
    }
    const nodes = await readNodes(this.o.nc);
    for (const st of nodes.values()) {
      if (st.status !== 'joined' || st.id === membership.id) continue;
      // Asked again for each node: the read took a while, and a heartbeat may have come meanwhile.
      if (this.stopping || !allocator.leader) return;
      if (!this.sure()) {
        this.checkedAsLeader = false;
        return;
      }
      if (membership.record(st.id)) continue;
      const lastHeard = membership.leftAt.get(st.id);
      const data: NodeLeftData = membership.leftCleanly.has(st.id)
        ? { reason: 'stopped', by: membership.id } // it said it left, but its own fact is missing
        : { reason: 'timed_out', by: membership.id, ...(lastHeard !== undefined ? { silent_ms: Math.max(0, Date.now() - lastHeard) } : {}) };
      const stored = await appendNodeFact(this.js, st.id, st.seq + 1, { type: 'node.left', data }, membership.id, this.timeoutMs);
      if (stored) this.o.log.info({ node: st.id, name: st.name, ...data }, 'recorded that a node left');
    }
  }

  /** Clean stop: `node.left {reason: 'stopped'}` (bounded: a node cut off from NATS stops anyway). */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    clearInterval(this.timer);
    this.statusIter?.stop?.();
    this.sub?.unsubscribe();
    const { nc, membership } = this.o;
    // Cut off from NATS: nothing can be appended; the lease holder records the node as timed out.
    if (nc.isClosed() || this.steadySince === 0) return;
    const left = async () => {
      await this.reconciling;
      await Promise.allSettled([...this.joining]);
      for (let attempt = 0; attempt < 3; attempt++) {
        const st = (await readNodes(nc, membership.id)).get(membership.id);
        if (st?.status === 'left') return; // already recorded (taken for gone while cut off)
        if (await appendNodeFact(this.js, membership.id, (st?.seq ?? 0) + 1, { type: 'node.left', data: { reason: 'stopped' } }, membership.id, 3_000)) return;
      }
    };
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([left(), new Promise<void>((r) => (timer = setTimeout(r, 3_000)))])
      .catch((e: Error) => this.o.log.warn({ err: e.message }, 'node.left fact not appended'))
      .finally(() => clearTimeout(timer));
  }
}

/** `http://127.0.0.1:9200` -> `127.0.0.1:9200` (ES's `http.publish_address` form). */
function httpAddress(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/**
 * Starts a node's facts once its HTTP edge listens (`node.joined`); returns the clean-stop hook
 * (`node.left`), to run before the node leaves membership and disconnects.
 */
export async function startNodeFacts(o: NodeFactsOptions): Promise<() => Promise<void>> {
  const f = new NodeFacts(o);
  await f.start();
  return () => f.stop();
}
