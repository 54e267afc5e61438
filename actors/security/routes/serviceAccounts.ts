import type { Routes } from '../../wire/rest';
import type { EsRequest } from '../../wire/rest';
import { renderRoleDescriptor } from '../roleDescriptor';
import { SERVICE_ACCOUNTS } from '../serviceAccountDefs';
import { authOf, type SecurityServices } from '../services';

const A = 'cluster:admin/xpack/security/service_account/';

/** Service accounts and their tokens (spec §5). */
export function serviceAccountRoutes(router: Routes, s: SecurityServices): void {
  const list = (req: EsRequest) => {
    const { namespace, service } = req.params;
    const picked = Object.keys(SERVICE_ACCOUNTS).filter((p) => {
      const [ns, svc] = p.split('/');
      return (!namespace || ns === namespace) && (!service || svc === service);
    });
    return { body: Object.fromEntries(picked.map((p) => [p, { role_descriptor: renderRoleDescriptor(SERVICE_ACCOUNTS[p]) }])) };
  };
  router.add('GET', '/_security/service', list, { kind: 'cluster', action: `${A}get` });
  router.add('GET', '/_security/service/{namespace}', list, { kind: 'cluster', action: `${A}get` });
  router.add('GET', '/_security/service/{namespace}/{service}', list, { kind: 'cluster', action: `${A}get` });

  const create = async (req: EsRequest) => {
    const { namespace, service, name } = req.params;
    return { body: await s.serviceAccounts.createToken(namespace, service, name, authOf(req), req.opaqueId) };
  };
  router.add(['POST', 'PUT'], '/_security/service/{namespace}/{service}/credential/token/{name}', create, { kind: 'cluster', action: `${A}token/create` });
  router.add('POST', '/_security/service/{namespace}/{service}/credential/token', create, { kind: 'cluster', action: `${A}token/create` });

  router.add(
    'DELETE',
    '/_security/service/{namespace}/{service}/credential/token/{name}',
    async (req) => {
      const { namespace, service, name } = req.params;
      const found = await s.serviceAccounts.deleteToken(namespace, service, name, req.opaqueId);
      return { status: found ? 200 : 404, body: { found } };
    },
    { kind: 'cluster', action: `${A}token/delete` },
  );

  router.add(
    'GET',
    '/_security/service/{namespace}/{service}/credential',
    (req) => {
      const account = `${req.params.namespace}/${req.params.service}`;
      const index = s.serviceAccounts.indexTokenNames(account);
      const file = s.serviceAccounts.files.namesOf(account).sort();
      const node = s.ctx.node.name;
      return {
        body: {
          service_account: account,
          count: index.length + file.length,
          tokens: Object.fromEntries(index.map((n) => [n, {}])),
          nodes_credentials: {
            _nodes: { total: 1, successful: 1, failed: 0 },
            file_tokens: Object.fromEntries(file.map((n) => [n, { nodes: [node] }])),
          },
        },
      };
    },
    { kind: 'cluster', action: `${A}credential/get` },
  );
}
