import { EsError, illegalArgument } from '../wire/esErrors';
import { IndexMapping } from '../shard/engine';
import { applySettings, defaultIndexSettings, normalizeSettings } from './indexSettings';
import { globMatch, parseAliasMeta, validateAliasName, type AliasMeta } from './aliases';

/**
 * Index templates as metadata: composable templates (`_index_template`), the component templates
 * they are composed of (`_component_template`), and legacy templates (`_template`), folded from
 * `template_put` / `template_deleted` facts of the document log. `resolve(name)` is what an index
 * creation (explicit or automatic) takes from them, with ES's precedence: the composable
 * template of highest priority wins outright; otherwise every matching legacy template applies,
 * lower `order` first. The request's own settings, mappings and aliases come last.
 */

export type TemplateKind = 'index' | 'component' | 'legacy';

/** `template` part of composable and component templates. */
export interface TemplateBody {
  settings?: Record<string, string>;
  mappings?: Record<string, unknown>;
  aliases?: Record<string, AliasMeta>;
}

export interface ComposableTemplate {
  index_patterns: string[];
  template?: TemplateBody;
  composed_of: string[];
  priority?: number;
  version?: number;
  _meta?: unknown;
  allow_auto_create?: boolean;
  data_stream?: unknown;
}

export interface ComponentTemplate {
  template: TemplateBody;
  version?: number;
  _meta?: unknown;
}

export interface LegacyTemplate {
  order: number;
  version?: number;
  index_patterns: string[];
  settings: Record<string, string>;
  mappings: Record<string, unknown>;
  aliases: Record<string, AliasMeta>;
}

/** What snapshots keep. */
export interface TemplateImage {
  index: Record<string, ComposableTemplate>;
  component: Record<string, ComponentTemplate>;
  legacy: Record<string, LegacyTemplate>;
}

/** What templates contribute to one new index. */
export interface ResolvedTemplates {
  settings: Record<string, string>;
  mappings: Record<string, unknown>;
  aliases: Record<string, AliasMeta>;
  /** Names of the templates used (for logs and tests). */
  from: string[];
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of mapping objects: later wins for leaves, objects merge (properties of both kept). */
export function mergeMappings(a: Record<string, unknown>, b: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = isObj(v) && isObj(out[k]) ? mergeMappings(out[k] as Record<string, unknown>, v) : v;
  return out;
}

function objectOf(field: string, v: unknown): unknown {
  if (v !== null && v !== undefined && !isObj(v)) throw illegalArgument(`[${field}] must be an object, got [${JSON.stringify(v)}]`);
  return v;
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v : v === undefined || v === null ? [] : [v]).map(String);

function invalid(name: string, cause: string, kind: TemplateKind): EsError {
  const what = kind === 'component' ? 'component_template' : 'index_template';
  return new EsError('invalid_index_template_exception', 400, `${what} [${name}] invalid, cause [${cause}]`);
}

/** Validates settings, mappings and aliases of a template part (as index creation would). */
function checkBody(name: string, kind: TemplateKind, settings: Record<string, string>, mappings: Record<string, unknown>, aliases: Record<string, AliasMeta>): void {
  try {
    applySettings(defaultIndexSettings(), settings, true);
    new IndexMapping(mappings as never);
    for (const [a, meta] of Object.entries(aliases)) validateAliasName(a, meta);
  } catch (e) {
    if (e instanceof EsError) throw invalid(name, e.message, kind);
    throw e;
  }
}

function parseTemplateBody(name: string, kind: TemplateKind, v: unknown): TemplateBody {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw illegalArgument(`[template] expected an object for [${name}]`);
  const out: TemplateBody = {};
  for (const [k, x] of Object.entries(v)) {
    if (k === 'settings') out.settings = normalizeSettings(objectOf('settings', x));
    else if (k === 'mappings') {
      if (!isObj(x)) throw illegalArgument('[mappings] must be an object');
      out.mappings = x;
    } else if (k === 'aliases') out.aliases = parseAliases(x);
    else if (k === 'lifecycle' || k === 'data_stream_options') continue; // data stream features: ignored
    else throw illegalArgument(`[template] unknown field [${k}]`);
  }
  checkBody(name, kind, out.settings ?? {}, out.mappings ?? {}, out.aliases ?? {});
  return out;
}

function parseAliases(v: unknown): Record<string, AliasMeta> {
  if (v === undefined || v === null) return {};
  if (!isObj(v)) throw illegalArgument('[aliases] must be an object');
  return Object.fromEntries(Object.entries(v).map(([a, body]) => [a, parseAliasMeta(a, body)]));
}

const num = (field: string, v: unknown): number => {
  const n = Number(v);
  if (typeof v === 'boolean' || !Number.isFinite(n) || !Number.isInteger(n)) throw illegalArgument(`[${field}] must be an integer, found [${String(v)}]`);
  return n;
};

/**
 * The templates of the cluster. Changed only through `apply` (logged facts), so replaying the
 * document log (or loading a snapshot image) rebuilds them exactly.
 */
export class TemplateTable {
  private readonly index = new Map<string, ComposableTemplate>();
  private readonly component = new Map<string, ComponentTemplate>();
  private readonly legacy = new Map<string, LegacyTemplate>();

