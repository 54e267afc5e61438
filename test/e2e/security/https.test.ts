/**
 * Issue 18: HTTPS on the edge as Elasticsearch 8 (`xpack.security.http.ssl.*`), with a generated CA
 * and with configured certificates, the official clients connecting with `caFingerprint` or a CA; plain
 * HTTP to the HTTPS port never reaching the API; a non-loopback HOST without TLS refused, and allowed
 * with `enabled: false` (then the token service is off, ES's default without TLS).
 */
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { connect as tcp } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Client as Client8 } from 'es8';
import { Client as Client9 } from 'es9';
import { startSystem, type System } from '../../../actors/system';
import { Settings } from '../../../actors/config';
import { startNats, type TestNats } from '../../support/natsServer';
import { fingerprint, makeCa, makeLeaf } from '../../../actors/tls/certificates';

jest.setTimeout(120_000);
const PASSWORD = 'https-test-pw-1';
let nats: TestNats;
let dir: string;
const running: System[] = [];

async function node(settings: Record<string, unknown>, host = '127.0.0.1'): Promise<System> {
  const dataDir = await mkdtemp(join(dir, 'node-'));
  const sys = await startSystem({
    host, port: 0, natsUrl: nats.url, dataDir, configDir: join(dataDir, 'config'),
    settings: new Settings({ 'bootstrap.password': PASSWORD, ...nats.settings, ...settings }),
    log: pino({ level: 'silent' }),
  });
  running.push(sys);
  return sys;
}

/** What a plain-HTTP request to `port` gets back: the raw bytes until the server closes. */
function plainHttp(port: number): Promise<string> {
  return new Promise((res) => {
    const s = tcp(port, '127.0.0.1', () => s.write('GET /_security/_authenticate HTTP/1.1\r\nHost: x\r\nAuthorization: Basic ZWxhc3RpYzpodHRwcy10ZXN0LXB3LTE=\r\n\r\n'));
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('close', () => res(got));
    s.on('error', () => undefined);
    setTimeout(() => s.destroy(), 5_000);
  });
}

