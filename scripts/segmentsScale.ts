/**
 * `npx tsx scripts/segmentsScale.ts`: issue 19's "Must show" that needs scale and crashes. Starts a
 * node in a child process under `NODE_OPTIONS=--max-old-space-size=<heap>` (its own embedded
 * nats-server, a temp DATA_DIR) and runs three phases (scripts/segmentsScaleRun.ts) on seeded ~1 KB
 * documents (scripts/cli/scaleDocs.ts: regenerated to check, never kept):
 *
 * - load: 2.5× the heap limit of source through `_bulk`, every item acknowledged; the heap used
 *   (`_nodes/stats/jvm`, smallest sample while idle) under half the limit; a scroll returns every
 *   document exactly once with its source byte-identical to what was sent; a `match` counts
 *   exactly what the loader counted.
 * - updates: 1,000 docs updated 1,000,000 times in all (1,000 updates each, `_bulk` batches): the
 *   heap grows by < 64 MB; after `_forcemerge?max_num_segments=1`, `docs.deleted` is 0 and the store
 *   ≤ 3× the same docs (their final versions) loaded once into another index.
 * - kill: a load into a new index, the node `kill -9`ed at a seeded random moment of it (after its
 *   first acknowledged batch), restarted:
 *   it answers within 30 s with every acknowledged doc (and the other indices whole).
 *
 * Prints each check ok / FAILED with its figures and the machine's load; exits 1 on a failure (the
 * data dir is then kept). test/int/segments/scale.test.ts runs a small seeded version.
 *
 *   npx tsx scripts/segmentsScale.ts                                  # 512 MB heap, 1.25 GB, 1M updates
 *   npx tsx scripts/segmentsScale.ts --heap-mb 192 --docs 3000 --updates 3000 --update-docs 100 --deletes-retention 0s
 */
import { rmSync } from 'node:fs';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { serveChild, startChildNode, stopChildNode, type ChildNode } from './cli/childNode';
import { num, parseOrExit, str, UsageError } from './cli/args';
import { scaleDocs } from './cli/scaleDocs';
import { MB } from './cli/scaleClient';
import { rng } from '../test/support/rng';
import { parseTimeValue } from '../actors/wire/timeValue';
import { killPhase, load, loadPhase, updatePhase, type PhaseContext } from './segmentsScaleRun';

const USAGE = `usage: npx tsx scripts/segmentsScale.ts [--heap-mb 512] [--docs N (default 2.5 × heap / doc size)] [--doc-bytes 1024]
                       [--updates 1000000] [--update-docs 1000] [--kill-within 20] [--kill-docs N] [--seed 1]
                       [--shards 1] [--batch 2000] [--conc 2] [--settle 20] [--deletes-retention 60s]
                       [--only load,updates,kill] [--keep]
  --kill-within S   the kill comes at a seeded random moment 0..S s after the crash load's first acknowledged batch
  --settle S        idle heap: the smallest of samples over S seconds
  --deletes-retention  the node's indices.merge.deletes_retention (the force merge waits it out)`;

const PHASES = ['load', 'updates', 'kill'] as const;
const NUMS = { 'heap-mb': 512, 'doc-bytes': 1024, updates: 1_000_000, 'update-docs': 1000, 'kill-within': 20, seed: 1, shards: 1, batch: 2000, conc: 2, settle: 20 };

