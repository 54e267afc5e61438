import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import { subjects, type Owner } from '../../streams';
import { parseFact } from '../../streams/factPush';
import type { Envelope } from '../../streams';
import { factView, ownerIn, type FactView } from './redact';

/** A fact as the hub hands it out: the envelope (for authorization) and its console view. */
export interface HubFact {
  envelope: Envelope;
  view: FactView;
}

/** Looks up what later facts of an aggregate do not repeat (the live registries of this node). */
export interface Resolver {
  context(id: string): { owner?: Owner; indices: string[] } | undefined;
  apiKeyOwner(id: string): Owner | undefined;
  tokenSubject(id: string): Owner | undefined;
  serviceTokenAccount(id: string): Owner | undefined;
  /** Contexts open on this node now (seeded when the hub starts: their end facts name no owner). */
  openContexts(): Array<{ id: string; owner?: Owner; indices: string[] }>;
}

const MAX_REMEMBERED = 50_000;
const RECENT_IDS = 4096;

/**
 * One core NATS subscription on `es.v1.evt.>` for every console feed of this node (started with the
 * first listener, dropped with the last). Facts of every node arrive here, so the feed is
 * cluster-wide. Each fact is resolved once: an `extended` or `expired` fact names only its
 * aggregate id, so the owner and indices come from the `opened`/`created` fact the hub saw, or from
 * this node's registries.
 */
export class FactHub {
  private sub?: Subscription;
  private readonly listeners = new Set<(f: HubFact) => void>();
  /** aggregate id -> owner and indices, from creation facts (bounded, oldest dropped first). */
  private readonly known = new Map<string, { owner?: Owner; indices: string[] }>();
  /** Envelope ids of the latest facts (duplicates are dropped). */
  private readonly seen = new Set<string>();

  constructor(private readonly nc: NatsConnection, private readonly resolver: Resolver, private readonly log: Logger) {}

  /** Adds a listener; returns its removal. */
  listen(fn: (f: HubFact) => void): () => void {
    this.listeners.add(fn);
    if (!this.sub) this.start();
    return () => {
      this.listeners.delete(fn);
      if (!this.listeners.size) this.stop();
    };
  }

  get listening(): number {
    return this.listeners.size;
  }

  private start(): void {
    for (const c of this.resolver.openContexts()) this.remember(c.id, { owner: c.owner, indices: c.indices });
    this.sub = this.nc.subscribe(subjects.allFacts, {
      callback: (err, msg) => {
        if (err) return; // closing
        let e: Envelope;
        try {
          e = parseFact(msg.data, msg.subject);
        } catch (x) {
          this.log.warn({ subject: msg.subject, err: (x as Error).message }, 'console: not a fact');
          return;
        }
        // A publish retried after a lost ack reaches core subscribers twice (JetStream stores it once).
        if (this.seen.has(e.id)) return;
        this.seen.add(e.id);
        if (this.seen.size > RECENT_IDS) this.seen.delete(this.seen.values().next().value as string);
        const f = { envelope: e, view: factView(e, this.resolve(e)) };
        for (const l of this.listeners) {
          try {
            l(f);
          } catch (x) {
            this.log.warn({ err: x }, 'console: feed listener failed');
          }
        }
      },
    });
  }

  /** Owner and indices of the fact's aggregate. */
  resolve(e: Envelope): { owner?: Owner; indices?: string[] } {
    const aggregate = e.type.slice(0, e.type.indexOf('.'));
    const named = ownerIn(aggregate, e.data);
    const indices = (e.data as { indices?: unknown })?.indices;
    if (named || Array.isArray(indices)) {
      this.remember(e.aggregateId, { owner: named, indices: Array.isArray(indices) ? (indices as string[]) : [] });
      return { owner: named, indices: Array.isArray(indices) ? (indices as string[]) : [] };
    }
    const hit = this.known.get(e.aggregateId);
    if (hit) return hit;
    const r = this.resolver;
    const found =
      aggregate === 'scroll' || aggregate === 'pit' ? r.context(e.aggregateId)
      : aggregate === 'apikey' ? { owner: r.apiKeyOwner(e.aggregateId), indices: [] }
      : aggregate === 'token' ? { owner: r.tokenSubject(e.aggregateId), indices: [] }
      : aggregate === 'servicetoken' ? { owner: r.serviceTokenAccount(e.aggregateId), indices: [] }
      : undefined;
    if (found && (found.owner || found.indices.length)) this.remember(e.aggregateId, found);
    return found ?? {};
  }

  private remember(id: string, v: { owner?: Owner; indices: string[] }): void {
    this.known.delete(id);
    this.known.set(id, v);
    if (this.known.size > MAX_REMEMBERED) this.known.delete(this.known.keys().next().value as string);
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
  }
}
