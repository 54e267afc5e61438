import { illegalArgument } from '../../../wire/esErrors';
import { parseDateValue } from './aggDates';
import type { DocValuesReader, FieldType } from '../types';
import type { TermsKind, ValueKind } from './aggPartials';
import type { AggSpec } from './aggTypes';

/** How aggregations read field values: types, numbers, `missing`, `_index`. */

export type Raw = string | number | boolean | bigint;

export const NUMERIC: readonly FieldType[] = ['long', 'integer', 'short', 'byte', 'double', 'float', 'half_float', 'scaled_float', 'unsigned_long'];
export const DATES: readonly FieldType[] = ['date', 'date_nanos'];

/**
 * `value_type` names (ES ValueType.lenientParse) and the field type they stand for when the field is
 * unmapped and `missing` is given; the numeric family is long or double by the missing value.
 */
export const VALUE_TYPES: Record<string, 'keyword' | 'number' | 'date' | 'boolean'> = {
  string: 'keyword', ip: 'keyword', double: 'number', float: 'number', number: 'number', numeric: 'number',
  long: 'number', integer: 'number', short: 'number', byte: 'number', date: 'date', boolean: 'boolean',
};

export const fielddataDisabled = (f: string) =>
  illegalArgument(
    'Text fields are not optimised for operations that require per-document field data like aggregations and sorting, ' +
      'so these operations are disabled by default. Please use a keyword field instead. Alternatively, set fielddata=true ' +
      `on [${f}] in order to load field data by uninverting the inverted index. Note that this can use significant memory.`,
  );

/** A value as a number (epoch millis for dates, 1/0 for booleans). */
export function toNumber(v: Raw, type: FieldType | undefined): number {
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (type === 'date_nanos' && typeof v === 'bigint') return Number(v / 1_000_000n);
  if (type === 'date' || type === 'date_nanos') return parseDateValue(v);
  if (type === 'boolean' && typeof v === 'string') return v === 'true' ? 1 : 0;
  const n = Number(v);
  if (Number.isNaN(n)) throw illegalArgument(`For input string: "${String(v)}"`);
  return n;
}

export function valueKind(type: FieldType | undefined): ValueKind {
  if (type === undefined) return 'unmapped';
  if (DATES.includes(type)) return 'date';
  return type === 'boolean' ? 'boolean' : 'number';
}

export function termsKind(type: FieldType | undefined, missing: unknown): TermsKind {
  if (type === undefined) return missing === undefined ? 'unmapped' : 'string';
  if (type === 'boolean') return 'boolean';
  if (type === 'ip') return 'ip';
  if (DATES.includes(type)) return 'date';
  if (['double', 'float', 'half_float', 'scaled_float'].includes(type)) return 'double';
  if (NUMERIC.includes(type)) return 'long';
  return 'string';
}

/** The field type `value_type` gives an unmapped field with a `missing` value (numbers: long unless it has a fraction). */
function hintedType(valueType: unknown, missing: unknown): FieldType | undefined {
  const hint = typeof valueType === 'string' ? VALUE_TYPES[valueType] : undefined;
  if (hint === undefined) return undefined;
  if (hint === 'number') return Number(missing) % 1 !== 0 ? 'double' : 'long';
  return hint;
}

/** What aggregations read of a shard besides doc values (the shard store has both). */
type ShardReader = DocValuesReader & { index?: string; mapping?: { field(path: string): { format?: string } | undefined } };

/** The values source of a field aggregation (ES ValuesSourceConfig.resolve). */
export interface FieldValues {
  field: string;
  /** The mapped type (`keyword` for `_index`), or the one `value_type` gives an unmapped field with `missing`. */
  type: FieldType | undefined;
  mapped: FieldType | undefined;
  hasMissing: boolean;
  /** The doc's values, or `[missing]` when it has none and `missing` is set. */
  read: (doc: number) => Raw[];
  /** `format`, or the mapping's date format. */
  dateFormat: string | undefined;
}

/** Resolves `field`, `missing`, `value_type` and `_index` of a field aggregation. */
export function fieldValues(spec: AggSpec, reader: DocValuesReader): FieldValues {
  const field = spec.params.field as string | undefined;
  if (field === undefined) throw illegalArgument('Required one of fields [field, script], but none were specified.');
  const shard = reader as ShardReader;
  const missing = spec.params.missing;
  const hasMissing = missing !== undefined && missing !== null;
  // `_index` reads as a keyword whose one value is the shard's index (ES IndexFieldMapper).
  const indexField = field === '_index' && shard.index !== undefined;
  const mapped = indexField ? 'keyword' : reader.fieldType(field);
  // a value_type the mapped field cannot give fails the shard (ES: "Value type mismatch fails shard")
  if (spec.params.value_type === 'ip' && mapped !== undefined && mapped !== 'ip') {
    throw illegalArgument(`Field [${field}] of type [${mapped}] is not supported for aggregation [${spec.type}]`);
  }
  const type: FieldType | undefined = mapped ?? (hasMissing ? (spec.params.value_type === 'ip' ? 'ip' : hintedType(spec.params.value_type, missing)) : undefined);
  const read = (doc: number) => {
    const vs = indexField ? [shard.index!] : mapped === undefined ? [] : reader.values(field, doc);
    return vs.length === 0 && hasMissing ? [missing as Raw] : vs;
  };
  const dateFormat = (spec.params.format as string | undefined) ?? shard.mapping?.field(field)?.format;
  return { field, type, mapped, hasMissing, read, dateFormat };
}
