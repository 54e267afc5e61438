import { EsError } from '../../../wire/esErrors';
import { stringify } from '../../../wire/json';
import type { FieldType } from '../types';
import { DEFAULT_DATE_FORMAT, dateFormatter, type DateFormatter } from '../base/dates';
import { parseDocument, prepareDocument, type ParsedDoc, type PreparedDoc } from './docParser';
import {
  DEFAULT_DYNAMIC_DATE_FORMATS, DEFAULT_MAPPING_DEPTH_LIMIT, checkObjectDepth, mapperParsing, normDynamic, objectDef, leafDef,
  type Dynamic, type FieldDef, type MappingView,
} from './fieldDef';

export { NUMERIC_TYPES, DEFAULT_DYNAMIC_DATE_FORMATS, mapperParsing, objectDef, leafDef } from './fieldDef';
export type { Dynamic, FieldDef } from './fieldDef';

const LEAF_TYPES = new Set<FieldType>([
  'keyword', 'text', 'long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float',
  'unsigned_long', 'boolean', 'date', 'date_nanos', 'ip', 'geo_point',
  'integer_range', 'long_range', 'float_range', 'double_range', 'date_range', 'ip_range',
]);

/**
 * The mapping of one index, shared by all its shards: explicit fields from `PUT /idx` plus dynamic
 * additions made while parsing documents (ES rules: strings -> text + `.keyword`, ISO-looking
 * strings -> date, integers -> long, floats -> float, booleans, objects).
 */
export class IndexMapping implements MappingView {
  readonly root: FieldDef;
  dateDetection = true;
  numericDetection = false;
  dynamicDateFormats: string[] = DEFAULT_DYNAMIC_DATE_FORMATS;
  /** `index.mapping.depth.limit` (ES's default; the setting itself is not configurable here yet). */
  readonly depthLimit = DEFAULT_MAPPING_DEPTH_LIMIT;
  /** Leaf fields and multi-fields by full path. */
  private readonly leaves = new Map<string, FieldDef>();
  private readonly objects = new Map<string, FieldDef>();
  private readonly extra: Record<string, unknown> = {};
  /** Bumped on every change; lets shards notice new fields. */
  version = 0;

  /** @param mappings the `mappings` object of create-index (`{dynamic?, properties?, …}`). */
  constructor(mappings: Record<string, unknown> = {}) {
    const { properties, dynamic, date_detection, numeric_detection, dynamic_date_formats, ...rest } = mappings;
    this.root = { path: '', type: 'object', params: {}, properties: new Map(), dynamic: normDynamic(dynamic) ?? 'true' };
    if (dynamic !== undefined) this.extra.dynamic = dynamic;
    if (date_detection !== undefined) this.dateDetection = this.extra.date_detection = date_detection === true || date_detection === 'true';
    if (numeric_detection !== undefined) this.numericDetection = this.extra.numeric_detection = numeric_detection === true || numeric_detection === 'true';
    if (Array.isArray(dynamic_date_formats)) this.dynamicDateFormats = this.extra.dynamic_date_formats = dynamic_date_formats.map(String);
    for (const k of ['_source', '_routing', '_meta', 'dynamic_templates', 'runtime']) if (k in rest) this.extra[k] = rest[k];
    if (properties && typeof properties === 'object') this.addProperties(this.root, properties as Record<string, unknown>);
  }

  /** Mapped type of a path (`object` for objects), undefined when unmapped. */
  fieldType(path: string): FieldType | undefined {
    return this.leaves.get(path)?.type ?? (this.objects.has(path) ? 'object' : undefined);
  }

  /** The leaf or multi-field at `path`. */
  field(path: string): FieldDef | undefined {
    return this.leaves.get(path);
  }

  /** The object mapped at `path` (nested ones included), if any. */
  objectAt(path: string): FieldDef | undefined {
    return this.objects.get(path);
  }

  /** Whether `path` is an object. */
  isObject(path: string): boolean {
    return this.objects.has(path);
  }

  /** All leaf paths (incl. multi-fields) at or below `path`. */
  leavesUnder(path: string): FieldDef[] {
    const out: FieldDef[] = [];
    const prefix = `${path}.`;
    for (const [p, d] of this.leaves) if (p === path || p.startsWith(prefix)) out.push(d);
    return out;
  }

  /** Every leaf and multi-field, in mapping order. */
  allLeaves(): FieldDef[] {
    return [...this.leaves.values()];
  }

