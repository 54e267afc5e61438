/**
 * Crash points of the kill -9 tests (test/int/segments/): with `ES_CRASH_POINT=<name>` (or
 * `<name>:<k>`, the k-th time) in its environment, a process that reaches that step writes
 * `crash point <name> reached` to stderr and stays there, so a test can `kill -9` it at exactly that
 * moment. Unset (always, outside those tests), a call compares an empty string and returns. The
 * count of hits is per thread.
 *
 * Points (where they are):
 * - `flush.tmp`, `merge.tmp`: a segment's docs are in its `.seg.tmp`, its fields not yet (writer.ts;
 *   flush on the main thread, merge in a worker);
 * - `flush.published`, `merge.published`: the `.seg` is renamed into place, no commit names it yet
 *   (shardStore.ts);
 * - `trim.before`, `trim.recorded`, `trim.purged`: a commit is durable and the primary trims the
 *   shard's log: before it records the trim point, after, after the purge (clusterState.ts);
 * - `recovery.put`, `recovery.fetch`: peer recovery, after the first file the source put into the
 *   object store / the target fetched from it (peerRecovery.ts).
 */
import { writeSync } from 'node:fs';

const [WANTED, NTH] = (process.env.ES_CRASH_POINT ?? '').split(':');
const nth = Math.max(1, Number(NTH ?? 1) || 1);
let hits = 0;

function reached(name: string): boolean {
  if (!WANTED || name !== WANTED || ++hits !== nth) return false;
  // straight to fd 2: a worker thread's process.stderr goes through the main thread
  writeSync(2, `crash point ${name} reached\n`);
  return true;
}

/** On an async path: a promise that never settles once the point is reached (else undefined). */
export function crashPoint(name: string): Promise<void> | undefined {
  return reached(name) ? new Promise<void>(() => undefined) : undefined;
}

/** On a synchronous path (a merge worker): blocks the thread for good once the point is reached. */
export function crashPointSync(name: string): void {
  if (reached(name)) for (;;) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
}
