import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { envNameOfSetting, readNodeSettings, settingFromEnvName } from '../../../actors/config';
import { settingDef } from '../../../actors/knownSettings';

const ROOT = resolve(__dirname, '../../..');
const absent = (dir: string) => join(dir, 'none.yml');

describe('ES_SETTING_ variables', () => {
  it.each([
    ['ES_SETTING_SEARCH_MAX__KEEP__ALIVE', 'search.max_keep_alive'],
    ['ES_SETTING_XPACK_SECURITY_AUTHC_TOKEN_TIMEOUT', 'xpack.security.authc.token.timeout'],
    ['ES_SETTING_SNAPSHOT_MIN__OPS', 'snapshot.min_ops'],
  ])('%s sets %s, and back', (name, key) => {
    expect(settingFromEnvName(name)).toBe(key);
    expect(envNameOfSetting(key)).toBe(name);
  });

  it('the README example sets search.max_keep_alive', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const m = /`(ES_SETTING_[A-Z_]+)=1h`/.exec(readme);
    expect(m).not.toBeNull();
    const r = readNodeSettings({ CONFIG: undefined, [m![1]]: '1h' });
    expect(r.errors).toEqual([]);
    expect(r.settings.str('search.max_keep_alive', '24h')).toBe('1h');
  });
});

