import { EsError, indexNotFound } from '../wire/esErrors';
import { simpleMatch } from '../automaton';

/** Strings.INVALID_FILENAME_CHARS, in the order ES prints the set. */
const INVALID_CHARS = [' ', '"', '*', '\\', '<', '|', ',', '>', '/', '?'];

/**
 * ES's MetadataCreateIndexService.validateIndexOrAliasName: the checks shared by index and alias
 * names, in ES's order, with its texts. `bad(why)` builds the error to throw.
 */
export function validateIndexOrAliasName(name: string, bad: (why: string) => Error): void {
  if (!name) throw bad('must not be empty');
  if (INVALID_CHARS.some((c) => name.includes(c))) throw bad(`must not contain the following characters [${INVALID_CHARS.join(', ')}]`);
  if (name.includes('#')) throw bad("must not contain '#'");
  if (name.includes(':')) throw bad("must not contain ':'");
  if (/^[-_+]/.test(name)) throw bad("must not start with '_', '-', or '+'");
  const bytes = Buffer.byteLength(name);
  if (bytes > 255) throw bad(`index name is too long, (${bytes} > 255)`);
  if (name === '.' || name === '..') throw bad("must not be '.' or '..'");
}

/** Throws ES's invalid_index_name_exception for names ES refuses. */
export function validateIndexName(name: string): void {
  const bad = (why: string) => new EsError('invalid_index_name_exception', 400, `Invalid index name [${name}], ${why}`, { meta: { 'index_uuid': '_na_', index: name } });
  validateIndexOrAliasName(name, bad);
  if (name !== name.toLowerCase()) throw bad('must be lowercase');
}

export interface ResolveOptions {
  ignoreUnavailable?: boolean;
  allowNoIndices?: boolean;
  /** `open,closed,hidden,none,all`; hidden (dot) indices only with `hidden`/`all` or an explicit dot pattern. */
  expandWildcards?: string;
  /** Indices hidden from wildcards besides dot-prefixed ones (`index.hidden: true`). */
  hiddenIndex?: (name: string) => boolean;
  /** Aliases hidden from wildcards (`is_hidden: true`); named explicitly, they resolve. */
  hiddenAlias?: (name: string) => boolean;
  /** With expand_wildcards=none a wildcard just matches nothing (lenient options), never a 404. */
  lenientNone?: boolean;
  /** Closed indices: wildcards match them only with expand_wildcards `closed`/`all`. */
  closedIndex?: (name: string) => boolean;
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
export function resolveExpression(expr: string | undefined, names: string[], opts: ResolveOptions = {}, aliases?: ReadonlyMap<string, string[]>): string[] {
  const parts = !expr || expr === '_all' ? ['*'] : expr.split(',').map((s) => s.trim()).filter(Boolean);
  const out = new Set<string>();
  const expand = opts.expandWildcards ?? 'open';
  const showHidden = /hidden|all/.test(expand);
  const showClosed = /closed|all/.test(expand);
  const showOpen = /open|all/.test(expand);
  let sawWildcard = false;
  parts.forEach((p, i) => {
    if (p.startsWith('-') && i > 0) {
      const re = globToRegex(p.slice(1));
      for (const n of [...out]) if (re.test(n)) out.delete(n);
      // `-alias` excludes the alias's indices too
      for (const [a, idx] of aliases ?? []) if (re.test(a)) for (const n of idx) out.delete(n);
      return;
    }
    if (p === '_all' || p.includes('*')) {
      sawWildcard = true;
      if (expand === 'none') {
        // nothing expands: the pattern names no index (ES 8.6+: a 404 unless ignore_unavailable)
        if (!opts.ignoreUnavailable && !opts.lenientNone) throw indexNotFound(p);
        return;
      }
      const re = globToRegex(p === '_all' ? '*' : p);
      // a hidden name matches only with expand_wildcards hidden/all, or a dot pattern for a dot name
      const visible = (n: string, hidden: boolean) => showHidden || (n.startsWith('.') ? p.startsWith('.') : !hidden);
      const stateShown = (n: string) => (opts.closedIndex?.(n) ? showClosed : showOpen || !opts.closedIndex);
      for (const n of names) if (re.test(n) && visible(n, opts.hiddenIndex?.(n) ?? false) && stateShown(n)) out.add(n);
      // Wildcards match alias names as well, standing for their indices (ES's default options).
      for (const [a, idx] of aliases ?? []) {
        if (re.test(a) && visible(a, opts.hiddenAlias?.(a) ?? false)) for (const n of idx) out.add(n);
      }
      return;
    }
    if (names.includes(p)) out.add(p);
    else if (aliases?.get(p)?.length) for (const n of aliases.get(p)!) out.add(n);
    else if (!opts.ignoreUnavailable) throw indexNotFound(p);
  });
  if (!out.size && opts.allowNoIndices === false && sawWildcard) throw indexNotFound(expr ?? '_all');
  return [...out].sort();
}
