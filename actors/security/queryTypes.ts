/** The types of the security query APIs' field tables (queryDsl.ts builds them). */
export type Value = string | number | boolean;
/** How a field is indexed in ES's `.security` mapping: keyword, text (analyzed), date, boolean. */
export type FieldKind = 'keyword' | 'text' | 'date' | 'boolean';

/** One queryable field of a record type. */
export interface Field<T> {
  readonly name: string;
  readonly kind: FieldKind;
  /** ES refuses to sort on text fields (`full_name`, `email`). */
  readonly sortable: boolean;
  values(doc: T): Value[];
}

/** The allowed fields of one API (ES FieldNameTranslators): resolves a name or throws ES's 400. */
export interface FieldTable<T> {
  resolve(name: string): Field<T>;
  /** Every concrete field a pattern names (simple_query_string `fields`); `*` is all of them. */
  matching(pattern: string): Field<T>[];
  /** The record's id (`ids` query). */
  id(doc: T): string;
}

export type Predicate<T> = (doc: T) => boolean;