describe('start-up checks (as ES refuses to start)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'settings-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('refuses an unknown key and names the variable that was meant', () => {
    const r = readNodeSettings({ CONFIG: undefined, ES_SETTING_SEARCH_MAX_KEEP_ALIVE: '1h' });
    expect(r.errors).toEqual([
      'unknown setting [search.max.keep.alive] (from ES_SETTING_SEARCH_MAX_KEEP_ALIVE: did you mean ES_SETTING_SEARCH_MAX__KEEP__ALIVE? A `_` inside a key is written `__`) please check that any required plugins are installed, or check the breaking changes documentation for removed settings',
    ]);
    expect(r.settings.get('search.max.keep.alive', undefined)).toBeUndefined();
  });

  it('refuses an unknown key of the CONFIG file', async () => {
    const f = join(dir, 'unknown.yml');
    await writeFile(f, 'search:\n  max_keep_alive: 2h\nsearch.max_keep_alvie: 1h\n');
    const r = readNodeSettings({ CONFIG: f });
    expect(r.errors).toEqual([expect.stringMatching(/^unknown setting \[search\.max_keep_alvie\] \(from .*unknown\.yml\) please check/)]);
    expect(r.settings.str('search.max_keep_alive', '24h')).toBe('2h');
  });

  it.each([
    ['XPACK_SECURITY_ENABLED', 'yes', 'Failed to parse value [yes] as only [true] or [false] are allowed. (from XPACK_SECURITY_ENABLED)'],
    ['ES_SETTING_SEARCH_MAX__KEEP__ALIVE', '1 hour', 'failed to parse setting [search.max_keep_alive] with value [1 hour] as a time value: unit is missing or unrecognized (from ES_SETTING_SEARCH_MAX__KEEP__ALIVE)'],
    ['ES_SETTING_SEARCH_MAX__OPEN__SCROLL__CONTEXT', 'many', 'Failed to parse value [many] for setting [search.max_open_scroll_context] (from ES_SETTING_SEARCH_MAX__OPEN__SCROLL__CONTEXT)'],
    ['ES_SETTING_SNAPSHOT_MIN__OPS', '-5', 'Failed to parse value [-5] for setting [snapshot.min_ops] must be >= 0 (from ES_SETTING_SNAPSHOT_MIN__OPS)'],
    ['ES_SETTING_XPACK_SECURITY_AUTHC_TOKEN_TIMEOUT', '2h', 'failed to parse value [2h] for setting [xpack.security.authc.token.timeout], must be <= [1h] (from ES_SETTING_XPACK_SECURITY_AUTHC_TOKEN_TIMEOUT)'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(readNodeSettings({ CONFIG: undefined, [name]: value }).errors).toEqual([message]);
  });

  it('refuses a CONFIG file that does not exist, and one that does not parse', async () => {
    expect(readNodeSettings({ CONFIG: absent(dir) }).errors).toEqual([`CONFIG file [${absent(dir)}] does not exist (unset CONFIG to run without a settings file)`]);
    const bad = join(dir, 'bad.yml');
    await writeFile(bad, 'a: [1\n');
    expect(readNodeSettings({ CONFIG: bad }).errors).toEqual([expect.stringMatching(/^Failed to load settings from \[.*bad\.yml\]: /)]);
  });

  it('runs without a settings file when CONFIG is not set and config/node.yml is absent', () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      expect(readNodeSettings({}).errors).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it('accepts YAML values of the right type, realm settings and booleans as text', async () => {
    const f = join(dir, 'good.yml');
    await writeFile(
      f,
      [
        'xpack.security.enabled: true',
        'snapshot.interval_ms: 60000',
        'xpack.security.authc.realms.jwt.jwt1:',
        '  order: 3',
        '  allowed_audiences: [es01, es02]',
        '  required_claims.tenant: acme',
        '  claims.principal: sub',
        'xpack.security.authc.realms.file.file1.enabled: "false"',
      ].join('\n'),
    );
    const r = readNodeSettings({ CONFIG: f, ES_SETTING_SNAPSHOT_ENABLED: 'false' });
    expect(r).toMatchObject({ errors: [], warnings: [] });
    expect(r.settings.num('snapshot.interval_ms', 0)).toBe(60000);
    expect(r.settings.bool('snapshot.enabled', true)).toBe(false);
    expect(r.settings.group('xpack.security.authc.realms.jwt.')).toMatchObject({ 'jwt1.order': 3, 'jwt1.required_claims.tenant': 'acme' });
  });

  it('refuses an unknown realm key', () => {
    const r = readNodeSettings({ CONFIG: undefined, ES_SETTING_XPACK_SECURITY_AUTHC_REALMS_JWT_JWT1_ALLOWED__ISUSER: 'x' });
    expect(r.errors[0]).toMatch(/^unknown setting \[xpack\.security\.authc\.realms\.jwt\.jwt1\.allowed_isuser\]/);
  });

  it('warns about, and ignores, the ES settings this node does not use', () => {
    const r = readNodeSettings({ CONFIG: undefined, ES_SETTING_DISCOVERY_TYPE: 'single-node', ES_SETTING_XPACK_SECURITY_TRANSPORT_SSL_ENABLED: 'false' });
    expect(r.errors).toEqual([]);
    expect(r.warnings).toEqual([
      'setting [discovery.type] (from ES_SETTING_DISCOVERY_TYPE) is not used by this node and is ignored: single node',
      'setting [xpack.security.transport.ssl.enabled] (from ES_SETTING_XPACK_SECURITY_TRANSPORT_SSL_ENABLED) is not used by this node and is ignored: no transport layer here',
    ]);
  });
});

describe('known settings', () => {
  /** Every literal key the sources read through Settings (`settings.str('x', …)`, `st.bool(`${PREFIX}y`)`). */
  function keysReadBySources(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    const walk = (d: string) => {
      for (const n of readdirSync(d)) {
        const p = join(d, n);
        if (statSync(p).isDirectory()) walk(p);
        else if (p.endsWith('.ts')) {
          const text = readFileSync(p, 'utf8');
          const prefix = /const PREFIX = '([^']+)'/.exec(text)?.[1];
          const re = /\b(?:settings|st|s)\.(?:str|num|bool|get)(?:<[^>]*>)?\(\s*[`']([^`']+)[`']/g;
          for (const m of text.matchAll(re)) {
            if (/[?(]/.test(m[0].slice(0, m[0].indexOf('.')))) continue;
            out.push([p.slice(ROOT.length + 1), prefix ? m[1].replace('${PREFIX}', prefix) : m[1]]);
          }
        }
      }
    };
    for (const d of ['actors', 'streams', 'scripts']) walk(join(ROOT, d));
    return out;
  }

  it('check breaker limits, overheads and search.max_buckets with ES texts', () => {
    const r = readNodeSettings({
      CONFIG: undefined,
      ES_SETTING_INDICES_BREAKER_REQUEST_LIMIT: '150%',
      ES_SETTING_INDICES_BREAKER_TOTAL_LIMIT: '12',
      ES_SETTING_NETWORK_BREAKER_INFLIGHT__REQUESTS_OVERHEAD: '-1',
      ES_SETTING_SEARCH_MAX__BUCKETS: '-1',
      ES_SETTING_INDICES_BREAKER_FIELDDATA_LIMIT: '512mb',
      ES_SETTING_INDICES_BREAKER_TOTAL_USE__REAL__MEMORY: 'false',
    });
    expect(r.errors).toEqual([
      'percentage should be in [0-100], got [150] (from ES_SETTING_INDICES_BREAKER_REQUEST_LIMIT)',
      'failed to parse setting [indices.breaker.total.limit] with value [12] as a size in bytes: unit is missing or unrecognized (from ES_SETTING_INDICES_BREAKER_TOTAL_LIMIT)',
      'Failed to parse value [-1] for setting [network.breaker.inflight_requests.overhead] must be >= 0.0 (from ES_SETTING_NETWORK_BREAKER_INFLIGHT__REQUESTS_OVERHEAD)',
      'Failed to parse value [-1] for setting [search.max_buckets] must be >= 0 (from ES_SETTING_SEARCH_MAX__BUCKETS)',
    ]);
    expect([r.settings.str('indices.breaker.fielddata.limit', ''), r.settings.bool('indices.breaker.total.use_real_memory', true)]).toEqual(['512mb', false]);
  });

  it('include every setting the sources read', () => {
    const reads = keysReadBySources();
    expect(reads.length).toBeGreaterThan(10);
    const missing = reads.filter(([, k]) => !settingDef(k));
    expect(missing).toEqual([]);
  });
});
