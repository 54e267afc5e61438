/**
 * Sets of action names given as patterns (`*` any run of characters, `?` one character), and the
 * subset test ES runs on automata (Operations.subsetOf) to decide whether one privilege implies
 * another: `{include} minus {exclude}`, unions of those, with exclusions honoured exactly.
 *
 * Action patterns are exact names or prefixes (`cluster:admin/xpack/security/*`). For those the test
 * is exact: a string's membership in every set depends only on which literals it equals or starts
 * with, so checking every literal, and every literal followed by a character no literal continues
 * with, finds a counterexample when there is one. Any other pattern shape is approximated on the
 * safe side (a grant may shrink, a request may grow), so an implication is never claimed wrongly.
 */
import { matcherAsRegExp, simpleMatcher } from '../automaton';
import type { ActionSet } from '../wire/security';

/** One matcher for a list of patterns, as a RegExp (never matches when the list is empty). */
export function patternsRegExp(patterns: readonly string[]): RegExp {
  return matcherAsRegExp(simpleMatcher(patterns, true));
}

type Shape = { kind: 'exact'; lit: string } | { kind: 'prefix'; lit: string } | { kind: 'other'; lit: string };

function shape(p: string): Shape {
  const i = p.search(/[*?]/);
  if (i < 0) return { kind: 'exact', lit: p };
  if (i === p.length - 1 && p[i] === '*') return { kind: 'prefix', lit: p.slice(0, -1) };
  return { kind: 'other', lit: p.slice(0, i) };
}

/** Patterns a set may be tested with exactly; `grow` widens odd shapes, otherwise they are dropped. */
function tame(patterns: readonly string[], grow: boolean): string[] {
  const out: string[] = [];
  for (const p of patterns) {
    const s = shape(p);
    if (s.kind !== 'other') out.push(p);
    else if (grow) out.push(`${s.lit}*`);
  }
  return out;
}

interface Compiled {
  include: RegExp;
  exclude: RegExp;
}

const compile = (s: ActionSet): Compiled => ({ include: patternsRegExp(s.include), exclude: patternsRegExp(s.exclude ?? []) });
const has = (c: Compiled, x: string) => c.include.test(x) && !c.exclude.test(x);

/**
 * Is every action of `want` in the union of `grants` (ES: the wanted automaton is a subset of the
 * held one)? Exact for exact and prefix patterns; conservative otherwise.
 */
export function subsetOf(want: ActionSet, grants: readonly ActionSet[]): boolean {
  // the request may only grow, the grants only shrink: a "true" stays true for the real sets
  const w: ActionSet = { include: tame(want.include, true), exclude: tame(want.exclude ?? [], false) };
  const gs: ActionSet[] = grants.map((g) => ({ include: tame(g.include, false), exclude: tame(g.exclude ?? [], true) }));
  const all = [w, ...gs].flatMap((s) => [...s.include, ...(s.exclude ?? [])]).map(shape);
  const lits = new Set<string>(['']);
  for (const s of all) lits.add(s.lit);
  // A character no literal has right after another literal: "lit + fresh" matches exactly the prefix
  // patterns whose literal starts `lit`, and no exact name.
  const fresh = '\u0000';
  const cw = compile(w);
  const cg = gs.map(compile);
  for (const lit of lits) {
    for (const x of [lit, lit + fresh]) {
      if (has(cw, x) && !cg.some((c) => has(c, x))) return false;
    }
  }
  return true;
}
