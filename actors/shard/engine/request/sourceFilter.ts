import { Locator, tokenName, type JsonPath } from '../base/xcontent';

/**
 * `_source` filtering (ES `FetchSourceContext` + `XContentMapValues.filter`), done on the raw
 * JSON text so key order, number spelling and 64-bit integers survive untouched.
 */
export interface SourceFilter {
  /** false = omit `_source` (`_source: false`). */
  fetch: boolean;
  /** Path patterns with `*` wildcards; empty = everything. */
  includes: string[];
  excludes: string[];
}

/**
 * Applies a filter to a document's raw `_source`.
 * @returns the filtered JSON text, or undefined when `_source` is not to be returned.
 * @example filterSource('{"a":{"b":1,"c":2},"d":3}', { fetch: true, includes: ['a.b'], excludes: [] }) // '{"a":{"b":1}}'
 */
export function filterSource(raw: string, f: SourceFilter): string | undefined {
  if (!f.fetch) return undefined;
  if (f.includes.length === 0 && f.excludes.length === 0) return raw;
  const root = new RawParser(raw).value();
  if (root.kind !== 'obj') return raw;
  const m = new Matcher(f.includes, f.excludes);
  return write(m.object(root, '', f.includes.length === 0));
}

// ---- raw JSON tree ----

type Node =
  | { kind: 'obj'; entries: Array<[rawKey: string, key: string, value: Node]> }
  | { kind: 'arr'; items: Node[] }
  | { kind: 'lit'; raw: string };

class RawParser {
  private i = 0;
  constructor(private readonly t: string) {}

  value(): Node {
    this.ws();
    const c = this.t[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    const start = this.i;
    if (c === '"') this.string();
    else while (this.i < this.t.length && !/[\s,\]}]/.test(this.t[this.i])) this.i++;
    return { kind: 'lit', raw: this.t.slice(start, this.i) };
  }

  private object(): Node {
    const entries: Array<[string, string, Node]> = [];
    this.i++;
    for (this.ws(); this.t[this.i] !== '}'; this.ws()) {
      const start = this.i;
      this.string();
      const rawKey = this.t.slice(start, this.i);
      this.ws();
      this.i++; // ':'
      entries.push([rawKey, JSON.parse(rawKey) as string, this.value()]);
      this.ws();
      if (this.t[this.i] === ',') this.i++;
    }
    this.i++;
    return { kind: 'obj', entries };
  }

  private array(): Node {
    const items: Node[] = [];
    this.i++;
    for (this.ws(); this.t[this.i] !== ']'; this.ws()) {
      items.push(this.value());
      this.ws();
      if (this.t[this.i] === ',') this.i++;
    }
    this.i++;
    return { kind: 'arr', items };
  }

  private string(): void {
    for (this.i++; this.i < this.t.length; this.i++) {
      if (this.t[this.i] === '\\') this.i++;
      else if (this.t[this.i] === '"') break;
    }
    this.i++;
  }

  private ws(): void {
    while (this.i < this.t.length && /\s/.test(this.t[this.i])) this.i++;
  }
}

function write(n: Node): string {
  if (n.kind === 'lit') return n.raw;
  if (n.kind === 'arr') return `[${n.items.map(write).join(',')}]`;
  return `{${n.entries.map(([k, , v]) => `${k}:${write(v)}`).join(',')}}`;
}

// ---- path matching ----

/** Glob with `*` (matches anything, dots included), full match. */
function globMatch(p: string, s: string, pi = 0, si = 0): boolean {
  for (; pi < p.length; pi++, si++) {
    if (p[pi] === '*') {
      for (let k = si; k <= s.length; k++) if (globMatch(p, s, pi + 1, k)) return true;
      return false;
    }
    if (si >= s.length || p[pi] !== s[si]) return false;
  }
  return si === s.length;
}

/** Whether some continuation of `s` can still match `p`. */
function globPrefix(p: string, s: string, pi = 0, si = 0): boolean {
  for (; si < s.length; pi++, si++) {
    if (pi >= p.length) return false;
    if (p[pi] === '*') return true;
    if (p[pi] !== s[si]) return false;
  }
  return true;
}

class Matcher {
  constructor(private readonly includes: string[], private readonly excludes: string[]) {}

  private included = (path: string) => this.includes.some((p) => globMatch(p, path));
  private excluded = (path: string) => this.excludes.some((p) => globMatch(p, path));
  private reachable = (path: string) => this.includes.some((p) => globPrefix(p, path));

