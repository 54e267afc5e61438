import { EsError, indexNotFound } from '../wire/esErrors';
import { simpleMatch } from '../automaton';

const INVALID_CHARS = ['\\', '/', '*', '?', '"', '<', '>', '|', ' ', ',', '#', ':'];

/** Throws ES's invalid_index_name_exception for names ES refuses. */
export function validateIndexName(name: string): void {
  const bad = (why: string) => new EsError('invalid_index_name_exception', 400, `Invalid index name [${name}], ${why}`, { meta: { 'index_uuid': '_na_', index: name } });
  if (!name) throw bad('must not be empty');
  if (name !== name.toLowerCase()) throw bad('must be lowercase');
  for (const c of INVALID_CHARS) if (name.includes(c)) throw bad(`must not contain the following characters [${INVALID_CHARS.map((x) => (x === ' ' ? "' '" : x)).join(', ')}]`);
  if (/^[-_+]/.test(name)) throw bad("must not start with '_', '-', or '+'");
  if (name === '.' || name === '..') throw bad("must not be '.' or '..'");
  if (Buffer.byteLength(name) > 255) throw bad('index name is too long, (' + Buffer.byteLength(name) + ' > 255)');
}

export interface ResolveOptions {
  ignoreUnavailable?: boolean;
  allowNoIndices?: boolean;
  /** `open,closed,hidden,none,all`; hidden (dot) indices only with `hidden`/`all` or an explicit dot pattern. */
  expandWildcards?: string;
}

/** A `*` pattern (ES Regex.simpleMatch), matched without a backtracking RegExp (`*a*a*a…*b` was exponential). */
function globToRegex(p: string): { test(s: string): boolean } {
  return { test: (s: string) => simpleMatch(p, s) };
}

/**
 * Resolves an index expression (comma list, wildcards, `_all`, `-exclusions`) against the known
 * names, in ES's manner: a missing explicit name is 404 unless ignore_unavailable; a wildcard
 * matching nothing is fine unless allow_no_indices=false.
 */
export function resolveExpression(expr: string | undefined, names: string[], opts: ResolveOptions = {}): string[] {
  const parts = !expr || expr === '_all' ? ['*'] : expr.split(',').map((s) => s.trim()).filter(Boolean);
  const out = new Set<string>();
  const expand = opts.expandWildcards ?? 'open';
  const showHidden = /hidden|all/.test(expand);
  let sawWildcard = false;
  parts.forEach((p, i) => {
    if (p.startsWith('-') && i > 0) {
      const re = globToRegex(p.slice(1));
      for (const n of [...out]) if (re.test(n)) out.delete(n);
      return;
    }
    if (p === '_all' || p.includes('*')) {
      sawWildcard = true;
      if (expand === 'none') return;
      const re = globToRegex(p === '_all' ? '*' : p);
      for (const n of names) if (re.test(n) && (showHidden || !n.startsWith('.') || p.startsWith('.'))) out.add(n);
      return;
    }
    if (names.includes(p)) out.add(p);
    else if (!opts.ignoreUnavailable) throw indexNotFound(p);
  });
  if (!out.size && opts.allowNoIndices === false && sawWildcard) throw indexNotFound(expr ?? '_all');
  return [...out].sort();
}
