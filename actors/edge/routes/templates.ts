import { EsError, illegalArgument } from '../../wire/esErrors';
import type { Router } from '../router';
import type { EsRequest, EsResponse } from '../../wire/rest';
import type { SearchServices } from '../../search/services';
import type { ComponentTemplate, ComposableTemplate, LegacyTemplate, TemplateKind } from '../../cluster/templates';
import { renderLegacy, renderTemplateBody } from '../../cluster/templateRender';

const isPattern = (p: string) => p === '_all' || p.includes('*');
const split = (s: string | undefined) => (s ?? '').split(',').map((x) => x.trim()).filter(Boolean);
const boolParam = (v: string | undefined) => v === '' || v === 'true';

function renderComposable(t: ComposableTemplate): Record<string, unknown> {
  return {
    index_patterns: t.index_patterns,
    ...(t.template ? { template: renderTemplateBody(t.template) } : {}),
    composed_of: t.composed_of,
    ...(t.priority !== undefined ? { priority: t.priority } : {}),
    ...(t.version !== undefined ? { version: t.version } : {}),
    ...(t._meta !== undefined ? { _meta: t._meta } : {}),
    ...(t.allow_auto_create !== undefined ? { allow_auto_create: t.allow_auto_create } : {}),
  };
}

function renderComponent(t: ComponentTemplate): Record<string, unknown> {
  return {
    template: renderTemplateBody(t.template),
    ...(t.version !== undefined ? { version: t.version } : {}),
    ...(t._meta !== undefined ? { _meta: t._meta } : {}),
  };
}

/** Names an expression selects; an explicit name that does not exist -> `missing(name)`. */
function select(s: SearchServices, kind: TemplateKind, expr: string | undefined, missing: (name: string) => EsError): string[] {
  const names = s.cluster.metadata.templates.names(kind, expr);
  for (const p of split(expr)) if (!isPattern(p) && !names.includes(p)) throw missing(p);
  return names;
}

const notFound = (what: string) => (name: string) => new EsError('resource_not_found_exception', 404, `${what} matching [${name}] not found`);
const templateMissing = (name: string) => new EsError('index_template_missing_exception', 404, `index_template [${name}] missing`);

async function deleteTemplates(s: SearchServices, kind: TemplateKind, req: EsRequest, missing: (name: string) => EsError): Promise<EsResponse> {
  await s.cluster.deleteTemplates(kind, () => {
    const names = select(s, kind, req.params.name, missing);
    if (!names.length) throw missing(req.params.name);
    if (kind === 'component') {
      const index = s.cluster.metadata.templates.entries<ComposableTemplate>('index');
      const users = index.filter(([, t]) => t.composed_of.some((c) => names.includes(c))).map(([n]) => n);
      if (users.length) {
        const inUse = names.filter((n) => index.some(([, t]) => t.composed_of.includes(n)));
        throw illegalArgument(`component templates [${inUse.join(', ')}] cannot be removed as they are still in use by index templates [${users.join(', ')}]`);
      }
    }
    return names;
  });
  return { body: { acknowledged: true } };
}

/** `_index_template`, `_component_template` and legacy `_template` APIs. */
export function templateRoutes(r: Router, s: SearchServices): void {
  const t = () => s.cluster.metadata.templates;
  const cluster = (action: string) => ({ kind: 'cluster' as const, action });

  // ---- composable index templates ----
  r.add(['PUT', 'POST'], '/_index_template/{name}', async (req) => {
    const body = req.json();
    await s.cluster.putTemplate('index', req.params.name, () => t().parseComposable(req.params.name, body, boolParam(req.query.create)));
    return { body: { acknowledged: true } };
  }, cluster('indices:admin/index_template/put'));
  const getComposable = (req: EsRequest): EsResponse => {
    const names = select(s, 'index', req.params.name, notFound('index template'));
    if (req.method === 'HEAD') return { status: 200 };
    return { body: { index_templates: names.map((name) => ({ name, index_template: renderComposable(t().get('index', name)!) })) } };
  };
  r.add('GET', '/_index_template', getComposable, cluster('indices:admin/index_template/get'));
  r.add(['GET', 'HEAD'], '/_index_template/{name}', getComposable, cluster('indices:admin/index_template/get'));
  r.add('DELETE', '/_index_template/{name}', (req) => deleteTemplates(s, 'index', req, templateMissing), cluster('indices:admin/index_template/delete'));

  // ---- component templates ----
  r.add(['PUT', 'POST'], '/_component_template/{name}', async (req) => {
    const body = req.json();
    await s.cluster.putTemplate('component', req.params.name, () => t().parseComponent(req.params.name, body, boolParam(req.query.create)));
    return { body: { acknowledged: true } };
  }, cluster('cluster:admin/component_template/put'));
  const getComponent = (req: EsRequest): EsResponse => {
    const names = select(s, 'component', req.params.name, notFound('component template'));
    if (req.method === 'HEAD') return { status: 200 };
    return { body: { component_templates: names.map((name) => ({ name, component_template: renderComponent(t().get('component', name)!) })) } };
  };
  r.add('GET', '/_component_template', getComponent, cluster('cluster:admin/component_template/get'));
  r.add(['GET', 'HEAD'], '/_component_template/{name}', getComponent, cluster('cluster:admin/component_template/get'));
  r.add('DELETE', '/_component_template/{name}', (req) => deleteTemplates(s, 'component', req, notFound('component template')), cluster('cluster:admin/component_template/delete'));

  // ---- legacy templates ----
  r.add(['PUT', 'POST'], '/_template/{name}', async (req) => {
    const body = req.json();
    await s.cluster.putTemplate('legacy', req.params.name, () => t().parseLegacy(req.params.name, body, boolParam(req.query.create), req.query.order));
    return { body: { acknowledged: true } };
  }, cluster('indices:admin/template/put'));
  const getLegacy = (req: EsRequest): EsResponse => {
    const names = t().names('legacy', req.params.name);
    const explicitMissing = split(req.params.name).some((p) => !isPattern(p) && !names.includes(p));
    // ES answers a missing name with 404 and an empty object (RestGetIndexTemplateAction).
    const status = explicitMissing || (req.params.name !== undefined && !names.length) ? 404 : 200;
    if (req.method === 'HEAD') return { status };
    return { status, body: Object.fromEntries(names.map((n) => [n, renderLegacy(t().get('legacy', n) as LegacyTemplate)])) };
  };
  r.add('GET', '/_template', getLegacy, cluster('indices:admin/template/get'));
  r.add(['GET', 'HEAD'], '/_template/{name}', getLegacy, cluster('indices:admin/template/get'));
  r.add('DELETE', '/_template/{name}', (req) => deleteTemplates(s, 'legacy', req, templateMissing), cluster('indices:admin/template/delete'));
}
