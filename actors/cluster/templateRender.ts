import { renderAliasMeta } from './aliases';
import type { LegacyTemplate, TemplateBody } from './templates';

/** How templates print in `GET /_template`, `GET /_index_template`, component templates and cluster state. */

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `GET /_template` rendering of one legacy template (settings nested under `index`). */
export function renderLegacy(t: LegacyTemplate): Record<string, unknown> {
  return {
    order: t.order,
    ...(t.version !== undefined ? { version: t.version } : {}),
    index_patterns: t.index_patterns,
    settings: nestSettings(t.settings),
    mappings: t.mappings,
    aliases: Object.fromEntries(Object.entries(t.aliases).map(([a, m]) => [a, renderAliasMeta(m)])),
  };
}

/** `template` part rendering of composable/component templates. */
export function renderTemplateBody(b: TemplateBody): Record<string, unknown> {
  return {
    ...(b.settings && Object.keys(b.settings).length ? { settings: nestSettings(b.settings) } : {}),
    ...(b.mappings ? { mappings: b.mappings } : {}),
    ...(b.aliases ? { aliases: Object.fromEntries(Object.entries(b.aliases).map(([a, m]) => [a, renderAliasMeta(m)])) } : {}),
  };
}

/** `{"index.number_of_shards":"1"}` -> `{index:{number_of_shards:"1"}}` (ES prints settings nested). */
export function nestSettings(flat: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(flat)) {
    const parts = k.split('.');
    let o = out;
    for (const p of parts.slice(0, -1)) o = (isObj(o[p]) ? o[p] : (o[p] = {})) as Record<string, unknown>;
    o[parts[parts.length - 1]] = v;
  }
  return out;
}
