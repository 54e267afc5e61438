/**
 * Issue 10 item 28: every CLI parses strictly (node:util parseArgs, strict): `--help`/`-h` on every
 * command and sub-command exits 0, an unknown option or an extra argument exits 64 (ES's USAGE) with
 * the usage, a bad `--since` fails before connecting, `replay --help` lists every aggregate, and
 * `events tail` leaves no consumer behind.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { runCli, spawnCli, waitForLine, type CliResult } from '../../support/cli';
import { startNats, type TestNats } from '../../support/natsServer';
import { Aggregate, ensureStreams, EVENT_STREAM } from '../../../streams';
import { CliError, serviceTokensCli } from '../../../scripts/serviceTokens';

/** Runs CLIs a few at a time (2-core machines). */
async function runAll(cases: Array<[string, string[]]>, env: Record<string, string> = {}): Promise<CliResult[]> {
  const out: CliResult[] = new Array(cases.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: 3 }, async () => {
      while (next < cases.length) {
        const i = next++;
        out[i] = await runCli(cases[i][0], cases[i][1], { BENCH_NO_GC: '1', ...env });
      }
    }),
  );
  return out;
}

describe('--help and -h', () => {
  const cases: Array<[string, string[]]> = [
    ['events', ['--help']],
    ['events', ['-h']],
    ['events', ['tail', '--help']],
    ['events', ['export', '-h']],
    ['replay', ['--help']],
    ['replay', ['-h']],
    ['serviceTokens', ['--help']],
    ['serviceTokens', ['create', '--help']],
    ['serviceTokens', ['list', '-h']],
    ['serviceTokens', ['delete', '--help']],
    ['resetPassword', ['--help']],
    ['resetPassword', ['-h']],
    ['start', ['--help']],
    ['bench', ['--help']],
    ['benchReplay', ['--help']],
    ['snapshotBench', ['--help']],
    ['securityBench', ['--help']],
    ['securitySearchBench', ['-h']],
    ['cluster', ['--help']],
    ['breakers', ['--help']],
    ['soak', ['--help']],
  ];
  let results: CliResult[];
  beforeAll(async () => {
    results = await runAll(cases);
  }, 120_000);

  it.each(cases.map((c, i) => [c[0], c[1].join(' '), i] as const))('%s %s prints its usage and exits 0', (_s, _a, i) => {
    const r = results[i];
    expect(r.stderr.replace(/npm warn.*\n/g, '')).toBe('');
    expect(r.stdout).toMatch(/^usage:/);
    expect(r.code).toBe(0);
  });

  it('replay --help lists every aggregate of the event log', () => {
    const usage = results[4].stdout;
    for (const a of Object.values(Aggregate)) expect(usage).toMatch(new RegExp(`aggregate: .*\\b${a}\\b`));
  });

  it('a sub-command’s help is its own', () => {
    expect(results[2].stdout).toMatch(/^usage: npm run events -- tail /);
    expect(results[7].stdout).toMatch(/^usage: npm run service-tokens -- \[--config-dir <dir>\] create /);
  });
});

