/**
 * Child process of segmentCrash.test.ts: writes segments (or merges them in a worker) in an endless
 * loop, printing `done <i>` after each, until the parent kills it with SIGKILL.
 *   node --import tsx crashChild.ts <dir> <write|steps|merge>
 */
import { join } from 'node:path';
import { writeSegment, writeSegmentAsync } from '../../../../../actors/shard/engine/segments';
import { MergeScheduler } from '../../../../../actors/shard/engine/segments/mergeScheduler';
import { randomStore, storeLeaf } from './segmentFixture';

const [dir, mode] = process.argv.slice(2);
const leaf = storeLeaf(randomStore(3, 3000));
// never outlive a parent that died before killing us: stop after 200 segments or a minute
const deadline = Date.now() + 60_000;
let rounds = 0;
const more = () => ++rounds <= 200 && Date.now() < deadline;

async function main(): Promise<void> {
  if (mode === 'merge') {
    writeSegment(dir, 'a', { leaves: [{ leaf }] });
    writeSegment(dir, 'b', { leaves: [{ leaf }] });
    const merges = new MergeScheduler();
    for (let i = 0; more(); i++) {
      await merges.merge({ dir, name: `m${i}`, inputs: [{ path: join(dir, 'a.seg') }, { path: join(dir, 'b.seg') }] });
      process.stdout.write(`done ${i}\n`);
    }
    await merges.close();
    return;
  }
  for (let i = 0; more(); i++) {
    if (mode === 'steps') await writeSegmentAsync(dir, `s${i}`, { leaves: [{ leaf }] });
    else writeSegment(dir, `w${i}`, { leaves: [{ leaf }] });
    process.stdout.write(`done ${i}\n`);
  }
}
void main().then(() => process.exit(0));
