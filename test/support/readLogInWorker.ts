/**
 * Reads ES_EVT through the replay reader worker (scripts/cli/workerFactSource.ts) and prints what
 * it got as one JSON line: `node --import tsx test/support/readLogInWorker.ts <connection JSON> [raw|natsjs] [filter]`
 * (a streams/busConnection.ts BusConnection).
 * A child process, because the worker is found through `import.meta.url` (tsx, not jest).
 */
import { readFactBatchesInWorker } from '../../scripts/cli/workerFactSource';

const [conn, how = 'raw', filterSubject] = process.argv.slice(2);
const facts: unknown[] = [];
let batches = 0;
let out: unknown;
try {
  for await (const b of readFactBatchesInWorker(JSON.parse(conn), { natsJs: how === 'natsjs', filterSubject })) {
    batches++;
    facts.push(...b);
  }
  out = { facts, batches };
} catch (e) {
  out = { error: (e as Error).message, read: facts.length };
}
// exit once the (large) line is written: a pipe takes it in pieces
process.stdout.write(JSON.stringify(out) + '\n', () => process.exit(0));
