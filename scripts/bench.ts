/**
 * The performance figures of issues 2–6, 11, 12 and 14, measured side by side on this machine:
 *
 *   npm run bench [-- --only foundation,pit,scroll,security,events,search,cluster,contexts,bus,segments | issue2,…] [--docs N] [--quick]
 *                    [--rounds R] [--out bench-results.json]
 *
 * Sections run in order, each a module of scripts/bench/ exporting `run(opts): Promise<Row[]>`;
 * the ones that need the corpus index share one node, built once (its bulk load is issue 2's
 * ingest figure). Rows print as each section ends; a markdown table closes the run and the rows go
 * to bench-results.json. `--quick` is a smoke run: 100,000 documents and fewer rounds.
 *
 * On a shared 2-core machine absolute numbers swing ±20 %, so every comparison is a ratio of
 * figures taken in the same run (interleaved rounds, medians). Targets are printed, never asserted.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { Corpus } from './bench/corpus';
import { abortAll, onAbort } from './bench/cleanup';
import { killLoaders } from './bench/load';
import { fmt, hasGc } from './bench/stats';
import type { BenchOptions, Row, Section } from './bench/types';

const USAGE = `usage: npm run bench [-- --only foundation,pit,scroll,security,events,search,cluster,contexts,bus,segments | issue2,… ] [--docs N] [--quick]
                          [--rounds R] [--out bench-results.json]`;

const SECTIONS: Array<{ name: string; issue: string; load: () => Promise<{ run: Section }> }> = [
  { name: 'foundation', issue: 'issue2', load: () => import('./bench/foundation') },
  { name: 'pit', issue: 'issue3', load: () => import('./bench/pit') },
  { name: 'scroll', issue: 'issue4', load: () => import('./bench/scroll') },
  { name: 'security', issue: 'issue5', load: () => import('./bench/security') },
  { name: 'events', issue: 'issue6', load: () => import('./bench/events') },
  { name: 'cluster', issue: 'issue11', load: () => import('./bench/cluster') },
  { name: 'contexts', issue: 'issue12', load: () => import('./bench/contexts') },
  { name: 'search', issue: 'issue14', load: () => import('./bench/textSearch') },
  { name: 'bus', issue: 'issue18', load: () => import('./bench/bus') },
  { name: 'segments', issue: 'issue19', load: () => import('./bench/segments') },
];

/** Heap figures need `global.gc`: run again under `node --expose-gc --import tsx` when missing. */
function reexecWithGc(): Promise<number> {
  const child = spawn(process.execPath, ['--expose-gc', '--max-old-space-size=8192', '--import', 'tsx', fileURLToPath(import.meta.url), ...process.argv.slice(2)], {
    stdio: 'inherit',
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  return new Promise((res) => child.on('exit', (code, sig) => res(code ?? (sig ? 128 + 2 : 1))));
}

const line = (r: Row) =>
  `  ${r.metric.padEnd(72)} ${fmt(r.value).padStart(12)} ${r.unit.padEnd(9)}${r.target ? ` target ${r.target} ${r.ok ? 'ok' : 'MISSED'}` : ''}`;

function table(rows: Row[]): string {
  const out = ['| Section | Figure | Value | Unit | Target |', '|---|---|---:|---|---|'];
  for (const r of rows) out.push(`| ${r.section} | ${r.metric} | ${fmt(r.value)} | ${r.unit} | ${r.target ? `${r.target} ${r.ok ? '✓' : '✗'}` : ''} |`);
  return out.join('\n');
}

async function main(): Promise<number> {
  const args = parseOrExit('bench', USAGE, process.argv.slice(2), {
    options: { quick: { type: 'boolean' }, docs: { type: 'string' }, rounds: { type: 'string' }, out: { type: 'string' }, only: { type: 'string' } },
  });
  const quick = args.values.quick === true;
  const docs = num(str(args, 'docs'), '--docs', quick ? 100_000 : 1_000_000);
  const rounds = num(str(args, 'rounds'), '--rounds', quick ? 3 : 5);
  const out = str(args, 'out') ?? 'bench-results.json';
  const only = str(args, 'only')?.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = only?.filter((o) => !SECTIONS.some((s) => s.name === o || s.issue === o));
  if (unknown?.length) throw new UsageError(`unknown section(s) ${unknown.join(', ')}: use ${SECTIONS.map((s) => `${s.name}|${s.issue}`).join(', ')}`);
  const chosen = SECTIONS.filter((s) => !only || only.includes(s.name) || only.includes(s.issue));

  const note = (l: string) => process.stderr.write(`  · ${l}\n`);
  const corpus = new Corpus(docs, note);
  const offCorpus = onAbort(() => corpus.stop());
  const opts: BenchOptions = { docs, quick, rounds, corpus, note };
  const started = new Date();
  const rows: Row[] = [];
  const errors: Array<{ section: string; error: string }> = [];
  const save = () =>
    writeFileSync(
      out,
      JSON.stringify(
        { started: started.toISOString(), node: process.version, cpus: cpus().length, loadavg: loadavg(), options: { docs, quick, rounds, sections: chosen.map((s) => s.name) }, rows, errors },
        null,
        2,
      ) + '\n',
    );
  console.log(`npm run bench: ${chosen.map((s) => s.name).join(', ')}; ${docs.toLocaleString('en-US')} docs, ${rounds} rounds${quick ? ' (quick)' : ''}; node ${process.version}, ${cpus().length} cpus, load ${loadavg().map((x) => x.toFixed(1)).join(' ')}${hasGc() ? '' : ' (no gc: heap figures are rough)'}`);
  try {
    for (const s of chosen) {
      console.log(`\n## ${s.name} (${s.issue})`);
      const t0 = Date.now();
      try {
        const got = await (await s.load()).run(opts);
        for (const r of got) console.log(line(r));
        rows.push(...got);
      } catch (e) {
        killLoaders();
        console.log(`  FAILED: ${(e as Error).stack ?? e}`);
        errors.push({ section: s.name, error: String((e as Error).message ?? e) });
      }
      console.log(`  (${((Date.now() - t0) / 1000).toFixed(0)} s)`);
      save();
    }
  } finally {
    offCorpus();
    await corpus.stop();
  }
  console.log(`\n${table(rows)}\n`);
  console.log(`${rows.length} figures in ${((Date.now() - started.getTime()) / 1000).toFixed(0)} s, written to ${out}${errors.length ? `; FAILED sections: ${errors.map((e) => e.section).join(', ')}` : ''}`);
  return errors.length ? 1 : 0;
}

if (!hasGc() && !process.env.BENCH_NO_GC) {
  process.exitCode = await reexecWithGc();
} else {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    process.on(sig, () => {
      killLoaders();
      void abortAll().finally(() => process.exit(130));
    });
  }
  try {
    process.exitCode = await main();
  } catch (e) {
    if (e instanceof UsageError) process.stderr.write(`bench: ${e.message}\n${USAGE}\n`);
    else console.error(e);
    process.exitCode = e instanceof UsageError ? 64 : 1;
  }
  // Open handles (keep-alive timers of stopped actors, sockets) must not keep a finished run alive.
  process.exit(process.exitCode);
}
