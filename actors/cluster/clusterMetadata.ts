import { EsError, illegalArgument } from '../wire/esErrors';
import { AliasTable, parseAliasMeta, validateAliasName, type AliasChange, type AliasImage, type AliasMeta, type IndexLookup } from './aliases';
import { mergeMappings, TemplateTable, type TemplateImage, type TemplateKind } from './templates';
import { normalizeSettings } from './indexSettings';

/**
 * Cluster metadata beyond the indices themselves: aliases and templates. ClusterState folds
 * these facts of `es.v1.data.meta` here (MetadataEvent members below) and keeps them in its
 * snapshots (`image`/`load`), so a restart rebuilds them.
 */

/** Facts of the document log about aliases and templates (members of ClusterState's MetaEvent). */
export type MetadataEvent =
  | { kind: 'aliases_updated'; changes: AliasChange[] }
  | { kind: 'template_put'; template: TemplateKind; name: string; body: unknown }
  | { kind: 'template_deleted'; template: TemplateKind; names: string[] };

/** What a snapshot keeps of the metadata. */
export interface MetadataImage {
  aliases: AliasImage;
  templates: TemplateImage;
}

/** An index creation after templates: what `index_created` records. */
export interface PreparedIndex {
  settings: Record<string, string>;
  mappings: Record<string, unknown>;
  aliases: Record<string, AliasMeta>;
  templates: string[];
}

export class ClusterMetadata {
  readonly aliases = new AliasTable();
  readonly templates = new TemplateTable();
  private tail: Promise<unknown> = Promise.resolve();

  /**
   * Runs alias and template changes one at a time (as ES's master applies cluster state updates),
   * so a change is checked against the state the one before it left.
   */
  serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn, fn);
    this.tail = run.catch(() => undefined);
    return run;
  }

  /** Applies an alias or template fact (index removals of `aliases_updated` are the caller's). */
  apply(e: MetadataEvent): void {
    switch (e.kind) {
      case 'aliases_updated':
        this.aliases.apply(e.changes.filter((c) => c.op !== 'remove_index'));
        return;
      case 'template_put':
        this.templates.apply({ op: 'put', kind: e.template, name: e.name, template: e.body });
        return;
      case 'template_deleted':
        this.templates.apply({ op: 'delete', kind: e.template, names: e.names });
        return;
    }
  }

  /** The aliases an `index_created` fact carries, as changes. */
  static createdAliases(uuid: string, aliases: Record<string, AliasMeta> | undefined): AliasChange[] {
    return Object.entries(aliases ?? {}).map(([alias, meta]) => ({ op: 'add' as const, uuid, alias, meta }));
  }

  image(): MetadataImage {
    return { aliases: this.aliases.image(), templates: this.templates.image() };
  }

  load(img: MetadataImage | undefined): void {
    this.aliases.load(img?.aliases);
    this.templates.load(img?.templates);
  }

  /**
   * What a new index gets: matching templates first, then the request's settings, mappings and
   * aliases (MetadataCreateIndexService). Validates the name against aliases and the aliases
   * against indices; settings and mappings are validated by the caller.
   */
  prepareIndex(name: string, body: { settings?: unknown; mappings?: unknown; aliases?: unknown }, idx: IndexLookup, uuid: string): PreparedIndex {
    if (this.aliases.has(name)) {
      throw new EsError('invalid_index_name_exception', 400, `Invalid index name [${name}], already exists as alias`, { meta: { index_uuid: '_na_', index: name } });
    }
    const t = this.templates.resolve(name);
    const mappings = body.mappings;
    if (mappings !== undefined && (typeof mappings !== 'object' || mappings === null || Array.isArray(mappings))) {
      throw illegalArgument('[mappings] must be an object');
    }
    const requested: Record<string, AliasMeta> = {};
    if (body.aliases !== undefined && body.aliases !== null) {
      if (typeof body.aliases !== 'object' || Array.isArray(body.aliases)) throw illegalArgument('[aliases] must be an object');
      for (const [a, m] of Object.entries(body.aliases as Record<string, unknown>)) requested[a] = parseAliasMeta(a, m);
    }
    const aliases = { ...t.aliases, ...requested };
    for (const [a, meta] of Object.entries(aliases)) {
      validateAliasName(a, meta);
      if (a === name || idx.uuidOf(a) !== undefined) {
        throw new EsError('invalid_alias_name_exception', 400, `Invalid alias name [${a}], an index or data stream exists with the same name as the alias`, {
          meta: { index_uuid: idx.uuidOf(a) ?? uuid, index: a },
        });
      }
    }
    this.aliases.checkWriteIndices(ClusterMetadata.createdAliases(uuid, aliases), { ...idx, nameOf: (u) => (u === uuid ? name : idx.nameOf(u)) });
    return {
      settings: { ...t.settings, ...normalizeSettings(body.settings) },
      mappings: mergeMappings(t.mappings, (mappings ?? {}) as Record<string, unknown>),
      aliases,
      templates: t.from,
    };
  }
}
