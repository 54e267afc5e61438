/**
 * Bad input to the security APIs this round touched gets an ES-shaped 4xx, never a 5xx: junk bodies
 * (wrong types at every field) for application privileges, _has_privileges, _query/api_key, users
 * and the token endpoint.
 */
import { basic, ELASTIC_PASSWORD, startSecurityHarness, type SecurityHarness } from '../../support/securityHarness';

let h: SecurityHarness;
const elastic = basic('elastic', ELASTIC_PASSWORD);

beforeAll(async () => {
  h = await startSecurityHarness();
});
afterAll(() => h.stop());

const JUNK: unknown[] = [null, true, 0, -1, 1e308, 'x', '', [], [null], [1, 'a'], {}, { a: null }, { a: [] }, { a: { b: 5 } }, '*', ['*'], { '': '' }];

/** Every field of `shape` replaced in turn by every junk value, plus the junk values as whole bodies. */
function variants(shape: Record<string, unknown>): unknown[] {
  const out: unknown[] = [...JUNK];
  for (const k of Object.keys(shape)) for (const j of JUNK) out.push({ ...shape, [k]: j });
  return out;
}

const cases: Array<[string, string, Record<string, unknown>]> = [
  ['PUT', '/_security/privilege', { myapp: { read: { actions: ['a:b'], metadata: {} } } }],
  ['PUT', '/_security/privilege', { myapp: 'x' }],
  ['POST', '/_security/user/_has_privileges', { cluster: ['monitor'], index: [{ names: ['a'], privileges: ['read'] }], application: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] }],
  ['POST', '/_security/_query/api_key', { query: { term: { name: 'x' } }, from: 0, size: 1, sort: ['name'], search_after: ['a'] }],
  ['POST', '/_security/_query/api_key', { query: { bool: { must: [{ range: { creation: { gte: 'x' } } }] } } }],
  ['PUT', '/_security/user/junk_user', { username: 'junk_user', password: 'abcdef', roles: ['a'], full_name: 'n', email: 'e', metadata: {}, enabled: true }],
  ['PUT', '/_security/role/junk_role', { cluster: ['monitor'], indices: [{ names: ['a'], privileges: ['read'] }], applications: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] }],
  ['POST', '/_security/oauth2/token', { grant_type: 'password', username: 'elastic', password: 'x', scope: 'y' }],
  ['POST', '/_security/api_key', { name: 'k', expiration: '1d', role_descriptors: { r: { applications: [{ application: 'myapp', privileges: ['read'], resources: ['*'] }] } }, metadata: {} }],
];

describe('no 5xx for junk input', () => {
  it.each(cases)('%s %s with every field wrong', async (method, path, shape) => {
    const bad: string[] = [];
    for (const body of variants(shape)) {
      const res = await fetch(`${h.url}${path}`, { method, headers: { authorization: elastic, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      if (res.status >= 500) bad.push(`${res.status} ${JSON.stringify(body)} -> ${text.slice(0, 200)}`);
      else if (res.status >= 400 && !path.includes('oauth2')) {
        const json = JSON.parse(text);
        if (!json.error?.type || json.status !== res.status) bad.push(`not ES-shaped: ${res.status} ${text.slice(0, 200)}`);
      }
    }
    expect(bad).toEqual([]);
  });
});
