import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { EVENT_STREAM, type Envelope, type Owner } from '../../streams';
import { readFactBatches } from '../../streams/factReader';
import { emptyWorld, evolve, type World } from '../../streams/evolve';
import { replayLog } from '../../streams/replayLog';
import { stateRows, type StateRow } from '../../streams/stateRows';
import { parseTime } from '../../streams/time';
import { EsError, illegalArgument } from '../wire/esErrors';
import { seesAggregate, seesApiKey, type Access } from './access';
import { factView, type FactView } from './redact';

/** Rows of an "as of" answer beyond this are counted, not sent. */
export const MAX_STATE_ROWS = 1000;

/** A time parameter the way `npm run replay --at` reads it (ISO-8601, epoch ms, `now`, `-15m`); 400 otherwise. */
export function timeParam(name: string, v: string | undefined, fallback: number, now = Date.now()): number {
  if (v === undefined || v === '') return fallback;
  let t: number;
  try {
    t = parseTime(v, now);
  } catch {
    t = NaN;
  }
  // ECMAScript dates end at ±8.64e15 ms.
  if (!Number.isFinite(t) || Math.abs(t) > 8.64e15) {
    throw illegalArgument(`failed to parse [${name}] with value [${v.slice(0, 100)}]: use ISO-8601, epoch milliseconds, now, or -<n><ms|s|m|h|d>`);
  }
  return t;
}

/**
 * Folds that read the whole log run at most `max` at a time on this node; a few more wait, the rest
 * get ES's 429 (a slider dragged over a million-fact log must not start a read per position).
 */
export class FoldGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max = 2, private readonly queue = 4) {}

  async run<T>(fold: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) {
      if (this.waiting.length >= this.queue) {
        throw new EsError('es_rejected_execution_exception', 429, `rejected console fold: ${this.running} running and ${this.waiting.length} waiting on this node`);
      }
      await new Promise<void>((r) => this.waiting.push(r));
    } else this.running++;
    try {
      return await fold();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}

/** First and last fact times of the lifecycle log (the slider's range). */
export async function logBounds(nc: NatsConnection) {
  const info = await (await jetstreamManager(nc)).streams.info(EVENT_STREAM);
  const st = info.state;
  return {
    messages: st.messages,
    first: st.messages ? Date.parse(st.first_ts) : null,
    last: st.messages ? Date.parse(st.last_ts) : null,
    /** Facts before `first` were removed once compacted (events.retention): history starts there. */
    compacted: st.first_seq > 1,
    /** Where the kept history starts (now, when every fact was removed). */
    historyFrom: st.first_seq > 1 ? (st.messages ? Date.parse(st.first_ts) : Date.now()) : null,
  };
}

/** Why a moment cannot be shown from the kept history, or undefined (the replay CLI says the same). */
export function olderThanHistory(at: number, b: { historyFrom: number | null }): string | undefined {
  if (b.historyFrom === null || at >= b.historyFrom) return undefined;
  return `the asked-for moment ${new Date(at).toISOString()} is older than the kept history: the lifecycle log keeps facts from ${new Date(b.historyFrom).toISOString()} on (older ones were removed once compacted, events.retention), so the state then cannot be rebuilt`;
}

/** The part of a world `access` may see (contexts need monitor, API keys their owner or manage_api_key…). */
export function visibleWorld(w: World, access: Access): World {
  const out = emptyWorld();
  out.events = w.events;
  out.lastTime = w.lastTime;
  const copy = <K extends 'scroll' | 'pit' | 'asyncsearch' | 'token' | 'servicetoken' | 'user' | 'role'>(k: K) => {
    if (seesAggregate(access, k)) for (const [id, v] of w[k] as Map<string, unknown>) (out[k] as Map<string, unknown>).set(id, v);
  };
  (['scroll', 'pit', 'asyncsearch', 'token', 'servicetoken', 'user', 'role'] as const).forEach(copy);
  for (const [id, k] of w.apikey) if (seesApiKey(access, k.owner)) out.apikey.set(id, k);
  return out;
}

/** Live statuses (an async search `running`, or `completed` with its result kept). */
const LIVE = new Set(['open', 'active', 'refreshed', 'enabled', 'present', 'running', 'completed']);

/**
 * Every context and credential as it stood at `at`: the log folded up to that moment by the same
 * code as `npm run replay -- --at` (streams/replayLog.ts, streams/evolve.ts), rows as it prints
 * them (streams/stateRows.ts), narrowed to what `access` may see. Live rows come first; ended
 * ones only with `ended`.
 */
export async function stateAt(nc: NatsConnection, at: number, access: Access, opts: { ended: boolean; aggregate?: string }) {
  const bounds = await logBounds(nc);
  const note = olderThanHistory(at, bounds);
  if (note) throw illegalArgument(note);
  const source = readFactBatches(nc, opts.aggregate ? { filterSubject: `es.v1.evt.${opts.aggregate}.>` } : {});
  const o = await replayLog(source, { untilMs: at, check: false, aggregate: opts.aggregate });
  const rows = stateRows(visibleWorld(o.world, access), { nowMs: at });
  const totals: Record<string, Record<string, number>> = {};
  for (const r of rows) (totals[r.aggregate] ??= {})[r.status] = (totals[r.aggregate][r.status] ?? 0) + 1;
  const live = rows.filter((r) => LIVE.has(r.status));
  const shown: StateRow[] = opts.ended ? [...live, ...rows.filter((r) => !LIVE.has(r.status))] : live;
  return {
    at, read: o.read, folded: o.folded, totals, truncated: shown.length > MAX_STATE_ROWS, rows: shown.slice(0, MAX_STATE_ROWS),
    ...(bounds.historyFrom !== null ? { history_from: new Date(bounds.historyFrom).toISOString() } : {}),
  };
}

