import { createReadStream, createWriteStream, statSync, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Envelope } from './envelope';

/**
 * Reads an exported log (`npm run events -- export`): one envelope per line, blank lines skipped.
 * `onProgress(done, total)` counts characters read against the file size, every 4096 lines.
 */
export async function* readJsonLines(file: string, onProgress?: (done: number, total: number) => void): AsyncGenerator<Envelope> {
  const total = onProgress ? statSync(file).size : 0;
  const rl = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  let n = 0;
  let done = 0;
  for await (const line of rl) {
    n++;
    if (onProgress) {
      done += line.length + 1;
      if (n % 4096 === 0) onProgress(Math.min(done, total), total);
    }
    if (!line.trim()) continue;
    try {
      yield JSON.parse(line) as Envelope;
    } catch (e) {
      throw new Error(`${file}:${n}: not a JSON envelope (${(e as Error).message})`, { cause: e });
    }
  }
}

/** A line writer to a file or stdout that respects back-pressure. */
export class LineWriter {
  private readonly out: WriteStream | NodeJS.WriteStream;
  constructor(file?: string) {
    this.out = file && file !== '-' ? createWriteStream(file) : process.stdout;
  }
  async write(line: string): Promise<void> {
    if (!this.out.write(line + '\n')) await once(this.out, 'drain');
  }
  /** Writes without waiting; returns the bytes still buffered (call `onDrain` when that is too much). */
  writeNow(chunk: string): number {
    this.out.write(chunk);
    return this.out.writableLength;
  }
  onDrain(f: () => void): void {
    this.out.once('drain', f);
  }
  async close(): Promise<void> {
    if (this.out === process.stdout) return;
    await new Promise<void>((res, rej) => (this.out as WriteStream).end((e?: Error | null) => (e ? rej(e) : res())));
  }
}
