import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { TestNode } from '../../support/node';

/**
 * Restarts a test node so that it folds the whole document log (no snapshot): a snapshot is taken
 * first (so the clean shutdown has nothing new to snapshot), then every snapshot file is removed.
 */
export async function restartFromLog(t: TestNode): Promise<void> {
  await t.sys.services.cluster.snapshots.take('request');
  const dir = join(t.dataDir, 'snapshots');
  for (const f of await readdir(dir).catch(() => [] as string[])) await rm(join(dir, f), { force: true });
  await t.restart();
}
