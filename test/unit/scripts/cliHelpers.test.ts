import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliArgs, num, UsageError } from '../../../scripts/cli/args';
import { parseTime } from '../../../streams/time';
import { resolveNatsUrl } from '../../../scripts/cli/natsUrl';
import { subjectFilter } from '../../../scripts/cli/subjectFilter';
import { formatFact } from '../../../scripts/cli/formatFact';

describe('cliArgs (strict node:util parseArgs)', () => {
  const options = { json: { type: 'boolean' }, id: { type: 'string' }, at: { type: 'string' }, help: { type: 'boolean', short: 'h' } } as const;
  it.each([
    [['scroll', '--json'], { values: { json: true }, positionals: ['scroll'] }],
    [['--id', 'abc', '--at=2024-01-01'], { values: { id: 'abc', at: '2024-01-01' }, positionals: [] }],
    [['--id', '-15m'], { values: { id: '-15m' }, positionals: [] }],
    [['-h'], { values: { help: true }, positionals: [] }],
    [['--', '--json'], { values: {}, positionals: ['--json'] }],
  ])('parses %j', (argv, expected) => {
    expect(cliArgs(argv, { options, maxPositionals: 1 })).toEqual(expected);
  });

  it.each([
    [['--jsno'], /Unknown option '--jsno'/],
    [['--id'], /Option '--id <value>' argument missing/],
    [['--json=yes'], /Option '--json' does not take an argument/],
    [['a', 'b'], /^unexpected argument \[b\]$/],
    [['-x'], /Unknown option '-x'/],
  ])('refuses %j', (argv, message) => {
    expect(() => cliArgs(argv, { options, maxPositionals: 1 })).toThrow(UsageError);
    expect(() => cliArgs(argv, { options, maxPositionals: 1 })).toThrow(message);
  });

  it('says so when a command takes no arguments', () => {
    expect(() => cliArgs(['x'], { options })).toThrow('unexpected argument [x]: this command takes no arguments');
  });

  it.each([
    ['12', 12],
    [undefined, 7],
  ])('num(%j) -> %j', (text, n) => expect(num(text, '--n', 7)).toBe(n));

  it.each(['', 'ten', '1e999'])('num refuses %j', (text) => expect(() => num(text, '--n', 7)).toThrow(UsageError));
});

describe('parseTime', () => {
  const now = Date.parse('2024-05-01T10:00:00.000Z');
  it.each([
    ['2024-05-01T09:00:00Z', now - 3_600_000],
    ['2024-05-01', Date.parse('2024-05-01')],
    ['1714557600000', 1714557600000],
    ['now', now],
    ['-15m', now - 900_000],
    ['-1.5h', now - 5_400_000],
    ['-2d', now - 172_800_000],
    ['-500ms', now - 500],
  ])('reads %s', (s, ms) => expect(parseTime(s, now)).toBe(ms));

  it('says which forms it takes', () => {
    expect(() => parseTime('yesterday', now)).toThrow(/ISO-8601, epoch ms, now, or -<n>/);
  });
});

describe('subjectFilter', () => {
  it.each([
    [undefined, 'es.v1.evt.>'],
    ['scroll', 'es.v1.evt.scroll.>'],
    ['pit.0f0c', 'es.v1.evt.pit.0f0c.>'],
    ['*.*.expired', 'es.v1.evt.*.*.expired'],
    ['token.>', 'es.v1.evt.token.>'],
    ['es.v1.evt.apikey.*.created', 'es.v1.evt.apikey.*.created'],
  ])('%s -> %s', (arg, subject) => expect(subjectFilter(arg)).toBe(subject));
});

describe('resolveNatsUrl', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'natsurl-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('prefers NATS_URL', () => {
    expect(resolveNatsUrl({ NATS_URL: 'nats://h:1', DATA_DIR: dir })).toEqual({ url: 'nats://h:1', source: 'NATS_URL' });
  });

  it('falls back to the default when DATA_DIR has no ports file', () => {
    expect(resolveNatsUrl({ DATA_DIR: join(dir, 'none') })).toEqual({ url: 'nats://127.0.0.1:4222', source: 'default' });
  });

  it('reads the ports file of a live embedded server under DATA_DIR/nats before a stale one', async () => {
    await mkdir(join(dir, 'nats'), { recursive: true });
    await writeFile(join(dir, 'nats', `nats-server_${process.pid}.ports`), JSON.stringify({ nats: ['nats://127.0.0.1:5555'] }));
    await writeFile(join(dir, 'nats', 'nats-server_999999999.ports'), JSON.stringify({ nats: ['nats://127.0.0.1:6666'] }));
    expect(resolveNatsUrl({ DATA_DIR: dir })).toEqual({ url: 'nats://127.0.0.1:5555', source: 'ports file', live: true });
  });
});

