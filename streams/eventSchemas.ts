import { SchemaSet, type SchemaError } from './jsonSchema';
import { aggregateOf } from './envelope';
import envelope from './schemas/envelope.schema.json';
import common from './schemas/common.schema.json';
import scroll from './schemas/scroll.schema.json';
import pit from './schemas/pit.schema.json';
import token from './schemas/token.schema.json';
import apikey from './schemas/apikey.schema.json';
import servicetoken from './schemas/servicetoken.schema.json';
import user from './schemas/user.schema.json';
import role from './schemas/role.schema.json';
import node from './schemas/node.schema.json';
import asyncsearch from './schemas/asyncsearch.schema.json';
import quota from './schemas/quota.schema.json';
import partition from './schemas/partition.schema.json';

/** The aggregate schemas by aggregate name (`streams/schemas/<aggregate>.schema.json`). */
export const FACT_SCHEMAS: Readonly<Record<string, Record<string, unknown>>> = { scroll, pit, token, apikey, servicetoken, user, role, node, asyncsearch, quota, partition };

let set: SchemaSet | undefined;

/** Every event schema, registered once (throws if a schema uses a keyword the validator lacks). */
export function eventSchemas(): SchemaSet {
  if (!set) {
    set = new SchemaSet([envelope, common] as Array<Record<string, unknown>>);
    for (const s of Object.values(FACT_SCHEMAS)) set.add(s);
  }
  return set;
}

/** Fact types each aggregate schema documents (from the top-level `type` enum). */
export function documentedTypes(): string[] {
  return Object.values(FACT_SCHEMAS).flatMap((s) => ((s.properties as { type: { enum: string[] } }).type.enum));
}

/**
 * Validates one envelope (as it travels on the wire, without reader-added fields such as
 * `streamSeq`) against the envelope schema and its aggregate's schema.
 *
 * @example
 * const errors = validateFact(env);
 * if (errors.length) console.error(errors.map((e) => `${e.path} ${e.message}`));
 */
export function validateFact(env: unknown): SchemaError[] {
  const type = (env as { type?: unknown })?.type;
  const aggregate = typeof type === 'string' ? aggregateOf(type) : '';
  const schemas = eventSchemas();
  if (!aggregate || !FACT_SCHEMAS[aggregate]) {
    const errs = schemas.validate('envelope.schema.json', env);
    return [...errs, { path: '/type', message: `no schema for aggregate "${aggregate}" (streams/schemas)` }];
  }
  return schemas.validate(`${aggregate}.schema.json`, env);
}