beforeAll(async () => {
  nats = await startNats();
  dir = await mkdtemp(join(tmpdir(), 'https-'));
});
afterAll(async () => {
  for (const s of running) await s.stop().catch(() => undefined);
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('generated CA and node certificate', () => {
  let sys: System;
  beforeAll(async () => {
    sys = await node({ 'xpack.security.http.ssl.enabled': true });
  });

  it('serves HTTPS and writes the CA to CONFIG_DIR/certs/http_ca.crt (keys 0600)', async () => {
    expect(sys.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const certs = join(sys.ctx.configDir, 'certs');
    const ca = await readFile(join(certs, 'http_ca.crt'), 'utf8');
    expect(sys.tls!.caFile).toBe(join(certs, 'http_ca.crt'));
    expect(sys.tls!.fingerprint).toBe(fingerprint(ca));
    expect(sys.tls!.fingerprint).toMatch(/^[0-9a-f]{64}$/);
    for (const k of ['http_ca.key', 'http.key']) expect((await stat(join(certs, k))).mode & 0o777).toBe(0o600);
  });

  it.each([['v8', Client8], ['v9', Client9 as unknown as typeof Client8]] as const)('the official %s client connects with caFingerprint', async (_v, Client) => {
    const es = new Client({ node: sys.url, caFingerprint: sys.tls!.fingerprint, tls: { rejectUnauthorized: false }, auth: { username: 'elastic', password: PASSWORD } });
    expect((await es.security.authenticate()).username).toBe('elastic');
    await es.close();
  });

  it('a client expecting another fingerprint is refused', async () => {
    const es = new Client8({ node: sys.url, caFingerprint: 'aa'.repeat(32), tls: { rejectUnauthorized: false }, auth: { username: 'elastic', password: PASSWORD }, maxRetries: 0 });
    await expect(es.security.authenticate()).rejects.toThrow(/fingerprint does not match/);
    await es.close();
  });

  it('a client trusting the CA file connects (curl --cacert does the same)', async () => {
    const es = new Client8({ node: sys.url, tls: { ca: await readFile(sys.tls!.caFile!, 'utf8') }, auth: { username: 'elastic', password: PASSWORD } });
    expect((await es.info()).tagline).toBe('You Know, for Search');
    await es.close();
  });

  it('plain HTTP to the HTTPS port never reaches the API', async () => {
    const port = Number(new URL(sys.url).port);
    const got = await plainHttp(port);
    expect(got).not.toMatch(/elastic|"username"|HTTP\/1\.1 200/);
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
  });

  it('keeps the CA across restarts (same fingerprint)', async () => {
    const again = await startSystem({
      host: '127.0.0.1', port: 0, natsUrl: nats.url, dataDir: sys.ctx.dataDir + '-2', configDir: sys.ctx.configDir,
      settings: new Settings({ 'bootstrap.password': PASSWORD, ...nats.settings, 'xpack.security.http.ssl.enabled': true }), log: pino({ level: 'silent' }),
    });
    running.push(again);
    expect(again.tls!.fingerprint).toBe(sys.tls!.fingerprint);
  });
});

describe('configured certificates', () => {
  it('serves the given key and certificate (an encrypted key with key_passphrase), the CA from certificate_authorities', async () => {
    const ca = await makeCa('My Org CA');
    const leaf = await makeLeaf(ca, { name: 'es1', sans: ['localhost', '127.0.0.1'] });
    const encrypted = createPrivateKey(leaf.key).export({ format: 'pem', type: 'pkcs8', cipher: 'aes-256-cbc', passphrase: 'key-pass-1' }) as string;
    await writeFile(join(dir, 'my-ca.crt'), ca.cert);
    await writeFile(join(dir, 'es1.crt'), leaf.cert);
    await writeFile(join(dir, 'es1.key'), encrypted, { mode: 0o600 });
    const sys = await node({
      'xpack.security.http.ssl.enabled': true,
      'xpack.security.http.ssl.key': join(dir, 'es1.key'),
      'xpack.security.http.ssl.key_passphrase': 'key-pass-1',
      'xpack.security.http.ssl.certificate': join(dir, 'es1.crt'),
      'xpack.security.http.ssl.certificate_authorities': [join(dir, 'my-ca.crt')],
    });
    expect(sys.tls!.generated).toBe(false);
    expect(sys.tls!.fingerprint).toBe(fingerprint(ca.cert));
    const es = new Client8({ node: sys.url, tls: { ca: ca.cert }, auth: { username: 'elastic', password: PASSWORD } });
    expect((await es.security.authenticate()).username).toBe('elastic');
    await es.close();
    const byPrint = new Client9({ node: sys.url, caFingerprint: fingerprint(ca.cert), tls: { rejectUnauthorized: false }, auth: { username: 'elastic', password: PASSWORD } });
    expect((await byPrint.security.authenticate()).username).toBe('elastic');
    await byPrint.close();
  });
});

describe('plain HTTP', () => {
  it('on a non-loopback HOST without TLS settings: refuses to start, saying what to set', async () => {
    await expect(node({}, '0.0.0.0')).rejects.toThrow(/refusing to serve plain HTTP on \[0\.0\.0\.0\].*xpack\.security\.http\.ssl\.enabled/);
  });

  it('with xpack.security.http.ssl.enabled: false it starts, and the token service is off as in ES', async () => {
    const sys = await node({ 'xpack.security.http.ssl.enabled': false }, '0.0.0.0');
    const url = sys.url.replace('0.0.0.0', '127.0.0.1');
    expect(url).toMatch(/^http:/);
    const res = await fetch(`${url}/_security/oauth2/token`, {
      method: 'POST',
      headers: { authorization: `Basic ${Buffer.from(`elastic:${PASSWORD}`).toString('base64')}`, 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'client_credentials' }),
    });
    const body = (await res.json()) as { error: { type: string; reason: string } };
    expect([res.status, body.error.type, body.error.reason]).toEqual([400, 'feature_not_enabled_exception', 'security tokens are not enabled']);
  });

  it('on loopback by default (nothing leaves the machine)', async () => {
    const sys = await node({});
    expect(sys.url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect(sys.tls).toBeUndefined();
  });
});

describe('npm start with HTTPS', () => {
  it('prints the CA fingerprint and a curl --cacert line that works', async () => {
    const { spawnCli, waitForLine } = await import('../../support/cli');
    const { spawnSync } = await import('node:child_process');
    const { freePort } = await import('../../../actors/natsCluster');
    const dataDir = await mkdtemp(join(dir, 'start-'));
    const port = await freePort();
    const p = spawnCli('start', [], {
      DATA_DIR: dataDir, CONFIG_DIR: join(dataDir, 'config'), CONFIG: '/dev/null', HOST: '127.0.0.1', PORT: String(port),
      ELASTIC_PASSWORD: PASSWORD, LOG_LEVEL: 'warn', ES_SETTING_XPACK_SECURITY_HTTP_SSL_ENABLED: 'true',
    });
    try {
      let out = '';
      p.stdout!.on('data', (d) => (out += d));
      await waitForLine(p, 'stdout', (l) => l.includes('official client:'), 60_000);
      const print = /HTTP CA certificate SHA-256 fingerprint:\n\s+([0-9a-f]{64})\n/.exec(out)![1];
      const curlLine = out.split('\n').find((l) => l.includes('curl --cacert'))!.trim();
      expect(print).toBe(fingerprint(await readFile(join(dataDir, 'config', 'certs', 'http_ca.crt'), 'utf8')));
      const [, caFile, url] = /curl --cacert (\S+) -u elastic (\S+)/.exec(curlLine)!;
      const curl = spawnSync('curl', ['-s', '--cacert', caFile, '-u', `elastic:${PASSWORD}`, `${url}/_security/_authenticate`], { encoding: 'utf8' });
      expect(JSON.parse(curl.stdout).username).toBe('elastic');
      // npm run reset-password finds the HTTPS node and trusts its CA (CONFIG_DIR/certs/http_ca.crt), as ES's tool.
      const { runCli } = await import('../../support/cli');
      const reset = await runCli('resetPassword', ['-b', '-s'], { CONFIG_DIR: join(dataDir, 'config'), CONFIG: '/dev/null', HOST: '127.0.0.1', PORT: String(port), ES_SETTING_XPACK_SECURITY_HTTP_SSL_ENABLED: 'true' });
      expect(reset.stderr).toBe('');
      const fresh = reset.stdout.trim();
      const again = spawnSync('curl', ['-s', '--cacert', caFile, '-u', `elastic:${fresh}`, `${url}/_security/_authenticate`], { encoding: 'utf8' });
      expect(JSON.parse(again.stdout).username).toBe('elastic');
    } finally {
      const gone = new Promise((r) => p.once('exit', r));
      p.kill('SIGTERM');
      await gone;
    }
  });
});
