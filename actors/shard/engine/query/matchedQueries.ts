/**
 * `matched_queries` of the hits (ES's MatchedQueriesPhase): every named clause of the query and
 * post_filter (`_name`) is run on its own, and each hit lists the names whose clause matches it,
 * with that clause's score under `include_named_queries_score`. Names come in the iteration order
 * of the Java HashMap ES collects them in, so responses list them as ES does.
 */
import { javaStringHashCode } from '../base/routing';
import { floatValue } from '../index/analysis';
import type { ShardHit } from '../types';
import { evaluate } from './evaluate';
import type { QueryContext } from './qnode';

/** Sets `tail` of the hits that match a named clause. */
export function addMatchedQueries(ctx: QueryContext, hits: ShardHit[], withScores: boolean): void {
  const named = ctx.named;
  if (!named?.length || !hits.length) return;
  const byName = new Map<string, (typeof named)[number]['node']>();
  for (const { name, node } of named) byName.set(name, node); // a repeated name: the last clause wins, as a map put
  const names = javaHashMapOrder([...byName.keys()]);
  const found: Array<Array<[string, number]>> = hits.map(() => []);
  for (const name of names) {
    const r = evaluate(byName.get(name)!, ctx, withScores);
    hits.forEach((h, i) => {
      if (r.bits === null || r.bits.has(h.doc)) found[i].push([name, r.score ? r.score(h.doc) : 1]);
    });
  }
  hits.forEach((h, i) => {
    const m = found[i];
    if (!m.length) return;
    const body = withScores
      ? `{${m.map(([n, s]) => `${JSON.stringify(n)}:${floatValue(s)}`).join(',')}}`
      : `[${m.map(([n]) => JSON.stringify(n)).join(',')}]`;
    const member = `"matched_queries":${body}`;
    h.tail = h.tail ? `${member},${h.tail}` : member;
  });
}

/** The order `new HashMap<>(map)` iterates these keys in: by bucket of the spread hash, then insertion. */
export function javaHashMapOrder(keys: string[]): string[] {
  let cap = 1;
  const want = Math.floor(keys.length / 0.75 + 1);
  while (cap < want) cap *= 2;
  const bucket = (k: string) => {
    const h = javaStringHashCode(k);
    return (h ^ (h >>> 16)) & (cap - 1);
  };
  return keys.map((k, i) => ({ k, i, b: bucket(k) })).sort((x, y) => x.b - y.b || x.i - y.i).map((x) => x.k);
}
