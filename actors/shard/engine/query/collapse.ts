/**
 * Field collapsing on a shard (ES's CollapsingTopDocsCollector): the best hit of each value of a
 * single-valued keyword or numeric field, the groups ranked by their best hit; each hit carries
 * its group value in `fields`. The coordinator keeps one hit per value across shards.
 */
import { illegalArgument } from '../../../wire/esErrors';
import { topK } from '../../../wire/heap';
import type { ShardHit } from '../types';
import type { QueryContext } from './qnode';

const NUMERIC = new Set(['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long', 'date', 'date_nanos', 'boolean']);

/** The collapse value of each doc (null when it has none); throws ES's errors for unusable fields. */
export function collapseKey(ctx: QueryContext, field: string): (doc: number) => string | number | bigint | boolean | null {
  const def = ctx.store.mapping.field(field);
  if (!def) throw illegalArgument(`no mapping found for \`${field}\` in order to collapse on`);
  if (def.type !== 'keyword' && !NUMERIC.has(def.type)) {
    throw illegalArgument(`unknown type for collapse field \`${field}\`, only keywords and numbers are accepted`);
  }
  if (def.params.doc_values === false) throw illegalArgument(`cannot collapse on field \`${field}\` without \`doc_values\``);
  return (doc) => {
    const vs = ctx.store.values(def.path, doc);
    if (vs.length > 1) throw illegalArgument(`failed to collapse ${doc}, the collapse field must be single valued`);
    return vs.length ? vs[0] : null;
  };
}

/** The top `k` groups' best docs, in order, from docs fed in any order (`cmp`: hit order). */
export function collapseTop(k: number, cmp: (a: number, b: number) => number, key: (doc: number) => unknown, feed: (push: (d: number) => void) => void): number[] {
  const best = new Map<string, number>();
  feed((d) => {
    const g = JSON.stringify(String(key(d)) + typeof key(d));
    const cur = best.get(g);
    if (cur === undefined || cmp(d, cur) < 0) best.set(g, d);
  });
  return topK(k, cmp, (push) => {
    for (const d of best.values()) push(d);
  });
}

/** Adds the collapse value to each hit's `fields`. */
export function addCollapseField(field: string, key: (doc: number) => unknown, hits: ShardHit[]): void {
  for (const h of hits) {
    const v = key(h.doc);
    const member = `${JSON.stringify(field)}:[${typeof v === 'bigint' ? v.toString() : JSON.stringify(v ?? null)}]`;
    h.fields = h.fields ? `{${member},${h.fields.slice(1)}` : `{${member}}`;
  }
}