  /** `fully`: an ancestor (or this path) matched an include, so everything below is in. */
  object(n: Extract<Node, { kind: 'obj' }>, prefix: string, fully: boolean): Extract<Node, { kind: 'obj' }> {
    const out: Array<[string, string, Node]> = [];
    for (const [rawKey, key, value] of n.entries) {
      const path = prefix + key;
      const full = fully || this.included(path);
      if (!full && !this.reachable(path)) continue;
      if (this.excluded(path)) continue;
      if (value.kind === 'obj') {
        const sub = this.object(value, `${path}.`, full);
        // ES keeps an emptied object when the include accepts "path." itself (e.g. `obj.*`).
        if (full || sub.entries.length > 0 || this.included(`${path}.`)) out.push([rawKey, key, sub]);
      } else if (value.kind === 'arr') {
        const sub = this.array(value, path, full);
        if (full || sub.items.length > 0) out.push([rawKey, key, sub]);
      } else if (full) out.push([rawKey, key, value]);
    }
    return { kind: 'obj', entries: out };
  }

  private array(n: Extract<Node, { kind: 'arr' }>, path: string, fully: boolean): Extract<Node, { kind: 'arr' }> {
    const items: Node[] = [];
    for (const v of n.items) {
      if (v.kind === 'obj') {
        const sub = this.object(v, `${path}.`, fully);
        if (sub.entries.length > 0) items.push(sub); // ES drops objects that filtered to nothing
      } else if (v.kind === 'arr') {
        const sub = this.array(v, path, fully);
        if (sub.items.length > 0) items.push(sub);
      } else if (fully) items.push(v);
    }
    return { kind: 'arr', items };
  }
}

// ---- parsing the request's `_source` ----

/** Body `_source` (FetchSourceContext.fromXContent): boolean, string, array of strings, or `{includes, excludes}`. */
export function parseSourceBody(v: unknown, loc: Locator = new Locator(), path: JsonPath = ['_source']): SourceFilter {
  if (typeof v === 'boolean') return { fetch: v, includes: [], excludes: [] };
  if (typeof v === 'string') return { fetch: true, includes: [v], excludes: [] };
  if (Array.isArray(v)) return { fetch: true, includes: strings(v, loc, path, '_source'), excludes: [] };
  if (v !== null && typeof v === 'object') {
    const f: SourceFilter = { fetch: true, includes: [], excludes: [] };
    for (const [k, x] of Object.entries(v)) {
      const target = k === 'includes' || k === 'include' ? 'includes' : k === 'excludes' || k === 'exclude' ? 'excludes' : undefined;
      if (target && typeof x === 'string') f[target] = [x];
      else if (target && Array.isArray(x)) f[target] = strings(x, loc, [...path, k], k);
      else throw loc.parsing([...path, k], `Unknown key for a ${tokenName(x)} in [${k}].`);
    }
    return f;
  }
  throw loc.parsing(path, `Expected one of [VALUE_BOOLEAN, START_OBJECT] but found [${tokenName(v)}]`);
}

function strings(v: unknown[], loc: Locator, path: JsonPath, name: string): string[] {
  return v.map((x, i) => {
    if (typeof x !== 'string') throw loc.parsing([...path, i], `Unknown key for a ${tokenName(x)} in [${name}].`);
    return x;
  });
}

/**
 * URL `_source`, `_source_includes`, `_source_excludes` (FetchSourceContext.parseFromRestRequest);
 * undefined when none is present.
 */
export function parseSourceParams(params: Record<string, string | undefined>): SourceFilter | undefined {
  const src = params._source;
  const inc = params._source_includes;
  const exc = params._source_excludes;
  if (src === undefined && inc === undefined && exc === undefined) return undefined;
  let fetch: boolean | undefined;
  let includes: string[] = [];
  if (src === 'true') fetch = true;
  else if (src === 'false') fetch = false;
  else if (src !== undefined) includes = splitComma(src);
  if (inc !== undefined) includes = splitComma(inc);
  return { fetch: fetch ?? true, includes, excludes: exc !== undefined ? splitComma(exc) : [] };
}

/** `Strings.splitStringByCommaToArray`: split on commas, trimmed, empties dropped. */
export function splitComma(s: string): string[] {
  return s.split(',').map((x) => x.trim()).filter((x) => x.length > 0);
}

/** `_source` filter that returns nothing but is not `false` (used when stored_fields is given). */
export const NO_SOURCE: SourceFilter = { fetch: false, includes: [], excludes: [] };
