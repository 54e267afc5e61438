import { EsError, illegalArgument } from '../wire/esErrors';
import { validateIndexOrAliasName } from './indexNames';
import { parseQuery } from '../shard/engine';

/**
 * Index aliases as metadata: what each index's aliases are (ES AliasMetadata), folded from
 * `aliases_updated` facts of the document log (and the aliases an `index_created` fact carries).
 * Pure data plus the ES rules: name validation, write-index resolution, wildcard matching.
 */

/** One alias of one index, with ES's wire names (only present keys are rendered). */
export interface AliasMeta {
  filter?: unknown;
  index_routing?: string;
  search_routing?: string;
  is_write_index?: boolean;
  is_hidden?: boolean;
}

/** One logged change, by index uuid (names may be re-used after a delete). */
export type AliasChange =
  | { op: 'add'; uuid: string; alias: string; meta: AliasMeta }
  | { op: 'remove'; uuid: string; alias: string }
  | { op: 'remove_index'; uuid: string };

/** `{uuid: {alias: meta}}`: what snapshots keep. */
export type AliasImage = Record<string, Record<string, AliasMeta>>;

/** What the alias rules need to know of the indices. */
export interface IndexLookup {
  nameOf(uuid: string): string | undefined;
  uuidOf(name: string): string | undefined;
}

export const aliasesNotFound = (names: string[]) =>
  new EsError('aliases_not_found_exception', 404, `aliases [${names.join(',')}] missing`, {
    meta: { 'resource.type': 'aliases', 'resource.id': names.join(',') },
  });

/** ES's error when a write goes to an alias without a write index. */
export const noWriteIndex = (alias: string) =>
  illegalArgument(
    `no write index is defined for alias [${alias}]. The write index may be explicitly disabled using is_write_index=false or the ` +
      'alias points to multiple indices without one being designated as a write index',
  );

/** AliasValidator.validateAliasStandalone: name rules and routing. */
export function validateAliasName(alias: string, meta: AliasMeta = {}): void {
  if (!alias || !alias.trim()) throw illegalArgument('alias name is required');
  validateIndexOrAliasName(alias, (why) => new EsError('invalid_alias_name_exception', 400, `Invalid alias name [${alias}]: ${why}`));
  if (meta.index_routing !== undefined && meta.index_routing.includes(',')) {
    throw illegalArgument(`alias [${alias}] has several index routing values associated with it`);
  }
}

/** Compiled `*` patterns (a search's index expression is matched on every request): bounded. */
const globRegexps = new Map<string, RegExp>();

