/** Merges in worker threads under jest: the worker boots TypeScript itself (mergeWorker.mjs registers tsx). */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bitsFromKeep, openSegment, SegmentCache, verifySegment, writeSegment } from '../../../../../actors/shard/engine/segments';
import { MergeScheduler } from '../../../../../actors/shard/engine/segments/mergeScheduler';
import { nextRate, RateLimiter, THROTTLE } from '../../../../../actors/shard/engine/segments/throttle';
import { expectSameDocs } from './sameLeaf';
import { randomStore, storeLeaf, tempDir } from './segmentFixture';

let tmp: ReturnType<typeof tempDir>;
const paths: string[] = [];
beforeAll(() => {
  tmp = tempDir();
  for (let i = 0; i < 3; i++) {
    writeSegment(tmp.dir, `in${i}`, { leaves: [{ leaf: storeLeaf(randomStore(20 + i, 2500, { idPrefix: `s${i}-` })) }] });
    paths.push(join(tmp.dir, `in${i}.seg`));
  }
});
afterAll(() => tmp.cleanup());

describe('MergeScheduler', () => {
  it('merges in a worker thread what writeSegment writes in this one, keeping the docs of the bitsets', async () => {
    const merges = new MergeScheduler();
    try {
      const cache = new SegmentCache({ maxBytes: 16 << 20 });
      const inputs = paths.map((p) => openSegment(p, cache));
      const keeps = inputs.map((s, i) => bitsFromKeep(s.maxDoc, (d) => (d + i) % 3 !== 0));
      const r = await merges.merge({ dir: tmp.dir, name: 'mw', inputs: paths.map((path, i) => ({ path, keep: keeps[i] })) });
      expect(r.meta.maxDoc).toBe(keeps.reduce((s, k, i) => s + Array.from({ length: inputs[i].maxDoc }, (_, d) => (k[d >>> 3] >> (d & 7)) & 1).reduce((a, b) => a + b, 0), 0));
      expect(verifySegment(join(tmp.dir, 'mw.seg')).maxDoc).toBe(r.meta.maxDoc);
      const merged = openSegment(join(tmp.dir, 'mw.seg'), cache);
      expectSameDocs(merged, inputs.flatMap((s, i) => Array.from({ length: s.maxDoc }, (_, d) => d).filter((d) => (d + i) % 3 !== 0).map((d) => [s, d] as [typeof s, number])));
      expect(r.inputDocs).toBe(7500);
      const st = merges.stats();
      expect(st).toMatchObject({ current: 0, queued: 0, total: 1, totalDocs: 7500, autoThrottleMBps: 20 });
      expect(st.totalSizeBytes).toBe(inputs.reduce((s, x) => s + x.meta.sizeBytes, 0));
      expect(st.totalBytesWritten).toBe(r.meta.sizeBytes);
      merged.close();
      inputs.forEach((s) => s.close());
    } finally {
      await merges.close();
    }
  });

  it('runs one merge at a time by default, queues the others, and never blocks the event loop', async () => {
    const merges = new MergeScheduler();
    let maxGap = 0;
    let last = performance.now();
    const tick = setInterval(() => {
      const now = performance.now();
      maxGap = Math.max(maxGap, now - last);
      last = now;
    }, 2);
    try {
      const a = merges.merge({ dir: tmp.dir, name: 'q1', inputs: paths.map((path) => ({ path })) });
      const b = merges.merge({ dir: tmp.dir, name: 'q2', inputs: paths.slice(1).map((path) => ({ path })) });
      expect(merges.stats()).toMatchObject({ current: 1, queued: 1 });
      await Promise.all([a, b]);
      expect(merges.stats()).toMatchObject({ current: 0, queued: 0, total: 2 });
      expect(maxGap).toBeLessThan(250); // generous: two shared cores; the merge itself takes far longer
    } finally {
      clearInterval(tick);
      await merges.close();
    }
  });

  it('throttles a big merge to the auto-throttle rate and counts the time', async () => {
    // 1 MB/s on a merge of about 1.5 MB of output: well over a second if the limit holds
    const merges = new MergeScheduler({ initialMBps: 1.1, minBigMergeBytes: 0 });
    try {
      const r = await merges.merge({ dir: tmp.dir, name: 'slow', inputs: paths.slice(0, 2).map((path) => ({ path })) });
      expect(r.throttledMs).toBeGreaterThan(300);
      expect(r.ms).toBeGreaterThanOrEqual(r.throttledMs);
      expect(merges.stats().totalThrottledTimeMs).toBe(r.throttledMs);
      const forced = await merges.merge({ dir: tmp.dir, name: 'fast', inputs: paths.slice(0, 2).map((path) => ({ path })), forced: true });
      expect(forced.throttledMs).toBe(0);
    } finally {
      await merges.close();
    }
  });

  it('rejects a merge of a missing input, and keeps working', async () => {
    const merges = new MergeScheduler();
    try {
      await expect(merges.merge({ dir: tmp.dir, name: 'bad', inputs: [{ path: paths[0] }, { path: join(tmp.dir, 'nope.seg') }] })).rejects.toThrow(/ENOENT|nope/);
      await expect(merges.merge({ dir: tmp.dir, name: 'bad2', inputs: [{ path: paths[0] }, { path: paths[0] + '.x' }] })).rejects.toThrow();
      const ok = await merges.merge({ dir: tmp.dir, name: 'after', inputs: [{ path: paths[0] }] });
      expect(ok.meta.maxDoc).toBeGreaterThan(0);
    } finally {
      await merges.close();
    }
  });

  it('on close fails queued and running merges and leaves no partial file', async () => {
    const merges = new MergeScheduler({ initialMBps: 0.5, minBigMergeBytes: 0 });
    const outcome = (p: Promise<unknown>) => p.then(() => 'done', (e: Error) => e.message);
    const a = outcome(merges.merge({ dir: tmp.dir, name: 'c1', inputs: paths.map((path) => ({ path })) }));
    const b = outcome(merges.merge({ dir: tmp.dir, name: 'c2', inputs: paths.map((path) => ({ path })) }));
    await new Promise((r) => setTimeout(r, 300));
    await merges.close();
    expect([await a, await b]).toEqual(['merge scheduler closed', 'merge scheduler closed']);
    expect(readdirSync(tmp.dir).filter((f) => f.startsWith('c1') || f.startsWith('c2'))).toEqual([]);
    expect(existsSync(join(tmp.dir, 'c1.seg'))).toBe(false);
  });
});

