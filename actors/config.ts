import { readFileSync, existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { checkValue, ignoredReason, NODE_SETTINGS, settingDef } from './knownSettings';

/**
 * Node settings in Elasticsearch's flat-key style (`xpack.security.enabled`,
 * `search.max_keep_alive`, `xpack.security.authc.realms.jwt.jwt1.order`). Sources, later wins:
 * defaults < YAML file (CONFIG, default config/node.yml; nested or dotted keys) < environment
 * (`ES_SETTING_<KEY>` with `.` written as `_` and `_` as `__`, plus the named variables below) <
 * dynamic cluster settings (`PUT /_cluster/settings`).
 */
export class Settings {
  private readonly node = new Map<string, unknown>();
  private readonly dynamic = new Map<string, unknown>();

  constructor(values: Record<string, unknown> = {}) {
    for (const [k, v] of Object.entries(values)) this.node.set(k, v);
  }

  get<T = unknown>(key: string, fallback: T): T {
    if (this.dynamic.has(key)) return this.dynamic.get(key) as T;
    if (this.node.has(key)) return this.node.get(key) as T;
    return fallback;
  }
  str(key: string, fallback: string): string {
    return String(this.get<unknown>(key, fallback));
  }
  num(key: string, fallback: number): number {
    const v = Number(this.get<unknown>(key, fallback));
    return Number.isFinite(v) ? v : fallback;
  }
  bool(key: string, fallback: boolean): boolean {
    const v = this.get<unknown>(key, fallback);
    return typeof v === 'boolean' ? v : String(v) === 'true';
  }
  /** Every key under a prefix, prefix stripped (`xpack.security.authc.realms.jwt.`). */
  group(prefix: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const m of [this.node, this.dynamic]) for (const [k, v] of m) if (k.startsWith(prefix)) out[k.slice(prefix.length)] = v;
    return out;
  }
  /** Dynamic (cluster) setting; null removes it. */
  setDynamic(key: string, value: unknown): void {
    if (value === null || value === undefined) this.dynamic.delete(key);
    else this.dynamic.set(key, value);
  }
  dynamicEntries(): Record<string, unknown> {
    return Object.fromEntries(this.dynamic);
  }
}

/** Flattens nested YAML into dotted keys; arrays stay values. */
export function flatten(obj: unknown, prefix = '', out: Record<string, unknown> = {}): Record<string, unknown> {
  if (obj && typeof obj === 'object' && !Array.isArray(obj)) {
    for (const [k, v] of Object.entries(obj)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) out[prefix] = obj;
  return out;
}

/** Named environment variables and the settings they set. */
const ENV_KEYS: Record<string, string> = {
  ELASTIC_PASSWORD: 'bootstrap.password',
  CLUSTER_NAME: 'cluster.name',
  NODE_NAME: 'node.name',
  XPACK_SECURITY_ENABLED: 'xpack.security.enabled',
};

const ENV_PREFIX = 'ES_SETTING_';

/** `ES_SETTING_SEARCH_MAX__KEEP__ALIVE` -> `search.max_keep_alive` (ES docker's convention: `_` is `.`, `__` is `_`). */
export function settingFromEnvName(name: string): string {
  return name.slice(ENV_PREFIX.length).toLowerCase().replace(/__/g, '\u0000').replace(/_/g, '.').replace(/\u0000/g, '_');
}

/** `search.max_keep_alive` -> `ES_SETTING_SEARCH_MAX__KEEP__ALIVE`. */
export function envNameOfSetting(key: string): string {
  return ENV_PREFIX + key.toUpperCase().replace(/_/g, '__').replace(/\./g, '_');
}

/** One setting value and where it came from (for start-up messages). */
interface Sourced {
  value: unknown;
  source: string;
}

/** Start-up settings with what is wrong with them: ES refuses to start on any of `errors`. */
export interface SettingsReport {
  settings: Settings;
  errors: string[];
  warnings: string[];
}

function collect(env: NodeJS.ProcessEnv, configPath: string, explicitConfig: boolean, errors: string[]): Map<string, Sourced> {
  const out = new Map<string, Sourced>();
  if (existsSync(configPath)) {
    try {
      const doc = parseYaml(readFileSync(configPath, 'utf8')) ?? {};
      if (typeof doc !== 'object' || Array.isArray(doc)) throw new Error('the file must hold a mapping of setting keys to values');
      for (const [k, v] of Object.entries(flatten(doc))) out.set(k, { value: v, source: configPath });
    } catch (e) {
      errors.push(`Failed to load settings from [${configPath}]: ${(e as Error).message.split('\n')[0]}`);
    }
  } else if (explicitConfig) {
    errors.push(`CONFIG file [${configPath}] does not exist (unset CONFIG to run without a settings file)`);
  }
  for (const [name, key] of Object.entries(ENV_KEYS)) if (env[name] !== undefined) out.set(key, { value: env[name], source: name });
  for (const [name, v] of Object.entries(env)) {
    if (name.startsWith(ENV_PREFIX) && v !== undefined) out.set(settingFromEnvName(name), { value: v, source: name });
  }
  return out;
}

function unknownMessage(key: string, source: string): string {
  let hint = '';
  if (source.startsWith(ENV_PREFIX)) {
    // The usual slip: a `_` inside a key written as `_` instead of `__` (ES_SETTING_SEARCH_MAX_KEEP_ALIVE).
    const loose = (n: string) => n.replace(/__/g, '_');
    const meant = Object.keys(NODE_SETTINGS).find((k) => loose(envNameOfSetting(k)) === loose(source));
    hint = meant ? ` (from ${source}: did you mean ${envNameOfSetting(meant)}? A \`_\` inside a key is written \`__\`)` : ` (from ${source})`;
  } else hint = ` (from ${source})`;
  return `unknown setting [${key}]${hint} please check that any required plugins are installed, or check the breaking changes documentation for removed settings`;
}

/**
 * Reads the node's settings (CONFIG file, named variables, `ES_SETTING_*`) and checks them the way
 * Elasticsearch does at start-up: an unknown key, a bad value, an unreadable or missing CONFIG file
 * are errors (ES refuses to start); an ES setting this node does not use is a warning.
 */
export function readNodeSettings(env: NodeJS.ProcessEnv = process.env): SettingsReport {
  const errors: string[] = [];
  const warnings: string[] = [];
  const values = collect(env, env.CONFIG ?? 'config/node.yml', env.CONFIG !== undefined, errors);
  const flat: Record<string, unknown> = {};
  for (const [key, { value, source }] of values) {
    const def = settingDef(key);
    if (!def) {
      const why = ignoredReason(key);
      if (why) warnings.push(`setting [${key}] (from ${source}) is not used by this node and is ignored: ${why}`);
      else errors.push(unknownMessage(key, source));
      continue;
    }
    const bad = checkValue(key, value, def);
    if (bad) errors.push(`${bad} (from ${source})`);
    else flat[key] = value;
  }
  return { settings: new Settings(flat), errors, warnings };
}

/** Settings without checks (tests and benchmarks build theirs; `npm start` uses {@link readNodeSettings}). */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, configPath = env.CONFIG ?? 'config/node.yml'): Settings {
  const values: Record<string, unknown> = {};
  const errors: string[] = [];
  for (const [k, { value }] of collect(env, configPath, false, errors)) values[k] = value;
  if (errors.length) throw new Error(errors[0]);
  return new Settings(values);
}