export function globMatch(pattern: string, name: string): boolean {
  if (pattern === '_all' || pattern === '*') return true;
  const star = pattern.indexOf('*');
  if (star < 0) return pattern === name;
  if (star === pattern.length - 1) return name.startsWith(pattern.slice(0, star));
  let re = globRegexps.get(pattern);
  if (!re) {
    if (globRegexps.size >= 1024) globRegexps.clear();
    re = new RegExp(`^${pattern.split('*').map((s) => s.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    globRegexps.set(pattern, re);
  }
  return re.test(name);
}

/**
 * The aliases of every index. Mutated only by `apply` (a logged change) and `dropIndex` (the
 * index is gone), so a replay of the log rebuilds it exactly.
 */
export class AliasTable {
  private readonly byIndex = new Map<string, Map<string, AliasMeta>>();

  apply(changes: AliasChange[]): void {
    for (const c of changes) {
      if (c.op === 'add') {
        let m = this.byIndex.get(c.uuid);
        if (!m) this.byIndex.set(c.uuid, (m = new Map()));
        m.set(c.alias, { ...c.meta });
      } else if (c.op === 'remove') {
        const m = this.byIndex.get(c.uuid);
        m?.delete(c.alias);
        if (m && !m.size) this.byIndex.delete(c.uuid);
      } else this.byIndex.delete(c.uuid);
    }
  }

  dropIndex(uuid: string): void {
    this.byIndex.delete(uuid);
  }

  /** Aliases of an index, by name order. */
  of(uuid: string): Array<[string, AliasMeta]> {
    return [...(this.byIndex.get(uuid) ?? new Map<string, AliasMeta>()).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  /** Index uuids of an alias (empty when no such alias). */
  indicesOf(alias: string): string[] {
    const out: string[] = [];
    for (const [uuid, m] of this.byIndex) if (m.has(alias)) out.push(uuid);
    return out;
  }

  meta(uuid: string, alias: string): AliasMeta | undefined {
    return this.byIndex.get(uuid)?.get(alias);
  }

  /** Whether `alias` is hidden (`is_hidden` on any of its indices). */
  isHidden(alias: string): boolean {
    for (const m of this.byIndex.values()) if (m.get(alias)?.is_hidden) return true;
    return false;
  }

  has(alias: string): boolean {
    for (const m of this.byIndex.values()) if (m.has(alias)) return true;
    return false;
  }

  /** Every alias name, sorted. */
  names(): string[] {
    const s = new Set<string>();
    for (const m of this.byIndex.values()) for (const a of m.keys()) s.add(a);
    return [...s].sort();
  }

  /** Alias name -> index uuids, for resolving expressions (hidden aliases only with `withHidden`). */
  map(withHidden = false): Map<string, string[]> {
    const out = new Map<string, string[]>();
    for (const [uuid, m] of this.byIndex) {
      for (const [a, meta] of m) {
        if (meta.is_hidden && !withHidden) continue; // hidden aliases only by name (resolved below)
        let l = out.get(a);
        if (!l) out.set(a, (l = []));
        l.push(uuid);
      }
    }
    return out;
  }

  /**
   * The write index of an alias (IndexAbstraction.Alias#getWriteIndex): the index flagged
   * is_write_index, or the only index when none says false. Undefined when `alias` is no alias.
   * @throws ES's 400 when the alias has no write index
   */
  writeIndex(alias: string): string | undefined {
    const uuids = this.indicesOf(alias);
    if (!uuids.length) return undefined;
    const flagged = uuids.find((u) => this.meta(u, alias)?.is_write_index === true);
    if (flagged) return flagged;
    if (uuids.length === 1 && this.meta(uuids[0], alias)?.is_write_index !== false) return uuids[0];
    throw noWriteIndex(alias);
  }

  image(): AliasImage {
    const out: AliasImage = {};
    for (const [uuid, m] of this.byIndex) out[uuid] = Object.fromEntries([...m].map(([a, meta]) => [a, { ...meta }]));
    return out;
  }

  load(img: AliasImage | undefined): void {
    this.byIndex.clear();
    for (const [uuid, m] of Object.entries(img ?? {})) this.byIndex.set(uuid, new Map(Object.entries(m).map(([a, meta]) => [a, { ...meta }])));
  }

  /**
   * Checks that `changes`, applied on top of this table, leave every alias with at most one write
   * index (MetadataIndexAliasesService: `alias [x] has more than one write index [a,b]`).
   */
  checkWriteIndices(changes: AliasChange[], idx: IndexLookup): void {
    const t = new AliasTable();
    t.load(this.image());
    t.apply(changes);
    const touched = new Set(changes.flatMap((c) => (c.op === 'remove_index' ? [] : [c.alias])));
    for (const a of touched) {
      const writers = t.indicesOf(a).filter((u) => t.meta(u, a)?.is_write_index === true);
      if (writers.length > 1) {
        const names = writers.map((u) => idx.nameOf(u) ?? u).sort();
        // ES answers this IllegalStateException with 500; bad input gets a 4xx here.
        throw new EsError('illegal_state_exception', 400, `alias [${a}] has more than one write index [${names.join(',')}]`);
      }
    }
  }
}

/** Parsed alias properties of an add action or a create-index `aliases` entry. */
export function parseAliasMeta(alias: string, body: unknown): AliasMeta {
  const b = (body ?? {}) as Record<string, unknown>;
  if (typeof b !== 'object' || Array.isArray(b)) throw illegalArgument(`[alias] failed to parse alias [${alias}]`);
  const meta: AliasMeta = {};
  for (const [k, v] of Object.entries(b)) {
    switch (k) {
      case 'filter':
        if (v !== null && v !== undefined) {
          if (typeof v !== 'object' || Array.isArray(v)) throw illegalArgument(`failed to parse filter for alias [${alias}]`);
          if (Object.keys(v as object).length) {
            try {
              parseQuery(v); // as ES, a filter that is no valid query is refused when the alias is added
            } catch (e) {
              if (e instanceof EsError) throw illegalArgument(`failed to parse filter for alias [${alias}]`, { causedBy: e });
              throw e;
            }
            meta.filter = v;
          }
        }
        break;
      case 'routing':
        if (v !== null && v !== undefined) meta.index_routing = meta.search_routing = String(v);
        break;
      case 'index_routing':
        if (v !== null && v !== undefined) meta.index_routing = String(v);
        break;
      case 'search_routing':
        if (v !== null && v !== undefined) meta.search_routing = String(v);
        break;
      case 'is_write_index':
        if (v !== null && v !== undefined) meta.is_write_index = v === true || v === 'true';
        break;
      case 'is_hidden':
        if (v !== null && v !== undefined) meta.is_hidden = v === true || v === 'true';
        break;
      default:
        throw illegalArgument(`[alias] unknown field [${k}]`);
    }
  }
  return meta;
}

/** ES's rendering of one alias's properties (`GET _alias`, cluster state, templates). */
export function renderAliasMeta(m: AliasMeta): Record<string, unknown> {
  return {
    ...(m.filter !== undefined ? { filter: m.filter } : {}),
    ...(m.index_routing !== undefined ? { index_routing: m.index_routing } : {}),
    ...(m.search_routing !== undefined ? { search_routing: m.search_routing } : {}),
    ...(m.is_write_index !== undefined ? { is_write_index: m.is_write_index } : {}),
    ...(m.is_hidden !== undefined ? { is_hidden: m.is_hidden } : {}),
  };
}

/**
 * The alias filter a search through `expr` applies to one index (ES
 * IndexNameExpressionResolver#filteringAliases): none when the expression names the index itself
 * (by name, a wildcard over its name, or `_all`) or an alias of it without a filter; otherwise the
 * filters of the aliases named, any of which lets a document through.
 */
export function aliasFilterFor(table: AliasTable, expr: string | undefined, index: { name: string; uuid: string }): unknown | undefined {
  if (expr === index.name) return undefined; // the index by its own name (the common search)
  const parts = !expr ? ['_all'] : expr.split(',').map((x) => x.trim()).filter((x) => x && !x.startsWith('-'));
  if (!parts.length || parts.some((p) => p === '_all' || globMatch(p, index.name))) return undefined;
  const filters: unknown[] = [];
  for (const [alias, meta] of table.of(index.uuid)) {
    if (!parts.some((p) => globMatch(p, alias))) continue;
    if (meta.filter === undefined) return undefined;
    filters.push(meta.filter);
  }
  if (!filters.length) return undefined;
  return filters.length === 1 ? filters[0] : { bool: { should: filters, minimum_should_match: 1 } };
}