describe('formatFact', () => {
  const base = { time: '2024-05-01T10:00:00.000Z', aggregateId: 'c1', seq: 1 };
  it.each([
    ['scroll.opened', { keepAliveMs: 60_000, indices: ['a', 'b'], shards: 2, pinned: [], owner: { username: 'bob', realm: 'native' }, slice: { id: 1, max: 3 } }, 'indices=a,b shards=2 keep_alive=1m owner=bob@native slice=1/3'],
    ['pit.extended', { keepAliveMs: 90_000 }, 'keep_alive=1.5m'],
    ['scroll.released', { reason: 'index_deleted' }, 'reason=index_deleted'],
    ['token.created', { grantType: 'password', subject: { username: 'bob' }, accessExpiresAt: 0, accessHash: 'SECRETISH' }, 'grant=password user=bob access_expires=1970-01-01T00:00:00.000Z'],
    ['apikey.created', { name: 'ci', owner: { username: 'bob', realm: 'native' }, hash: '{SSHA256}zz' }, 'name=ci owner=bob@native'],
    ['servicetoken.created', { account: 'elastic/fleet-server', name: 't1', creator: { username: 'elastic', realm: 'reserved' }, hash: '{PBKDF2_STRETCH}zz' }, 'token=elastic/fleet-server/t1 creator=elastic@reserved'],
  ])('shows the key data of %s, never a hash', (type, data, kv) => {
    const line = formatFact({ ...base, type, data });
    expect(line).toBe(`2024-05-01T10:00:00.000Z  ${type.padEnd(22)} c1  #1  ${kv}`);
    expect(line).not.toMatch(/SSHA|PBKDF2|SECRETISH/);
  });

  it.each([
    ['scroll.cleared', 'by=bob opaque_id=r-9'],
    ['pit.closed', 'by=bob opaque_id=r-9'],
  ])('shows who cleared a context (%s)', (type, kv) => {
    expect(formatFact({ ...base, type, data: { by: 'bob' }, correlationId: 'r-9' })).toBe(`2024-05-01T10:00:00.000Z  ${type.padEnd(22)} c1  #1  ${kv}`);
  });

  it.each([
    ['node.joined', { name: 'node-0', host: '127.0.0.1', http_address: '127.0.0.1:9200', version: '8.15.0', started_at: 0 }, 'n1', 'node=n1 name=node-0 http=127.0.0.1:9200 version=8.15.0 started=1970-01-01T00:00:00.000Z'],
    ['node.left', { reason: 'stopped' }, 'n1', 'node=n1 reason=stopped'],
    ['node.left', { reason: 'timed_out', by: 'n2', silent_ms: 2140 }, 'n2', 'node=n2 reason=timed_out by=n2 silent=2.1s'],
    ['scroll.adopted', { from: 'n1', to: 'n2' }, 'n2', 'node=n2 from=n1 to=n2'],
    ['pit.adopted', { from: '', to: 'n2' }, 'n2', 'node=n2 from=(no owner) to=n2'],
    ['pit.opened', { keepAliveMs: 60_000, indices: ['a'], shards: 1, pinned: [], node: 'n1' }, 'n1', 'node=n1 indices=a shards=1 keep_alive=1m'],
    ['pit.opened', { keepAliveMs: 60_000, indices: ['a'], shards: 1, pinned: [], node: 'n1' }, 'n3', 'node=n3 indices=a shards=1 keep_alive=1m owner_node=n1'],
  ])('shows %s with the node that appended it (%j)', (type, data, node, kv) => {
    expect(formatFact({ ...base, type, data, node })).toBe(`2024-05-01T10:00:00.000Z  ${type.padEnd(22)} c1  #1  ${kv}`);
  });

  it('adds the opaque id and prints facts without data bare', () => {
    expect(formatFact({ ...base, type: 'pit.closed', data: {}, correlationId: 'r-1' })).toBe(`2024-05-01T10:00:00.000Z  ${'pit.closed'.padEnd(22)} c1  #1  opaque_id=r-1`);
    expect(formatFact({ ...base, type: 'scroll.expired', data: {} })).toBe(`2024-05-01T10:00:00.000Z  ${'scroll.expired'.padEnd(22)} c1  #1`);
  });
});
