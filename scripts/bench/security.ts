/**
 * Issue 5, security: search rate with Basic, Bearer (OAuth2 access token), ApiKey and service
 * account token, each as a ratio to a node with security off (interleaved rounds, paired medians);
 * then the figures of scripts/securityBench.ts, run as its own process (clean heap for its
 * bytes-per-key figure) with `--json`.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { authSearchRates, CREDENTIALS } from './authRates';
import { onAbort } from './cleanup';
import { median, pairedRatio, row } from './stats';
import type { BenchOptions, Row } from './types';

const S = 'security';
const NAMES = { open: 'security off', basic: 'Basic (elastic, reserved realm)', bearer: 'Bearer OAuth2 access token', apikey: 'ApiKey', service: 'service account token (fleet-server)' } as const;

function securityBench(o: BenchOptions, json: string): Promise<void> {
  const script = fileURLToPath(new URL('../securityBench.ts', import.meta.url));
  const env = { ...process.env, KEYS: String(o.quick ? 20_000 : 100_000), ROUNDS: String(o.quick ? 2 : 3), SECONDS: String(o.quick ? 1 : 2) };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, '--json', json], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    const off = onAbort(() => child.kill('SIGTERM'));
    let err = '';
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      off();
      if (code === 0) resolve();
      else reject(new Error(`securityBench.ts exited with ${code}: ${err.trim()}`));
    });
  });
}

export async function run(o: BenchOptions): Promise<Row[]> {
  const rows: Row[] = [];
  // An even number of rounds: the order of the credentials alternates (authRates.ts).
  const rounds = Math.max(4, o.rounds + (o.rounds % 2));
  const { rates, cpuUs } = await authSearchRates({ rounds, seconds: o.quick ? 1.5 : 2, note: o.note });
  for (const c of CREDENTIALS) rows.push(row(S, `search rate, ${NAMES[c]} (16 connections)`, median(rates[c]), 'req/s'));
  // issue 20: within 3 % of no security for every credential
  for (const c of CREDENTIALS.slice(1)) rows.push(row(S, `search rate ${NAMES[c]} / security off`, pairedRatio(rates[c], rates.open), 'ratio', { min: 0.97 }));
  // The node's own CPU per search is steadier than a rate on a shared machine: security off / on.
  for (const c of CREDENTIALS) rows.push(row(S, `node CPU per search, ${NAMES[c]}`, median(cpuUs[c]), 'µs'));
  for (const c of CREDENTIALS.slice(1)) rows.push(row(S, `node CPU per search, security off / ${NAMES[c]}`, pairedRatio(cpuUs.open, cpuUs[c]), 'ratio', { min: 0.97 }));

  const dir = await mkdtemp(join(tmpdir(), 'bench-security-'));
  try {
    o.note('security: scripts/securityBench.ts ...');
    const json = join(dir, 'figures.json');
    await securityBench(o, json);
    const figures = JSON.parse(await readFile(json, 'utf8')) as Array<{ metric: string; value: number; unit: string; max?: number }>;
    for (const f of figures) rows.push(row(S, `securityBench: ${f.metric}`, f.value, f.unit, f.max === undefined ? {} : { max: f.max }));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}
