import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nkeys } from '@nats-io/nats-core';
import { Settings } from '../../../actors/config';
import { natsConnectionFromSettings } from '../../../actors/bus/natsSettings';
import { connectionOptions } from '../../../streams/busConnection';
import { eventsRetentionMs } from '../../../actors/compaction/retention';

const dir = mkdtempSync(join(tmpdir(), 'nats-settings-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const seed = new TextDecoder().decode(nkeys.createUser().getSeed());
writeFileSync(join(dir, 'node.nk'), `${seed}\n`);
writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n');
writeFileSync(join(dir, 'node.creds'), '-----BEGIN NATS USER JWT-----\nj\n------END NATS USER JWT------\n');
const servers = ['tls://a:4222', 'tls://b:4222'];
const of = (s: Record<string, unknown>) => natsConnectionFromSettings(servers, new Settings(s));

describe('the node\'s NATS login and TLS from nats.* settings', () => {
  it('reads a user and password', () => {
    expect(of({ 'nats.user': 'node', 'nats.password': 'pw' })).toEqual({ servers, user: 'node', pass: 'pw' });
    expect(connectionOptions(of({ 'nats.user': 'node', 'nats.password': 'pw' }))).toMatchObject({ user: 'node', pass: 'pw' });
  });

  it('reads an nkey seed file and a CA, and signs with the seed', () => {
    const c = of({ 'nats.nkey_seed_file': join(dir, 'node.nk'), 'nats.tls.ca': join(dir, 'ca.crt') });
    expect(c.nkeySeed).toBe(seed);
    expect(c.tls?.ca).toMatch(/BEGIN CERTIFICATE/);
    const auth = connectionOptions(c).authenticator as (nonce?: string) => { nkey: string; sig: string };
    expect(auth('abc').nkey).toBe(nkeys.fromSeed(new TextEncoder().encode(seed)).getPublicKey());
  });

  it('reads a creds file', () => {
    expect(of({ 'nats.creds_file': join(dir, 'node.creds') }).creds).toMatch(/NATS USER JWT/);
  });

  it.each([
    [{ 'nats.user': 'u', 'nats.password': 'p', 'nats.nkey_seed_file': join(dir, 'node.nk') }, /exclude each other/],
    [{ 'nats.user': 'u' }, /\[nats.user\] needs \[nats.password\]/],
    [{ 'nats.password': 'p' }, /\[nats.password\] needs \[nats.user\]/],
    [{ 'nats.tls.cert': join(dir, 'ca.crt') }, /go together/],
    [{ 'nats.nkey_seed_file': join(dir, 'ca.crt') }, /does not hold an nkey seed/],
    [{ 'nats.tls.ca': join(dir, 'missing.crt') }, /cannot read \[.*missing\.crt\] of setting \[nats\.tls\.ca\]: ENOENT/],
  ])('refuses %j', (s, msg) => {
    expect(() => of(s)).toThrow(msg);
  });
});

describe('events.retention', () => {
  it.each([
    [{}, 0],
    [{ 'events.retention': '5s' }, 5_000],
    [{ 'events.retention': '7d' }, 7 * 86_400_000],
    [{ 'events.retention_ms': 90_000 }, 90_000],
    [{ 'events.retention': '90s', 'events.retention_ms': 90_000 }, 90_000],
  ])('%j is %d ms', (s, ms) => expect(eventsRetentionMs(new Settings(s))).toBe(ms));

  it('refuses two different values', () => {
    expect(() => eventsRetentionMs(new Settings({ 'events.retention': '5s', 'events.retention_ms': 60_000 }))).toThrow(/\[events.retention\] \(5s\) and \[events.retention_ms\] \(60000\) disagree/);
  });
});
