import { EsError, illegalArgument, indexNotFound } from '../wire/esErrors';
import { aliasesNotFound, globMatch, parseAliasMeta, validateAliasName, type AliasChange, type AliasMeta, type AliasTable, type IndexLookup } from './aliases';

/**
 * `POST /_aliases` actions (ES IndicesAliasesRequest.AliasActions): parsed from the body, then
 * planned against the current indices and aliases into the changes one `aliases_updated` fact logs.
 */

const isGlob = (p: string) => p.includes('*');

/** One action of `POST /_aliases`, as the client wrote it. */
export interface RawAction {
  type: 'add' | 'remove' | 'remove_index';
  indices: string[];
  aliases: string[];
  meta: AliasMeta;
  mustExist?: boolean;
}

const strings = (v: unknown): string[] | undefined =>
  v === undefined || v === null ? undefined : (Array.isArray(v) ? v : [v]).map((x) => String(x));

/** Parses the `actions` of a `POST /_aliases` body (ES IndicesAliasesRequest/AliasActions). */
export function parseAliasActions(body: unknown): RawAction[] {
  const b = body as { actions?: unknown } | undefined;
  if (!b || typeof b !== 'object') throw new EsError('action_request_validation_exception', 400, 'Validation Failed: 1: no actions specified;');
  for (const k of Object.keys(b)) if (k !== 'actions') throw illegalArgument(`[aliases] unknown field [${k}]`);
  const list = Array.isArray(b.actions) ? b.actions : b.actions === undefined ? [] : [b.actions];
  if (!list.length) throw new EsError('action_request_validation_exception', 400, 'Validation Failed: 1: no actions specified;');
  return list.map((entry) => {
    if (!entry || typeof entry !== 'object' || Array.isArray(entry)) throw illegalArgument('[alias_action] expected an object');
    const keys = Object.keys(entry as object);
    if (keys.length > 1) throw illegalArgument('Too many operations declared on operation entry');
    const type = keys[0] as RawAction['type'];
    if (!['add', 'remove', 'remove_index'].includes(type)) throw illegalArgument(`[alias_action] unknown field [${type}]`);
    const spec = ((entry as Record<string, unknown>)[type] ?? {}) as Record<string, unknown>;
    const metaBody: Record<string, unknown> = {};
    let indices: string[] | undefined;
    let aliases: string[] | undefined;
    let mustExist: boolean | undefined;
    for (const [k, v] of Object.entries(spec)) {
      if (k === 'index' || k === 'indices') indices = [...(indices ?? []), ...(strings(v) ?? [])];
      else if (k === 'alias' || k === 'aliases') aliases = [...(aliases ?? []), ...(strings(v) ?? [])];
      else if (k === 'must_exist') mustExist = v === true || v === 'true';
      else if (type === 'add' && ['filter', 'routing', 'index_routing', 'search_routing', 'is_write_index', 'is_hidden'].includes(k)) metaBody[k] = v;
      else throw illegalArgument(`[${type}] unknown field [${k}]`);
    }
    if (!indices || !indices.length) throw illegalArgument('One of [index] or [indices] is required');
    if (type !== 'remove_index' && (!aliases || !aliases.length)) throw illegalArgument('One of [alias] or [aliases] is required');
    return { type, indices, aliases: aliases ?? [], meta: type === 'add' ? parseAliasMeta(aliases![0], metaBody) : {}, mustExist };
  });
}

/**
 * Turns client actions into logged changes against the current indices and aliases (index
 * wildcards expanded, alias wildcards on remove expanded), with ES's errors.
 */
export function planAliasActions(actions: RawAction[], table: AliasTable, indexNames: string[], idx: IndexLookup): AliasChange[] {
  const resolveIndices = (exprs: string[]): string[] => {
    const out: string[] = [];
    for (const e of exprs) {
      if (e === '_all' || isGlob(e)) {
        for (const n of indexNames) if (globMatch(e, n) && !out.includes(n)) out.push(n);
        continue;
      }
      if (idx.uuidOf(e) !== undefined) {
        if (!out.includes(e)) out.push(e);
        continue;
      }
      // An alias names its indices (ES resolves index expressions of alias actions that way).
      const via = table.indicesOf(e).map((u) => idx.nameOf(u)!).filter(Boolean);
      if (!via.length) throw indexNotFound(e);
      for (const n of via) if (!out.includes(n)) out.push(n);
    }
    if (!out.length) throw indexNotFound(exprs.join(','));
    return out;
  };
  const changes: AliasChange[] = [];
  for (const a of actions) {
    const names = resolveIndices(a.indices);
    if (a.type === 'remove_index') {
      const viaAlias = a.indices.find((e) => !(e === '_all' || isGlob(e)) && idx.uuidOf(e) === undefined);
      if (viaAlias !== undefined) {
        throw illegalArgument(`The provided expression [${viaAlias}] matches an alias, specify the corresponding concrete indices instead.`);
      }
      for (const n of names) changes.push({ op: 'remove_index', uuid: idx.uuidOf(n)! });
      continue;
    }
    if (a.type === 'add') {
      for (const alias of a.aliases) {
        validateAliasName(alias, a.meta);
        if (idx.uuidOf(alias) !== undefined) {
          throw new EsError('invalid_alias_name_exception', 400, `Invalid alias name [${alias}], an index or data stream exists with the same name as the alias`, {
            meta: { index_uuid: idx.uuidOf(alias), index: alias },
          });
        }
        for (const n of names) changes.push({ op: 'add', uuid: idx.uuidOf(n)!, alias, meta: a.meta });
      }
      continue;
    }
    // remove: alias names may be patterns; must_exist (default) fails when nothing matched
    const missing: string[] = [];
    for (const alias of a.aliases) {
      let hit = false;
      for (const n of names) {
        const uuid = idx.uuidOf(n)!;
        for (const [have] of table.of(uuid)) {
          if (have === alias || ((alias === '_all' || isGlob(alias)) && globMatch(alias, have))) {
            changes.push({ op: 'remove', uuid, alias: have });
            hit = true;
          }
        }
      }
      if (!hit && !(alias === '_all' || isGlob(alias))) missing.push(alias);
      else if (!hit && a.mustExist === true) missing.push(alias);
    }
    if (missing.length && a.mustExist !== false) throw aliasesNotFound(missing);
  }
  table.checkWriteIndices(changes, idx);
  return changes;
}

