/**
 * `npm run fuzz`: a seeded bad-input fuzz of a node (issue 10, "Must show"). Starts a node in a
 * child process (its own nats-server, a temp DATA_DIR, security on), creates fixtures, sends
 * `--requests` generated bad requests (malformed/truncated JSON, wrong types for every paging
 * field, deep nesting, huge numbers, long strings, invalid UTF-8, bad NDJSON, forged scroll/PIT ids,
 * junk Authorization headers, compressed bodies and bombs, raw-socket garbage), then reports 5xx
 * answers, hangs (no answer within `--timeout`), statuses other than ES's for the issue-21 probes
 * (fuzzEdgeCases.ts), 4xx answers not in ES's error shape, whether the node process survived, its RSS
 * before and after, and whether a raw scroll/PIT id reached its log. Exits 1 on any 5xx, hang,
 * unexpected status or unshaped 4xx, crash, leak or an RSS growth over `--max-rss-growth-mb`.
 *
 *   npm run fuzz                              # 10,000 requests, seed 1
 *   npm run fuzz -- --seed 7 --requests 50000 --concurrency 4
 *   npm run fuzz -- --url http://127.0.0.1:9200 --user elastic:changeme   # a running node
 *   npm run fuzz -- --replay 1234 --seed 7    # send case #1234 of seed 7 alone and print it
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { caseAt } from './fuzzCases';
import { setupFixtures } from './fuzzFixtures';
import { formatReport, runFuzz } from './fuzzRunner';
import { rssMb, serveChild, startChildNode, stopChildNode as stopChild } from './cli/childNode';

const PASSWORD = 'fuzz-elastic-password-1';

const USAGE = `usage: npm run fuzz -- [--seed N] [--requests N] [--concurrency N] [--timeout MS] [--max-seconds S]
                       [--url URL --user USER:PASS] [--only label,label] [--report FILE] [--max-rss-growth-mb MB]
                       [--replay I]`;

async function serve(dataDir: string): Promise<void> {
  // the node under test, in this (child) process: own nats-server under dataDir, port 0
  await serveChild(dataDir, { 'xpack.security.enabled': true, 'bootstrap.password': PASSWORD });
}

async function alive(url: string, auth: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/`, { headers: { authorization: auth }, signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) console.log(`GET / answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
    return res.status === 200;
  } catch (e) {
    console.log(`GET / failed: ${(e as Error).message}`);
    return false;
  }
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    strict: true,
    options: {
      seed: { type: 'string', default: '1' },
      requests: { type: 'string', default: '10000' },
      concurrency: { type: 'string', default: '4' },
      timeout: { type: 'string', default: '10000' },
      'max-seconds': { type: 'string', default: '900' },
      'max-rss-growth-mb': { type: 'string', default: '768' },
      url: { type: 'string' },
      user: { type: 'string' },
      only: { type: 'string' },
      report: { type: 'string' },
      replay: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (k: keyof typeof values) => {
    const n = Number(values[k]);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${k} must be a non-negative integer`);
    return n;
  };
  const seed = num('seed');
  const auth = `Basic ${Buffer.from(values.user ?? `elastic:${PASSWORD}`).toString('base64')}`;
  const child = values.url ? undefined : await startChildNode({ script: fileURLToPath(import.meta.url), prefix: 'fuzz-node-' });
  const url = values.url ?? child!.url;
  let failed = false;
  try {
    const fixtures = await setupFixtures(url, auth);
    if (values.replay !== undefined) {
      const c = caseAt(seed, num('replay'), fixtures);
      console.log(c.kind === 'raw' ? c.bytes.toString('latin1') : { ...c, body: c.body?.toString('utf8', 0, 5000) });
      const rep = await runFuzz({ url, seed, first: num('replay'), requests: 1, concurrency: 1, timeoutMs: num('timeout'), maxSeconds: 60, fixtures });
      console.log(formatReport(rep));
      return rep.fiveXX || rep.hangs || rep.unexpected || rep.unshaped ? 1 : 0;
    }
    const rssBefore = child ? rssMb(child.proc.pid!) : NaN;
    let peak = rssBefore;
    console.log(`fuzzing ${url} (seed ${seed}, ${num('requests')} requests, concurrency ${num('concurrency')})`);
    const rep = await runFuzz({
      url,
      seed,
      requests: num('requests'),
      concurrency: Math.max(1, num('concurrency')),
      timeoutMs: num('timeout'),
      maxSeconds: num('max-seconds'),
      fixtures,
      labels: values.only?.split(','),
      onProgress: (sent, r) => {
        const rss = child && !child.exited() ? rssMb(child.proc.pid!) : NaN;
        peak = Math.max(peak, rss || 0);
        console.log(`  ${sent} sent, ${r.fiveXX} 5xx, ${r.hangs} hangs${child ? `, node RSS ${rss} MB` : ''}`);
      },
    });
    console.log(formatReport(rep));
    if (values.report) writeFileSync(values.report, JSON.stringify(rep, null, 2));
    const crashed = child ? child.exited() : false;
    const up = !crashed && (await alive(url, auth));
    console.log(`node process: ${crashed ? 'CRASHED' : up ? 'alive, answering' : 'NOT ANSWERING'}`);
    failed = rep.fiveXX > 0 || rep.hangs > 0 || rep.unexpected > 0 || rep.unshaped > 0 || !up;
    if (rep.sent < num('requests')) console.log(`stopped after --max-seconds: ${rep.sent} of ${num('requests')} sent`);
    if (child && !crashed) {
      const rssAfter = rssMb(child.proc.pid!);
      const growth = rssAfter - rssBefore;
      const bounded = growth <= num('max-rss-growth-mb');
      console.log(`memory: RSS ${rssBefore} MB before, ${rssAfter} MB after (${growth >= 0 ? '+' : ''}${growth} MB, peak ${Math.max(peak, rssAfter)} MB)${bounded ? '' : ' — OVER THE BOUND'}`);
      failed ||= !bounded;
      const log = readFileSync(child.logFile, 'utf8');
      const leaked = [fixtures.scrollId, fixtures.pitId, fixtures.clearedScrollId, PASSWORD].filter((s) => log.includes(s));
      console.log(`log: ${log.split('\n').length - 1} lines, ${leaked.length ? `LEAKS ${leaked.length} raw id(s)/secret(s)` : 'no raw scroll/PIT id or password'}`);
      failed ||= leaked.length > 0;
    }
  } finally {
    if (child) {
      await stopChild(child);
      if (failed) console.log(`node log kept: ${child.logFile}`);
      else rmSync(child.dataDir, { recursive: true, force: true });
    }
  }
  console.log(failed ? 'FAIL' : 'PASS: 0 5xx, 0 hangs, every status as ES gives it, every 4xx in ES\'s shape, no crash, bounded memory');
  return failed ? 1 : 0;
}

if (process.argv[2] === '--serve') {
  await serve(process.argv[3]);
} else {
  try {
    process.exit(await main());
  } catch (e) {
    console.error(`fuzz: ${(e as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}
