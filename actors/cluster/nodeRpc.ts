import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { Connectivity, NatsUnavailable, subjects } from '../../streams';
import { asEsError, errorFromWire, errorToWire, type EsErrorBody } from '../wire/esErrors';
import { parseJson, stringify } from '../wire/json';

const enc = new TextEncoder();
const dec = new TextDecoder();

type Reply = { ok: true; result: unknown } | { ok: false; error: EsErrorBody };

/**
 * Node-addressed request/reply (`es.v1.node.<id>.<op>`): what one node asks every other node
 * (its node stats, its open contexts, …). One wildcard subscription per node.
 */
export function serveNode(nc: NatsConnection, nodeId: string, handlers: Record<string, (body: unknown) => unknown | Promise<unknown>>): Subscription {
  const prefix = subjects.node(nodeId, '');
  return nc.subscribe(`${prefix}*`, {
    callback: (err, msg) => {
      if (err) return;
      const op = msg.subject.slice(prefix.length);
      void (async () => {
        let reply: Reply;
        try {
          const h = handlers[op];
          if (!h) throw new Error(`unknown node op [${op}]`);
          reply = { ok: true, result: await h(msg.data.length ? parseJson(dec.decode(msg.data)) : undefined) };
        } catch (e) {
          reply = { ok: false, error: errorToWire(asEsError(e)) };
        }
        msg.respond(enc.encode(stringify(reply)));
      })();
    },
  });
}

/** Asks each node; a node that does not answer in time is reported as a failure, not thrown. */
export async function callNodes<T>(nc: NatsConnection, ids: string[], op: string, body?: unknown, timeoutMs = 5_000): Promise<Map<string, { ok: true; result: T } | { ok: false; error: Error }>> {
  const out = new Map<string, { ok: true; result: T } | { ok: false; error: Error }>();
  if (ids.length && !(await Connectivity.of(nc).waitUp())) {
    // cut off from NATS: no node can answer (failures at once, not after the timeout)
    for (const id of ids) out.set(id, { ok: false, error: new NatsUnavailable(`node [${id}] cannot be asked`) });
    return out;
  }
  await Promise.all(
    ids.map(async (id) => {
      try {
        const m = await nc.request(subjects.node(id, op), body === undefined ? new Uint8Array() : enc.encode(stringify(body)), { timeout: timeoutMs });
        const r = parseJson<Reply>(dec.decode(m.data));
        out.set(id, r.ok ? { ok: true, result: r.result as T } : { ok: false, error: errorFromWire(r.error) });
      } catch (e) {
        out.set(id, { ok: false, error: e as Error });
      }
    }),
  );
  return out;
}
