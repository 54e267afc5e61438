import { startTestNode } from './support/node';
(async () => {
  const t = await startTestNode(process.env.RET ? { settings: { 'indices.merge.deletes_retention': '0s' } } : {});
  const step = async (name: string, f: () => Promise<unknown>) => {
    const t0 = Date.now();
    const timer = setInterval(() => console.log(`  still in ${name} ${Date.now() - t0}ms`), 5000);
    await f();
    clearInterval(timer);
    console.log(name, Date.now() - t0);
  };
  await t.es.indices.create({ index: 'seg', settings: { number_of_shards: 1, number_of_replicas: Number(process.env.REP ?? 0) } });
  await step('bulk', () => t.es.bulk({ index: 'seg', refresh: true, operations: Array.from({ length: 300 }, (_, i) => [{ index: { _id: `d${i}` } }, { v: 'old', n: i }]).flat() }));
  if (process.env.FL) await step('flush', () => t.es.indices.flush({ index: 'seg' }));
  if (process.env.B2) await step('bulk2', () => t.es.bulk({ index: 'seg', refresh: true, operations: Array.from({ length: 300 }, (_, i) => [{ index: { _id: `d${i}` } }, { v: 'new', n: i }]).flat() }));
  if (process.env.FL) await step('flush2', () => t.es.indices.flush({ index: 'seg' }));
  if (process.env.FM) await step('fm', () => t.es.indices.forcemerge({ index: 'seg', max_num_segments: 1 }));
  (globalThis as any).DBG = true;
  await step('restart', () => t.restart());
  await step('stop', () => t.stop());
  process.exit(0);
})();