  /** Date formatter of a date/date_nanos field. */
  formatterOf(def: FieldDef): DateFormatter {
    return dateFormatter(def.format ?? DEFAULT_DATE_FORMAT);
  }

  /**
   * Flattens a parsed `_source` into field values, adding dynamic fields (kept only if the whole
   * document parses). Throws `mapper_parsing_exception` / `strict_dynamic_mapping_exception`.
   * @param rawSource the JSON text, consulted only to tell `1.0` from `1` for new numeric fields
   */
  parse(source: unknown, id: string, rawSource?: string): ParsedDoc {
    return parseDocument(this, source, id, rawSource);
  }

  /** `parse`, also returning the undo of the document's dynamic mapping additions (see prepareDocument). */
  prepare(source: unknown, id: string, rawSource?: string): PreparedDoc {
    return prepareDocument(this, source, id, rawSource);
  }

  /**
   * The `mappings` object of this index as `GET /<index>/_mapping` shows it (`{dynamic?, properties}`,
   * properties sorted by name), so `{ mappings: mapping }` serializes as ES does.
   */
  toJSON(): Record<string, unknown> {
    const props = this.root.properties!;
    return { ...this.extra, ...(props.size ? { properties: propsJson(props) } : {}) };
  }

  /**
   * PUT _mapping: adds new fields (and new multi-fields, updated `ignore_above` / object `dynamic`)
   * to the live mapping. Changing a field's type or other parameters fails like ES; nothing is
   * applied unless everything validates.
   */
  merge(mappings: Record<string, unknown>): void {
    const { properties, dynamic, date_detection, numeric_detection, dynamic_date_formats } = mappings;
    const incoming = new IndexMapping({ properties: properties ?? {} });
    checkMerge(this.root, incoming.root);
    if (dynamic !== undefined) {
      this.root.dynamic = normDynamic(dynamic) ?? this.root.dynamic;
      this.extra.dynamic = dynamic;
    }
    if (date_detection !== undefined) this.dateDetection = this.extra.date_detection = date_detection === true || date_detection === 'true';
    if (numeric_detection !== undefined) this.numericDetection = this.extra.numeric_detection = numeric_detection === true || numeric_detection === 'true';
    if (Array.isArray(dynamic_date_formats)) this.dynamicDateFormats = this.extra.dynamic_date_formats = dynamic_date_formats.map(String);
    this.applyMerge(this.root, incoming.root);
    this.version++;
  }

  private applyMerge(cur: FieldDef, inc: FieldDef): void {
    for (const [name, def] of inc.properties ?? []) {
      const existing = cur.properties!.get(name);
      if (!existing) {
        this.attach(cur, name, def);
        continue;
      }
      if (existing.type === 'object') {
        if (def.dynamic) existing.dynamic = def.dynamic;
        Object.assign(existing.params, def.params);
        this.applyMerge(existing, def);
        continue;
      }
      if (def.ignoreAbove !== undefined) {
        existing.ignoreAbove = def.ignoreAbove;
        existing.params.ignore_above = def.params.ignore_above;
      }
      for (const [sub, subDef] of def.fields ?? []) {
        if (existing.fields?.has(sub)) continue;
        (existing.fields ??= new Map()).set(sub, subDef);
        this.leaves.set(subDef.path, subDef);
      }
    }
  }

  /**
   * The whole mapping state for a snapshot, order-preserving (field insertion order and the order
   * of the leaf/object indexes, which query expansion iterates), unlike `toJSON` which sorts.
   */
  toSnapshot(): MappingImage {
    return {
      root: defImage(this.root),
      leaves: [...this.leaves.keys()],
      objects: [...this.objects.keys()],
      extra: this.extra,
      dateDetection: this.dateDetection,
      numericDetection: this.numericDetection,
      dynamicDateFormats: this.dynamicDateFormats,
      version: this.version,
    };
  }

  /** Inverse of `toSnapshot`. */
  static fromSnapshot(img: MappingImage): IndexMapping {
    const m = new IndexMapping();
    const byPath = new Map<string, FieldDef>();
    const root = defFromImage(img.root, byPath);
    Object.assign(m.root, root);
    byPath.set('', m.root);
    const pick = (p: string) => {
      const d = byPath.get(p);
      if (!d) throw new Error(`mapping snapshot names unknown field [${p}]`);
      return d;
    };
    for (const p of img.leaves) m.leaves.set(p, pick(p));
    for (const p of img.objects) m.objects.set(p, pick(p));
    Object.assign(m.extra, img.extra);
    m.dateDetection = img.dateDetection;
    m.numericDetection = img.numericDetection;
    m.dynamicDateFormats = img.dynamicDateFormats;
    m.version = img.version;
    return m;
  }