describe('auto-throttle', () => {
  const MB = 1024 * 1024;
  const now = 10_000;
  it.each([
    ['a small merge does not move the rate', 20, 10 * MB, [], 0, 20],
    ['nothing running, nothing queued: down 10%', 22, 100 * MB, [], 0, 20],
    ['merges queued: unchanged', 20, 100 * MB, [], 2, 20],
    ['a similar merge running for more than 3 s: up 20%', 20, 100 * MB, [{ bytes: 120 * MB, startedAt: now - 4000 }], 0, 24],
    ['a similar merge running for less than 3 s: down', 22, 100 * MB, [{ bytes: 120 * MB, startedAt: now - 1000 }], 0, 20],
    ['floor 5 MB/s', 5, 100 * MB, [], 0, 5],
    ['ceiling 10 GB/s', 10240, 100 * MB, [{ bytes: 100 * MB, startedAt: 0 }], 0, 10240],
  ] as const)('%s', (_n, rate, bytes, running, queued, want) => {
    expect(nextRate(rate, bytes, [...running], queued, now)).toBeCloseTo(want, 6);
  });

  it('starts at ES defaults: 20 MB/s, between 5 MB/s and 10 GB/s, for merges of 50 MB and more', () => {
    expect(THROTTLE).toEqual({ startMBps: 20, minMBps: 5, maxMBps: 10240, minBigMergeBytes: 50 * MB });
  });

  it('a rate limiter holds a writer to its rate', () => {
    const r = new RateLimiter(() => 10);
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) r.wrote(100 * 1024); // 1 MB at 10 MB/s: about 100 ms
    const ms = performance.now() - t0;
    expect(ms).toBeGreaterThan(80);
    expect(r.throttledMs).toBeGreaterThan(70);
  });
});
