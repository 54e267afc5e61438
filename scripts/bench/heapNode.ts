/**
 * A node in a child process with a V8 heap limit (`NODE_OPTIONS=--max-old-space-size`), its own
 * nats-server and temp DATA_DIR, served by scripts/segmentsScale.ts: the issue 19 bench sections.
 */
import { rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startChildNode, stopChildNode, type ChildNode } from '../cli/childNode';

export const SERVE_SCRIPT = fileURLToPath(new URL('../segmentsScale.ts', import.meta.url));
export const MAPPINGS = {
  properties: { i: { type: 'long' }, v: { type: 'long' }, tag: { type: 'keyword' }, f: { type: 'double' }, title: { type: 'text' }, note: { type: 'text' }, body: { type: 'text' } },
};

/** A node in a child process with `heapMb` of V8 heap (and its own nats-server), stopped and removed on abort. */
export async function heapNode(heapMb: number, settings: Record<string, unknown>, dataDir?: string): Promise<ChildNode & { startMs: number }> {
  const t0 = Date.now();
  const c = await startChildNode({
    script: SERVE_SCRIPT, prefix: 'bench-segments-', startTimeoutMs: 300_000, ...(dataDir ? { dataDir } : {}),
    env: { NODE_OPTIONS: `--max-old-space-size=${heapMb}`, LOG_LEVEL: 'warn' },
    args: [JSON.stringify({ 'xpack.security.enabled': false, ...settings })],
  });
  return { ...c, startMs: Date.now() - t0 };
}

/** Stops the node and removes its DATA_DIR. */
export async function dropNode(c: ChildNode): Promise<void> {
  await stopChildNode(c);
  rmSync(c.dataDir, { recursive: true, force: true });
}