  // ---- building ----

  /** Adds `def` under `parent` (used by construction and dynamic updates). Returns an undo function. */
  attach(parent: FieldDef, name: string, def: FieldDef): () => void {
    parent.properties!.set(name, def);
    const added: string[] = [];
    const index = (d: FieldDef) => {
      if (d.type === 'object') this.objects.set(d.path, d);
      else this.leaves.set(d.path, d);
      added.push(d.path);
      d.fields?.forEach(index);
      d.properties?.forEach(index);
    };
    index(def);
    this.version++;
    return () => {
      parent.properties!.delete(name);
      for (const p of added) {
        this.leaves.delete(p);
        this.objects.delete(p);
      }
      this.version++;
    };
  }

  private addProperties(parent: FieldDef, props: Record<string, unknown>): void {
    for (const [name, spec] of Object.entries(props)) {
      checkFieldName(name);
      const parts = name.split('.');
      let p = parent;
      for (const part of parts.slice(0, -1)) {
        // `"a.b": {…}` in a mapping means object a with child b
        let child = p.properties!.get(part);
        if (child && child.type !== 'object') {
          throw new EsError('illegal_argument_exception', 400, `can't merge a non object mapping [${child.path}] with an object mapping`);
        }
        if (!child) {
          checkObjectDepth(join(p.path, part), this.depthLimit);
          this.attach(p, part, (child = objectDef(join(p.path, part), {})));
        }
        p = child;
      }
      const leaf = parts[parts.length - 1];
      const def = this.buildDef(join(p.path, leaf), spec as Record<string, unknown>);
      const existing = p.properties!.get(leaf); // `"a.b"` and then `"a"` name the same field twice
      if (existing && (existing.type === 'object') !== (def.type === 'object')) {
        throw new EsError('illegal_argument_exception', 400, `can't merge a non object mapping [${existing.type === 'object' ? def.path : existing.path}] with an object mapping`);
      }
      this.attach(p, leaf, def);
    }
  }

  private buildDef(path: string, spec: Record<string, unknown>): FieldDef {
    if (!spec || typeof spec !== 'object') throw mapperParsing(`Expected map for property [fields] on field [${path}] but got a class java.lang.String`);
    const { type, properties, fields, ...params } = spec;
    if (type === undefined || type === 'object' || type === 'nested') {
      if (properties === undefined && type === undefined && Object.keys(params).length === 0 && fields === undefined) {
        throw mapperParsing(`No type specified for field [${path.slice(path.lastIndexOf('.') + 1)}]`);
      }
      checkObjectDepth(path, this.depthLimit); // before recursing into properties
      const def = objectDef(path, params);
      if (type === 'nested') def.nested = true;
      def.properties = new Map();
      if (properties) this.addPropertiesTo(def, properties as Record<string, unknown>);
      return def;
    }
    if (typeof type !== 'string' || !LEAF_TYPES.has(type as FieldType)) {
      throw mapperParsing(`No handler for type [${String(type)}] declared on field [${path.slice(path.lastIndexOf('.') + 1)}]`);
    }
    const def: FieldDef = leafDef(path, type as FieldType, params);
    if (type === 'date' || type === 'date_nanos' || type === 'date_range') {
      try {
        dateFormatter(def.format ?? DEFAULT_DATE_FORMAT);
      } catch (e) {
        throw mapperParsing(`Failed to parse mapping: Invalid format: [${def.format}]`, new EsError('illegal_argument_exception', 400, (e as Error).message));
      }
    }
    if (type === 'scaled_float' && !(def.scalingFactor! > 0)) throw mapperParsing('Failed to parse mapping: Field [scaling_factor] is required');
    if (fields && typeof fields === 'object') {
      def.fields = new Map();
      for (const [n, s] of Object.entries(fields as Record<string, unknown>)) {
        checkFieldName(n);
        def.fields.set(n, this.buildDef(`${path}.${n}`, s as Record<string, unknown>));
      }
    }
    return def;
  }

  private addPropertiesTo(def: FieldDef, props: Record<string, unknown>): void {
    // children are indexed when the parent is attached
    for (const [name, spec] of Object.entries(props)) {
      checkFieldName(name);
      def.properties!.set(name, this.buildDef(join(def.path, name), spec as Record<string, unknown>));
    }
  }
}