describe('bad command lines exit 64 with the usage', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['events', ['tail', '--jsno'], /Unknown option '--jsno'/],
    ['events', ['export', 'scroll', 'extra'], /unexpected argument \[extra\]\nusage: npm run events -- export/],
    ['events', ['frob'], /unknown command \[frob\]/],
    ['events', ['tail', '--since'], /Option '--since <value>' argument missing/],
    ['replay', ['--timelime'], /Unknown option '--timelime'/],
    ['replay', ['scroll', 'id', 'extra'], /unexpected argument \[extra\]/],
    ['replay', ['--aggregate', 'cursor'], /unknown aggregate \[cursor\]/],
    ['replay', ['--at', 'yesterday'], /--at: cannot parse time \[yesterday\]/],
    ['replay', ['--tolerance', 'lots'], /--tolerance must be a number/],
    ['serviceTokens', ['list', '--verbose'], /Unknown option '--verbose'/],
    ['serviceTokens', ['list', 'elastic/fleet-server', 'extra'], /unexpected argument \[extra\]/],
    ['serviceTokens', ['create', 'elastic/fleet-server'], /missing <name>/],
    ['resetPassword', ['--user', 'bob'], /Unknown option '--user'/],
    ['resetPassword', ['bob'], /unexpected argument \[bob\]/],
    ['resetPassword', ['-a', '-i'], /-a and -i exclude each other/],
    ['start', ['--port', '9300'], /Unknown option '--port'/],
    ['start', ['now'], /unexpected argument \[now\]/],
    ['benchReplay', ['--windows', '3'], /Unknown option '--windows'/],
    ['snapshotBench', ['lots'], /N must be a number/],
    ['cluster', ['--nodes', '0'], /--nodes must be a whole number from 1 to 9, got \[0\]/],
    ['cluster', ['--port', '65535'], /--port must be a port number with room for 3 nodes/],
    ['cluster', ['--node', '2'], /Unknown option '--node'/],
    ['cluster', ['now'], /unexpected argument \[now\]/],
    ['breakers', ['--docs', 'many'], /--docs must be a number, got \[many\]/],
    ['breakers', ['--only', 'aggs'], /--only takes terms-size, terms, page; got \[aggs\]/],
    ['soak', ['--nodes', '2'], /--nodes must be 1 or 3, got \[2\]/],
    ['soak', ['--minutes', '0'], /--minutes must be positive/],
  ];
  let results: CliResult[];
  beforeAll(async () => {
    // Nothing listens on the discard port: a command that tried to connect would say so instead.
    results = await runAll(cases.map(([s, a]) => [s, a]), { NATS_URL: 'nats://127.0.0.1:9' });
  }, 120_000);

  it.each(cases.map((c, i) => [c[0], c[1].join(' '), i] as const))('%s %s', (_s, _a, i) => {
    const r = results[i];
    expect(r.stderr).toMatch(cases[i][2]);
    expect(r.stderr).toMatch(/usage:/);
    expect(r.stderr).not.toMatch(/cannot connect|ECONNREFUSED/);
    expect(r.code).toBe(64);
  });
});

describe('service-tokens in process', () => {
  it('answers --help with its usage instead of an error', async () => {
    await expect(serviceTokensCli(['--help'], {})).resolves.toMatch(/^usage: npm run service-tokens/);
    await expect(serviceTokensCli(['delete', '-h'], {})).resolves.toMatch(/^usage: npm run service-tokens -- \[--config-dir <dir>\] delete/);
  });

  it('refuses a missing or unknown command', async () => {
    await expect(serviceTokensCli([], {})).rejects.toThrow(CliError);
    await expect(serviceTokensCli(['frob'], {})).rejects.toThrow(/unknown command \[frob\]/);
  });
});

describe('events tail on a real nats-server', () => {
  let nats: TestNats;
  let nc: NatsConnection;
  beforeAll(async () => {
    nats = await startNats();
    nc = await nats.connect();
    await ensureStreams(nc);
  });
  afterAll(async () => {
    await nc.drain();
    await nats.stop();
  });

  const consumers = async () => {
    const jsm = await jetstreamManager(nc);
    const names: string[] = [];
    for await (const c of jsm.consumers.list(EVENT_STREAM)) names.push(c.name);
    return names;
  };

  it('a bad --since fails before connecting, instead of hanging', async () => {
    const t0 = Date.now();
    const r = await runCli('events', ['tail', '--since', 'yesterday'], nats.env('subscriber'), 30_000);
    expect(r.code).toBe(64);
    expect(r.stderr).toContain('cannot parse time [yesterday]');
    expect(Date.now() - t0).toBeLessThan(20_000);
    expect(await consumers()).toEqual([]);
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('deletes its consumer when stopped with %s', async (sig) => {
    const p = spawnCli('events', ['tail', 'scroll', '--since', '-15m'], nats.env('subscriber'));
    const exited = new Promise<number | null>((res) => p.once('exit', (code) => res(code)));
    await waitForLine(p, 'stderr', (l) => l.startsWith('tailing es.v1.evt.scroll.>'));
    expect(await consumers()).toHaveLength(1);
    p.kill(sig);
    expect(await exited).toBe(0);
    expect(await consumers()).toEqual([]);
  });
});