const ownerKey = (o: Owner | undefined) => (o ? `${o.username}\u0000${o.realm}` : '');

/** A readable owner name: `bob (native1)`, `bob (API key abc)`. */
export function ownerLabel(o: Owner | null | undefined): string {
  if (!o) return '(no owner: security off)';
  if (o.realm.startsWith('_es_api_key/')) return `${o.username} (API key ${o.realm.slice('_es_api_key/'.length)})`;
  return `${o.username} (${o.realm})`;
}

/**
 * Open contexts over time per owner: the peak number each owner held open in each of `buckets`
 * equal intervals of [from, to], from the scroll and PIT facts of the whole log (a context opened
 * before `from` still counts). At most `maxOwners` owners (largest peaks), plus the peak of all.
 */
export async function openContextsSeries(nc: NatsConnection, opts: { from: number; to: number; buckets: number; maxOwners?: number }) {
  const opened = new Map<string, { t: number; owner?: Owner }>();
  const events: Array<{ t: number; key: string; d: 1 | -1 }> = [];
  const owners = new Map<string, Owner | null>();
  for (const kind of ['scroll', 'pit']) {
    for await (const batch of readFactBatches(nc, { filterSubject: `es.v1.evt.${kind}.>` })) {
      for (const e of batch) {
        const fact = e.type.slice(e.type.indexOf('.') + 1);
        const t = Date.parse(e.time);
        if (fact === 'opened') {
          const owner = (e.data as { owner?: Owner }).owner;
          opened.set(e.aggregateId, { t, owner });
          owners.set(ownerKey(owner), owner ?? null);
          events.push({ t, key: ownerKey(owner), d: 1 });
        } else if (fact === 'expired' || fact === 'cleared' || fact === 'closed' || fact === 'released') {
          const o = opened.get(e.aggregateId);
          if (!o) continue; // opened before the retention window: never counted
          opened.delete(e.aggregateId);
          events.push({ t, key: ownerKey(o.owner), d: -1 });
        }
      }
    }
  }
  events.sort((a, b) => a.t - b.t || a.d - b.d);
  const { from, to, buckets } = opts;
  const width = (to - from) / buckets;
  const current = new Map<string, number>();
  let total = 0;
  const peaks = new Map<string, number[]>();
  const totalPeaks: number[] = [];
  let i = 0;
  const bump = (key: string, b: number, v: number) => {
    let arr = peaks.get(key);
    if (!arr) peaks.set(key, (arr = new Array(buckets).fill(0)));
    if (v > arr[b]) arr[b] = v;
  };
  for (; i < events.length && events[i].t < from; i++) {
    current.set(events[i].key, (current.get(events[i].key) ?? 0) + events[i].d);
    total += events[i].d;
  }
  for (let b = 0; b < buckets; b++) {
    const end = b === buckets - 1 ? to + 1 : from + (b + 1) * width;
    for (const [k, v] of current) if (v > 0) bump(k, b, v);
    totalPeaks[b] = total;
    for (; i < events.length && events[i].t < end; i++) {
      const ev = events[i];
      const v = (current.get(ev.key) ?? 0) + ev.d;
      current.set(ev.key, v);
      total += ev.d;
      if (v > 0) bump(ev.key, b, v);
      if (total > totalPeaks[b]) totalPeaks[b] = total;
    }
  }
  const series = [...peaks.entries()]
    .map(([key, values]) => ({ owner: owners.get(key) ?? null, label: ownerLabel(owners.get(key)), values, peak: Math.max(...values) }))
    .filter((s) => s.peak > 0)
    .sort((a, b) => b.peak - a.peak || (a.label < b.label ? -1 : 1));
  const max = opts.maxOwners ?? 8;
  return {
    from,
    to,
    buckets,
    bucket_ms: width,
    series: series.slice(0, max),
    other_owners: Math.max(0, series.length - max),
    total: totalPeaks,
  };
}

const CREDENTIALS = ['apikey', 'token', 'servicetoken'] as const;
const ID = /^[A-Za-z0-9_-]{1,128}$/;

/**
 * One credential's life from the log: its facts (redacted: no hash, no sealed pair, no descriptors)
 * and the state they fold to. Someone else's API key answers as if it did not exist (ES's GET
 * api_key does the same), so ids cannot be probed.
 */
export async function credentialHistory(nc: NatsConnection, aggregate: string, id: string, access: Access) {
  if (!(CREDENTIALS as readonly string[]).includes(aggregate)) {
    throw illegalArgument(`unknown credential type [${aggregate}], expected one of [${CREDENTIALS.join(', ')}]`);
  }
  if (!ID.test(id)) throw illegalArgument(`invalid credential id [${id.slice(0, 200)}]`);
  const facts: Envelope[] = [];
  for await (const batch of readFactBatches(nc, { filterSubject: `es.v1.evt.${aggregate}.${id}.>` })) facts.push(...batch);
  facts.sort((a, b) => a.seq - b.seq);
  let state: unknown;
  for (const f of facts) state = evolve(state, f);
  const views: FactView[] = facts.map((f) => factView(f));
  const owner = views.find((v) => v.owner)?.owner ?? null;
  const allowed = aggregate === 'apikey' ? seesApiKey(access, owner ?? undefined) : seesAggregate(access, aggregate);
  if (!state || !allowed) {
    throw new EsError('resource_not_found_exception', 404, `no ${aggregate} [${id}] in the lifecycle log`);
  }
  const st = state as { status?: string; name?: string; account?: string };
  return {
    aggregate,
    id,
    status: st.status ?? null,
    ...(st.name !== undefined ? { name: st.name } : {}),
    ...(st.account !== undefined ? { account: st.account } : {}),
    owner,
    history: views,
  };
}