  private store(kind: TemplateKind): Map<string, unknown> {
    return kind === 'index' ? this.index : kind === 'component' ? this.component : this.legacy;
  }

  apply(e: { op: 'put'; kind: TemplateKind; name: string; template: unknown } | { op: 'delete'; kind: TemplateKind; names: string[] }): void {
    const m = this.store(e.kind);
    if (e.op === 'put') m.set(e.name, structuredClone(e.template));
    else for (const n of e.names) m.delete(n);
  }

  get(kind: 'index', name: string): ComposableTemplate | undefined;
  get(kind: 'component', name: string): ComponentTemplate | undefined;
  get(kind: 'legacy', name: string): LegacyTemplate | undefined;
  get(kind: TemplateKind, name: string): unknown {
    return this.store(kind).get(name);
  }

  /** Names of one kind matching a comma list of names or patterns, sorted; `undefined`: all. */
  names(kind: TemplateKind, expr?: string): string[] {
    const all = [...this.store(kind).keys()].sort();
    if (expr === undefined || expr === '' || expr === '_all' || expr === '*') return all;
    const parts = expr.split(',').map((x) => x.trim()).filter(Boolean);
    return all.filter((n) => parts.some((p) => globMatch(p, n)));
  }

  entries<T>(kind: TemplateKind): Array<[string, T]> {
    return [...(this.store(kind) as Map<string, T>).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  }

  image(): TemplateImage {
    return structuredClone({
      index: Object.fromEntries(this.index),
      component: Object.fromEntries(this.component),
      legacy: Object.fromEntries(this.legacy),
    });
  }

  load(img: TemplateImage | undefined): void {
    this.index.clear();
    this.component.clear();
    this.legacy.clear();
    for (const [n, t] of Object.entries(img?.index ?? {})) this.index.set(n, structuredClone(t));
    for (const [n, t] of Object.entries(img?.component ?? {})) this.component.set(n, structuredClone(t));
    for (const [n, t] of Object.entries(img?.legacy ?? {})) this.legacy.set(n, structuredClone(t));
  }

  // ---- parsing requests (before anything is logged) ----

  /** `PUT /_index_template/<name>` body, validated against the current templates. */
  parseComposable(name: string, body: unknown, create: boolean): ComposableTemplate {
    if (!isObj(body)) throw new EsError('parse_exception', 400, 'request body is required');
    validateTemplateName(name);
    if (create && this.index.has(name)) throw illegalArgument(`index template [${name}] already exists`);
    const t: ComposableTemplate = { index_patterns: [], composed_of: [] };
    let sawPatterns = false;
    for (const [k, v] of Object.entries(body)) {
      switch (k) {
        case 'index_patterns':
          t.index_patterns = strings(v);
          sawPatterns = true;
          break;
        case 'template':
          t.template = parseTemplateBody(name, 'index', v);
          break;
        case 'composed_of':
          t.composed_of = strings(v);
          break;
        case 'priority':
          if (v !== null) t.priority = num('priority', v);
          if (t.priority !== undefined && t.priority < 0) throw illegalArgument('index template priority must be >= 0');
          break;
        case 'version':
          if (v !== null) t.version = num('version', v);
          break;
        case '_meta':
          t._meta = v;
          break;
        case 'allow_auto_create':
          t.allow_auto_create = v === true || v === 'true';
          break;
        case 'data_stream':
          throw illegalArgument(`index template [${name}] has a [data_stream] definition: data streams are not supported by this node`);
        case 'ignore_missing_component_templates':
        case 'deprecated':
          break;
        default:
          throw new EsError('x_content_parse_exception', 400, `[index_template] unknown field [${k}]`);
      }
    }
    if (!sawPatterns || !t.index_patterns.length) throw new EsError('x_content_parse_exception', 400, 'Required [index_patterns]');
    const missing = t.composed_of.filter((c) => !this.component.has(c));
    if (missing.length) throw invalid(name, `index template [${name}] specifies component templates [${missing.join(', ')}] that do not exist`, 'index');
    // MetadataIndexTemplateService.findConflictingV2Templates: same priority and overlapping patterns.
    const prio = t.priority ?? 0;
    const clash = [...this.index.entries()]
      .filter(([n, o]) => n !== name && (o.priority ?? 0) === prio && overlaps(t.index_patterns, o.index_patterns))
      .sort(([a], [b]) => (a < b ? -1 : 1));
    if (clash.length) {
      throw illegalArgument(
        `index template [${name}] has index patterns [${t.index_patterns.join(', ')}] matching patterns from existing templates ` +
          `[${clash.map(([n]) => n).join(', ')}] with patterns (${clash.map(([n, o]) => `${n} => [${o.index_patterns.join(', ')}]`).join(',')}) ` +
          `that have the same priority [${prio}], multiple index templates may not match during index creation, please use a different priority`,
      );
    }
    return t;
  }

  /** `PUT /_component_template/<name>` body. */
  parseComponent(name: string, body: unknown, create: boolean): ComponentTemplate {
    if (!isObj(body)) throw new EsError('parse_exception', 400, 'request body is required');
    validateTemplateName(name);
    if (create && this.component.has(name)) throw illegalArgument(`component template [${name}] already exists`);
    const t: ComponentTemplate = { template: {} };
    let sawTemplate = false;
    for (const [k, v] of Object.entries(body)) {
      if (k === 'template') {
        t.template = parseTemplateBody(name, 'component', v);
        sawTemplate = true;
      } else if (k === 'version') {
        if (v !== null) t.version = num('version', v);
      } else if (k === '_meta') t._meta = v;
      else if (k === 'deprecated') continue;
      else throw new EsError('x_content_parse_exception', 400, `[component_template] unknown field [${k}]`);
    }
    if (!sawTemplate) throw new EsError('x_content_parse_exception', 400, 'Required [template]');
    return t;
  }

  /** `PUT /_template/<name>` body (legacy), with `order` from the URL when given. */
  parseLegacy(name: string, body: unknown, create: boolean, orderParam?: string): LegacyTemplate {
    if (!isObj(body)) throw new EsError('parse_exception', 400, 'request body is required');
    validateTemplateName(name);
    if (create && this.legacy.has(name)) throw illegalArgument(`index_template [${name}] already exists`);
    const t: LegacyTemplate = { order: 0, index_patterns: [], settings: {}, mappings: {}, aliases: {} };
    for (const [k, v] of Object.entries(body)) {
      switch (k) {
        case 'index_patterns':
        case 'template':
          t.index_patterns = strings(v);
          break;
        case 'order':
          t.order = num('order', v);
          break;
        case 'version':
          if (v !== null) t.version = num('version', v);
          break;
        case 'settings':
          t.settings = normalizeSettings(objectOf('settings', v));
          break;
        case 'mappings':
          if (!isObj(v)) throw illegalArgument('[mappings] must be an object');
          // 7.x style `{_doc: {...}}` is unwrapped, as ES 8 does for a single `_doc` type.
          t.mappings = Object.keys(v).length === 1 && isObj(v._doc) ? (v._doc as Record<string, unknown>) : v;
          break;
        case 'aliases':
          t.aliases = parseAliases(v);
          break;
        default:
          throw illegalArgument(`unknown key [${k}] in the template `);
      }
    }
    if (orderParam !== undefined) t.order = num('order', orderParam);
    if (!t.index_patterns.length) throw new EsError('action_request_validation_exception', 400, 'Validation Failed: 1: index patterns are missing;');
    checkBody(name, 'legacy', t.settings, t.mappings, t.aliases);
    return t;
  }

  // ---- applying templates to a new index ----

  /** Settings, mappings and aliases templates give a new index named `index`. */
  resolve(index: string): ResolvedTemplates {
    const out: ResolvedTemplates = { settings: {}, mappings: {}, aliases: {}, from: [] };
    const v2 = this.findComposable(index);
    if (v2) {
      const [name, t] = v2;
      const parts: TemplateBody[] = [...t.composed_of.map((c) => this.component.get(c)?.template ?? {}), t.template ?? {}];
      for (const p of parts) {
        Object.assign(out.settings, p.settings ?? {});
        out.mappings = mergeMappings(out.mappings, p.mappings ?? {});
        Object.assign(out.aliases, p.aliases ?? {});
      }
      out.from.push(name);
      return out;
    }
    const legacy = [...this.legacy.entries()]
      .filter(([, t]) => t.index_patterns.some((p) => globMatch(p, index)))
      .sort(([an, a], [bn, b]) => a.order - b.order || (an < bn ? -1 : 1));
    for (const [name, t] of legacy) {
      Object.assign(out.settings, t.settings);
      out.mappings = mergeMappings(out.mappings, t.mappings);
      Object.assign(out.aliases, t.aliases);
      out.from.push(name);
    }
    return out;
  }

  /** The composable template of highest priority whose patterns match (ES findV2Template). */
  findComposable(index: string): [string, ComposableTemplate] | undefined {
    let best: [string, ComposableTemplate] | undefined;
    for (const [n, t] of this.index) {
      if (!t.index_patterns.some((p) => globMatch(p, index))) continue;
      if (!best || (t.priority ?? 0) > (best[1].priority ?? 0)) best = [n, t];
    }
    return best;
  }
}

/** Template names follow the rules of index names minus the lowercase one (MetadataIndexTemplateService). */
function validateTemplateName(name: string): void {
  if (!name) throw illegalArgument('index_template must provide a name');
  if (name.includes(' ')) throw new EsError('invalid_index_template_exception', 400, `index_template [${name}] invalid, cause [name must not contain a space]`);
  if (name.startsWith('_')) throw new EsError('invalid_index_template_exception', 400, `index_template [${name}] invalid, cause [name must not start with '_']`);
}

/** Whether two pattern lists can match a common name (ES: Regex automaton intersection; here: each pattern tested against the other's literal prefix). */
export function overlaps(a: string[], b: string[]): boolean {
  for (const x of a) for (const y of b) if (patternsOverlap(x, y)) return true;
  return false;
}

function patternsOverlap(x: string, y: string): boolean {
  if (!x.includes('*') && !y.includes('*')) return x === y;
  if (!x.includes('*')) return globMatch(y, x);
  if (!y.includes('*')) return globMatch(x, y);
  // Both patterns: they overlap when their literal prefixes (up to the first `*`) are compatible
  // and their literal suffixes (after the last `*`) are too.
  const px = x.slice(0, x.indexOf('*'));
  const py = y.slice(0, y.indexOf('*'));
  const sx = x.slice(x.lastIndexOf('*') + 1);
  const sy = y.slice(y.lastIndexOf('*') + 1);
  const prefixOk = px.startsWith(py) || py.startsWith(px);
  const suffixOk = sx.endsWith(sy) || sy.endsWith(sx);
  return prefixOk && suffixOk;
}
