/**
 * Field definitions of a mapping and the helpers that build them: the vocabulary shared by the
 * mapping (mapping.ts) and the document parser (docParser.ts), which sees a mapping only through
 * {@link MappingView}.
 */
import { EsError } from '../../../wire/esErrors';
import type { FieldType } from '../types';
import type { DateFormatter } from '../base/dates';

/** `dynamic` of the root or of an object: true adds fields, false ignores them, strict rejects the doc. */
export type Dynamic = 'true' | 'false' | 'strict' | 'runtime';

/** One mapped field (leaf, multi-field or object). */
export interface FieldDef {
  /** Full dotted path, e.g. `user.name` or `title.keyword`. */
  readonly path: string;
  readonly type: FieldType;
  /** Mapping parameters echoed by `toJSON` (all but type/properties/fields). */
  readonly params: Record<string, unknown>;
  ignoreAbove?: number;
  format?: string;
  nullValue?: unknown;
  scalingFactor?: number;
  fielddata?: boolean;
  /** Objects: `enabled: false` keeps the subtree in `_source` only. */
  enabled?: boolean;
  /** `type: nested` objects: their values are not the parent's (query/nested.ts indexes them apart). */
  nested?: boolean;
  dynamic?: Dynamic;
  /** Multi-fields (`fields`), keyed by leaf name. */
  fields?: Map<string, FieldDef>;
  /** Object children, keyed by leaf name. */
  properties?: Map<string, FieldDef>;
}

/** Types whose doc values are numbers (slicing and numeric sort accept them). */
export const NUMERIC_TYPES = new Set<FieldType>([
  'long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long', 'boolean', 'date', 'date_nanos',
]);

/** ES's default `dynamic_date_formats`. */
export const DEFAULT_DYNAMIC_DATE_FORMATS = ['strict_date_optional_time', 'yyyy/MM/dd HH:mm:ss||yyyy/MM/dd||epoch_millis'];

/** ES's 400 `mapper_parsing_exception`. */
export const mapperParsing = (reason: string, causedBy?: EsError) =>
  new EsError('mapper_parsing_exception', 400, reason, causedBy ? { causedBy } : {});

/** ES's `index.mapping.depth.limit` default. */
export const DEFAULT_MAPPING_DEPTH_LIMIT = 20;

/**
 * An object at `path` must not be deeper than the mapping depth limit (the root is depth 1); mirrors
 * MappingLookup.checkObjectDepthLimit, which ES runs on every mapping update, dynamic ones included.
 */
export function checkObjectDepth(path: string, limit = DEFAULT_MAPPING_DEPTH_LIMIT): void {
  let dots = 0;
  for (let i = path.indexOf('.'); i >= 0; i = path.indexOf('.', i + 1)) dots++;
  if (dots + 2 > limit) {
    throw new EsError('illegal_argument_exception', 400, `Limit of mapping depth [${limit}] has been exceeded due to object field [${path}]`);
  }
}

export function normDynamic(v: unknown): Dynamic | undefined {
  if (v === undefined || v === null) return undefined;
  const s = String(v);
  return s === 'true' || s === 'false' || s === 'strict' || s === 'runtime' ? s : undefined;
}

/** An object field definition. */
export function objectDef(path: string, params: Record<string, unknown>): FieldDef {
  const def: FieldDef = { path, type: 'object', params, properties: new Map() };
  const d = normDynamic(params.dynamic);
  if (d) def.dynamic = d;
  if (params.enabled === false || params.enabled === 'false') def.enabled = false;
  return def;
}

/** A leaf field definition from its mapping parameters. */
export function leafDef(path: string, type: FieldType, params: Record<string, unknown>): FieldDef {
  const def: FieldDef = { path, type, params };
  if (params.ignore_above !== undefined) def.ignoreAbove = Number(params.ignore_above);
  if (params.format !== undefined) def.format = String(params.format);
  if (params.null_value !== undefined) def.nullValue = params.null_value;
  if (params.scaling_factor !== undefined) def.scalingFactor = Number(params.scaling_factor);
  if (params.fielddata === true || params.fielddata === 'true') def.fielddata = true;
  return def;
}

/** What the document parser needs of a mapping (IndexMapping implements it). */
export interface MappingView {
  readonly root: FieldDef;
  readonly dateDetection: boolean;
  readonly numericDetection: boolean;
  readonly dynamicDateFormats: string[];
  /** `index.mapping.depth.limit`: deepest object level (the root is 1). */
  readonly depthLimit?: number;
  /** Adds `def` under `parent` as `name`; returns the undo. */
  attach(parent: FieldDef, name: string, def: FieldDef): () => void;
  formatterOf(def: FieldDef): DateFormatter;
}