/** ObjectMapper.validateFieldName (indices created by 8.6+): no empty or blank field names. */
function checkFieldName(name: string): void {
  const bad = name.length === 0 ? 'field name cannot be an empty string' : /^\s+$/.test(name) ? 'field name cannot contain only whitespaces' : undefined;
  if (bad) throw mapperParsing(`Failed to parse mapping: ${bad}`, new EsError('illegal_argument_exception', 400, bad));
}

const join = (a: string, b: string) => (a ? `${a}.${b}` : b);

/** A FieldDef as plain JSON: every property kept, Maps as ordered [name, def] pairs. */
export type FieldDefImage = Omit<FieldDef, 'fields' | 'properties'> & {
  fields?: Array<[string, FieldDefImage]>;
  properties?: Array<[string, FieldDefImage]>;
};

/** IndexMapping state as plain JSON (see `toSnapshot`). */
export interface MappingImage {
  root: FieldDefImage;
  leaves: string[];
  objects: string[];
  extra: Record<string, unknown>;
  dateDetection: boolean;
  numericDetection: boolean;
  dynamicDateFormats: string[];
  version: number;
}

function defImage(d: FieldDef): FieldDefImage {
  const { fields, properties, ...rest } = d;
  return {
    ...rest,
    ...(fields ? { fields: [...fields].map(([k, v]) => [k, defImage(v)] as [string, FieldDefImage]) } : {}),
    ...(properties ? { properties: [...properties].map(([k, v]) => [k, defImage(v)] as [string, FieldDefImage]) } : {}),
  };
}

function defFromImage(img: FieldDefImage, byPath: Map<string, FieldDef>): FieldDef {
  const { fields, properties, ...rest } = img;
  const d: FieldDef = { ...rest };
  if (fields) d.fields = new Map(fields.map(([k, v]) => [k, defFromImage(v, byPath)]));
  if (properties) d.properties = new Map(properties.map(([k, v]) => [k, defFromImage(v, byPath)]));
  byPath.set(d.path, d);
  return d;
}

const MERGEABLE = new Set(['ignore_above', 'dynamic', 'enabled']);

function checkMerge(cur: FieldDef, inc: FieldDef): void {
  for (const [name, def] of inc.properties ?? []) {
    const existing = cur.properties!.get(name);
    if (!existing) continue;
    if ((existing.type === 'object') !== (def.type === 'object')) {
      throw new EsError('illegal_argument_exception', 400, existing.type === 'object'
        ? `can't merge a non object mapping [${def.path}] with an object mapping`
        : `can't merge a non object mapping [${existing.path}] with an object mapping`);
    }
    if (existing.type === 'object') {
      checkMerge(existing, def);
      continue;
    }
    if (existing.type !== def.type) {
      throw new EsError('illegal_argument_exception', 400, `mapper [${existing.path}] cannot be changed from type [${existing.type}] to [${def.type}]`);
    }
    const changed = [...new Set([...Object.keys(existing.params), ...Object.keys(def.params)])]
      .filter((k) => !MERGEABLE.has(k) && stringify(existing.params[k]) !== stringify(def.params[k])); // 64-bit values too
    if (changed.length) {
      const k = changed[0];
      throw new EsError('illegal_argument_exception', 400,
        `Mapper for [${existing.path}] conflicts with existing mapper:\n\tCannot update parameter [${k}] from [${String(existing.params[k] ?? 'null')}] to [${String(def.params[k] ?? 'null')}]`);
    }
    for (const [sub, subDef] of def.fields ?? []) {
      const cs = existing.fields?.get(sub);
      if (cs && cs.type !== subDef.type) {
        throw new EsError('illegal_argument_exception', 400, `mapper [${cs.path}] cannot be changed from type [${cs.type}] to [${subDef.type}]`);
      }
    }
  }
}

function propsJson(props: Map<string, FieldDef>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of [...props.keys()].sort()) out[name] = defJson(props.get(name)!);
  return out;
}

/** A field definition as mapping JSON (`GET _mapping` form, with its multi-fields and properties). */
export function defJson(d: FieldDef): Record<string, unknown> {
  if (d.type === 'object') {
    const hasProps = d.properties && d.properties.size > 0;
    return { ...(hasProps && !d.nested ? {} : { type: d.nested ? 'nested' : 'object' }), ...d.params, ...(hasProps ? { properties: propsJson(d.properties!) } : {}) };
  }
  const out: Record<string, unknown> = { type: d.type, ...d.params };
  if (d.fields?.size) out.fields = propsJson(d.fields);
  return out;
}