function options() {
  return parseOrExit('segmentsScale', USAGE, process.argv.slice(2), {
    options: {
      ...Object.fromEntries([...Object.keys(NUMS), 'docs', 'kill-docs', 'deletes-retention', 'only'].map((k) => [k, { type: 'string' as const }])),
      keep: { type: 'boolean' },
    },
  }, (p) => {
    const n = {} as Record<keyof typeof NUMS, number>;
    for (const [k, d] of Object.entries(NUMS) as Array<[keyof typeof NUMS, number]>) {
      n[k] = num(str(p, k), `--${k}`, d);
      if (!(n[k] >= 0) || !Number.isInteger(n[k])) throw new UsageError(`--${k} must be a whole number, got [${str(p, k)}]`);
    }
    if (n['update-docs'] < 1 || n.shards < 1 || n.batch < 1 || n.conc < 1) throw new UsageError('--update-docs, --shards, --batch and --conc must be at least 1');
    const docs = num(str(p, 'docs'), '--docs', Math.ceil((2.5 * n['heap-mb'] * MB) / n['doc-bytes']));
    const only = (str(p, 'only') ?? PHASES.join(',')).split(',');
    if (only.some((o) => !(PHASES as readonly string[]).includes(o))) throw new UsageError(`--only takes ${PHASES.join(', ')}; got [${str(p, 'only')}]`);
    const retention = str(p, 'deletes-retention') ?? '60s';
    let retentionMs: number;
    try {
      retentionMs = parseTimeValue(retention, 'deletes-retention');
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
    return { ...n, docs, killDocs: num(str(p, 'kill-docs'), '--kill-docs', Math.max(docs, 200_000)), only, retention, retentionMs, keep: p.values.keep === true };
  });
}

async function main(): Promise<number> {
  const o = options();
  const script = fileURLToPath(import.meta.url);
  const settings = { 'xpack.security.enabled': false, 'indices.merge.deletes_retention': o.retention };
  const env = { NODE_OPTIONS: `--max-old-space-size=${o['heap-mb']}`, LOG_LEVEL: 'warn' };
  const start = (dataDir?: string) => startChildNode({ script, prefix: 'segments-scale-', env, args: [JSON.stringify(settings)], startTimeoutMs: 120_000, ...(dataDir ? { dataDir } : {}) });
  console.log(`segmentsScale: seed ${o.seed}, heap ${o['heap-mb']} MB, phases ${o.only.join(',')}; machine load ${load()}`);
  let child: ChildNode = await start();
  const failures: string[] = [];
  const c: PhaseContext = {
    url: child.url, dataDir: child.dataDir, docs: scaleDocs(o.seed, o['doc-bytes']), batch: o.batch, conc: o.conc, shards: o.shards, settleMs: o.settle * 1000,
    log: (l) => console.log(l),
    check: (name, ok, figures) => {
      console.log(`${ok ? 'ok    ' : 'FAILED'} ${name}: ${figures}`);
      if (!ok) failures.push(name);
    },
  };
  const t0 = Date.now();
  try {
    console.log(`node ${child.url} (pid ${child.proc.pid}, ${env.NODE_OPTIONS}), data ${child.dataDir}`);
    const others: Record<string, number> = {};
    if (o.only.includes('load')) {
      await loadPhase(c, o.docs);
      others.big = o.docs;
    }
    if (o.only.includes('updates')) {
      await updatePhase(c, o['update-docs'], o.updates, o.retentionMs);
      others.upd = o['update-docs'];
      others['upd-base'] = o['update-docs'];
    }
    if (o.only.includes('kill')) {
      const afterMs = Math.floor(rng(o.seed)() * o['kill-within'] * 1000);
      await killPhase(c, {
        kill: async () => {
          const gone = new Promise((r) => child.proc.once('exit', r));
          child.proc.kill('SIGKILL');
          await gone;
          await stopChildNode(child); // its nats-server, should the watchdog not have stopped it yet
        },
        restart: async () => (child = await start(child.dataDir)),
      }, afterMs, o.killDocs, others);
    }
  } catch (e) {
    failures.push(`run: ${(e as Error).message}`);
    console.log(`FAILED run: ${(e as Error).stack ?? e}`);
  } finally {
    await stopChildNode(child);
    if (failures.length || o.keep) console.log(`data dir kept: ${child.dataDir}; node log tail:\n${readFileSync(child.logFile, 'utf8').split('\n').slice(-15).join('\n')}`);
    else rmSync(child.dataDir, { recursive: true, force: true });
  }
  console.log(`machine load at the end: ${load()}; ${((Date.now() - t0) / 1000).toFixed(0)} s`);
  console.log(failures.length ? `FAIL: ${failures.join('; ')}` : 'PASS');
  return failures.length ? 1 : 0;
}

if (process.argv[2] === '--serve') {
  await serveChild(process.argv[3], JSON.parse(process.argv[4] ?? '{}') as Record<string, unknown>);
} else {
  try {
    process.exit(await main());
  } catch (e) {
    console.error(`segmentsScale: ${(e as Error).message}`);
    process.exit(1);
  }
}
