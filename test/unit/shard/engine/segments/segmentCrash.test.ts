/**
 * kill -9 in the middle of writing a segment, on the main thread (sync and in steps) and in a merge
 * worker: every file left under a final `.seg` name is complete and intact; at most the one being
 * written is left, as a `.tmp`. The child runs under `node --import tsx` (the merge worker boots
 * there too).
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openSegment, SegmentCache, verifySegment } from '../../../../../actors/shard/engine/segments';
import { tempDir } from './segmentFixture';

const ROOT = resolve(__dirname, '../../../../..');

/** Starts the child, lets it finish `after` segments, kills it `delayMs` later; resolves with its output. */
function killMidWrite(dir: string, mode: string, after: number, delayMs: number): Promise<string> {
  return new Promise((res, rej) => {
    const p = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'crashChild.ts'), dir, mode], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    let killing = false;
    p.stdout.on('data', (d) => {
      out += d;
      if (!killing && out.includes(`done ${after - 1}\n`)) {
        killing = true;
        setTimeout(() => p.kill('SIGKILL'), delayMs);
      }
    });
    p.stderr.on('data', (d) => (err += d));
    p.on('error', rej);
    p.on('exit', (code, signal) => (signal === 'SIGKILL' ? res(out) : rej(new Error(`child exited ${code} ${signal}: ${err.slice(0, 2000)}`))));
  });
}

describe('kill -9 while writing', () => {
  it.each([
    ['a flush on the main thread', 'write', 2, 7],
    ['a flush on the main thread, later', 'write', 3, 61],
    ['a flush in steps', 'steps', 2, 23],
    ['a flush in steps, later', 'steps', 2, 90],
    ['a merge in a worker', 'merge', 2, 41],
    ['a merge in a worker, later', 'merge', 1, 130],
  ])('%s leaves no partial .seg file', async (_name, mode, after, delayMs) => {
    const tmp = tempDir();
    try {
      const out = await killMidWrite(tmp.dir, mode, after, delayMs);
      const done = out.split('\n').filter((l) => l.startsWith('done')).length;
      const files = readdirSync(tmp.dir);
      const segs = files.filter((f) => f.endsWith('.seg'));
      const tmps = files.filter((f) => f.endsWith('.seg.tmp'));
      // every reported segment is there, nothing else but what was in progress
      expect(segs.length).toBeGreaterThanOrEqual(done);
      expect(tmps.length).toBeLessThanOrEqual(1);
      const cache = new SegmentCache({ maxBytes: 8 << 20 });
      for (const f of segs) {
        const maxDoc = mode === 'merge' && f.startsWith('m') ? 6000 : 3000;
        expect(verifySegment(join(tmp.dir, f)).maxDoc).toBe(maxDoc);
        const s = openSegment(join(tmp.dir, f), cache);
        expect(s.source(maxDoc - 1).length).toBeGreaterThan(0);
        s.close();
      }
    } finally {
      tmp.cleanup();
    }
  });
});
