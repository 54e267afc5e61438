/**
 * A small JSON Schema validator for the subset our event schemas use (draft 2020-12 keywords):
 * `type`, `properties`, `required`, `additionalProperties`, `items`, `minItems`, `enum`, `const`,
 * `minimum`, `maximum`, `minLength`, `pattern`, `format` (`date-time`, `uuid`), `$ref` (local
 * `#/$defs/…` and other registered schemas by file name or `$id`), `$defs`, `allOf`, `anyOf`, `oneOf`.
 * Annotations (`title`, `description`, `$comment`, `examples`, `$schema`, `$id`) are ignored.
 *
 * Any other keyword throws when the schema is registered, so a schema can never silently rely on
 * something this validator does not check. Why not ajv: the subset is ~200 lines, has no code
 * generation, and keeps the runtime dependency list short; the contract test runs a few hundred
 * events, so compile speed does not matter.
 */

/** A JSON Schema: a boolean or an object of keywords. */
export type JsonSchema = boolean | { [k: string]: unknown };

/** One validation failure: where (`/data/keepAliveMs`) and what. */
export interface SchemaError {
  path: string;
  message: string;
}

const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'examples', 'default', 'deprecated', '$defs']);
const KEYWORDS = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'minItems', 'enum', 'const',
  'minimum', 'maximum', 'minLength', 'pattern', 'format', '$ref', 'allOf', 'anyOf', 'oneOf',
]);
const FORMATS: Record<string, RegExp> = {
  'date-time': /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
};

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

