import { readFileSync, existsSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';

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

export function loadSettings(env: NodeJS.ProcessEnv = process.env, configPath = env.CONFIG ?? 'config/node.yml'): Settings {
  let values: Record<string, unknown> = {};
  if (existsSync(configPath)) values = flatten(parseYaml(readFileSync(configPath, 'utf8')) ?? {});
  for (const [name, key] of Object.entries(ENV_KEYS)) if (env[name] !== undefined) values[key] = env[name];
  for (const [name, v] of Object.entries(env)) {
    if (!name.startsWith('ES_SETTING_') || v === undefined) continue;
    const key = name.slice('ES_SETTING_'.length).toLowerCase().replace(/__/g, '\u0000').replace(/_/g, '.').replace(/\u0000/g, '_');
    values[key] = v;
  }
  return new Settings(values);
}