function typeOf(x: unknown): string {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'array';
  if (typeof x === 'number') return Number.isInteger(x) ? 'integer' : 'number';
  return typeof x;
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Last path segment of a schema `$id` or file name: `https://x/y/scroll.schema.json` -> `scroll.schema.json`. */
const fileOf = (ref: string) => ref.slice(ref.lastIndexOf('/') + 1);

/**
 * A set of schemas that may `$ref` each other by file name.
 *
 * @example
 * const v = new SchemaSet([envelopeSchema, scrollSchema]);
 * const errors = v.validate('scroll.schema.json', fact); // [] when valid
 */
export class SchemaSet {
  private readonly byName = new Map<string, Record<string, unknown>>();

  constructor(schemas: Array<Record<string, unknown>> = []) {
    for (const s of schemas) this.add(s);
  }

  /** Registers a schema under its `$id` file name; throws on keywords outside the supported subset. */
  add(schema: Record<string, unknown>, name = fileOf(String(schema.$id ?? ''))): this {
    if (!name) throw new Error('schema needs an $id or a name');
    checkKeywords(schema, name);
    this.byName.set(name, schema);
    return this;
  }

  /** Whether a schema is registered under `name` (`scroll.schema.json`). */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** Validates `value` against the schema registered as `name`; returns every failure (empty = valid). */
  validate(name: string, value: unknown): SchemaError[] {
    const root = this.byName.get(name);
    if (!root) throw new Error(`unknown schema ${name}`);
    const errors: SchemaError[] = [];
    this.check(root, root, value, '', errors);
    return errors;
  }

  private resolve(ref: string, root: Record<string, unknown>): { schema: JsonSchema; root: Record<string, unknown> } {
    const [file, pointer = ''] = ref.split('#');
    const base = file ? this.byName.get(fileOf(file)) : root;
    if (!base) throw new Error(`unresolved $ref ${ref}`);
    let node: unknown = base;
    for (const part of pointer.split('/').filter(Boolean)) {
      node = isObject(node) ? node[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
    }
    if (node === undefined) throw new Error(`unresolved $ref ${ref}`);
    return { schema: node as JsonSchema, root: base };
  }

  private check(schema: JsonSchema, root: Record<string, unknown>, v: unknown, path: string, out: SchemaError[]): void {
    if (schema === true) return;
    if (schema === false) {
      out.push({ path, message: 'is not allowed' });
      return;
    }
    const s = schema;
    const fail = (message: string, at = path) => out.push({ path: at || '/', message });
    if (typeof s.$ref === 'string') {
      const r = this.resolve(s.$ref, root);
      this.check(r.schema, r.root, v, path, out);
    }
    if (s.type !== undefined) {
      const types = Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
      const t = typeOf(v);
      if (!types.some((x) => x === t || (x === 'number' && t === 'integer'))) {
        fail(`must be ${types.join(' or ')}, got ${t}`);
        return; // the other keywords would only add noise
      }
    }
    if ('const' in s && !deepEqual(v, s.const)) fail(`must be ${JSON.stringify(s.const)}`);
    if (Array.isArray(s.enum) && !s.enum.some((e) => deepEqual(e, v))) fail(`must be one of ${JSON.stringify(s.enum)}`);
    if (typeof v === 'number') {
      if (typeof s.minimum === 'number' && v < s.minimum) fail(`must be >= ${s.minimum}`);
      if (typeof s.maximum === 'number' && v > s.maximum) fail(`must be <= ${s.maximum}`);
    }
    if (typeof v === 'string') {
      if (typeof s.minLength === 'number' && [...v].length < s.minLength) fail(`must have at least ${s.minLength} characters`);
      if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(v)) fail(`must match ${s.pattern}`);
      if (typeof s.format === 'string' && FORMATS[s.format] && !FORMATS[s.format].test(v)) fail(`must be a ${s.format}`);
    }
    if (Array.isArray(v)) {
      if (typeof s.minItems === 'number' && v.length < s.minItems) fail(`must have at least ${s.minItems} items`);
      if (s.items !== undefined) v.forEach((x, i) => this.check(s.items as JsonSchema, root, x, `${path}/${i}`, out));
    }
    if (isObject(v)) this.checkObject(s, root, v, path, out);
    if (Array.isArray(s.allOf)) for (const sub of s.allOf as JsonSchema[]) this.check(sub, root, v, path, out);
    if (Array.isArray(s.anyOf) || Array.isArray(s.oneOf)) this.checkAlternatives(s, root, v, path, out);
  }

  private checkObject(s: Record<string, unknown>, root: Record<string, unknown>, v: Record<string, unknown>, path: string, out: SchemaError[]) {
    const props = (isObject(s.properties) ? s.properties : {}) as Record<string, JsonSchema>;
    if (Array.isArray(s.required)) {
      for (const k of s.required as string[]) if (!(k in v)) out.push({ path: `${path}/${k}`, message: 'is required' });
    }
    for (const [k, x] of Object.entries(v)) {
      if (k in props) this.check(props[k], root, x, `${path}/${k}`, out);
      else if (s.additionalProperties === false) out.push({ path: `${path}/${k}`, message: 'is not a documented property' });
      else if (isObject(s.additionalProperties)) this.check(s.additionalProperties, root, x, `${path}/${k}`, out);
    }
  }

  private checkAlternatives(s: Record<string, unknown>, root: Record<string, unknown>, v: unknown, path: string, out: SchemaError[]) {
    const alts = (s.oneOf ?? s.anyOf) as JsonSchema[];
    const results = alts.map((sub) => {
      const errs: SchemaError[] = [];
      this.check(sub, root, v, path, errs);
      return errs;
    });
    const passed = results.filter((r) => r.length === 0).length;
    if (s.oneOf && passed > 1) out.push({ path: path || '/', message: `matches ${passed} oneOf alternatives, must match exactly one` });
    if (passed > 0) return;
    // Explain with the closest alternative: one whose `type` discriminator matched, then the fewest errors.
    const rank = (errs: SchemaError[]) => (errs.some((e) => e.path === `${path}/type`) ? 1e6 : 0) + errs.length;
    const best = results.reduce((a, b) => (rank(b) < rank(a) ? b : a));
    out.push(...best);
  }
}

function checkKeywords(schema: unknown, where: string): void {
  if (typeof schema === 'boolean') return;
  if (!isObject(schema)) throw new Error(`${where}: a schema must be an object or a boolean`);
  for (const [k, v] of Object.entries(schema)) {
    if (ANNOTATIONS.has(k)) {
      if (k === '$defs' && isObject(v)) for (const [n, d] of Object.entries(v)) checkKeywords(d, `${where}/$defs/${n}`);
      continue;
    }
    if (!KEYWORDS.has(k)) throw new Error(`${where}: keyword "${k}" is outside the supported JSON Schema subset`);
    if (k === 'format' && !(String(v) in FORMATS)) throw new Error(`${where}: format "${String(v)}" is not supported`);
    if (k === 'properties' && isObject(v)) for (const [n, d] of Object.entries(v)) checkKeywords(d, `${where}/properties/${n}`);
    if ((k === 'items' || k === 'additionalProperties') && typeof v !== 'boolean') checkKeywords(v, `${where}/${k}`);
    if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v)) v.forEach((d, i) => checkKeywords(d, `${where}/${k}/${i}`));
  }
}
