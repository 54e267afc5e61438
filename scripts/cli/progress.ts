import { SingleBar, Presets } from 'cli-progress';

/** Progress of a long read: a bar on a TTY (stderr), nothing when piped or redirected. */
export interface Progress {
  update(done: number, total: number): void;
  stop(): void;
}

/** A cli-progress bar on stderr when it is a terminal; a no-op otherwise. */
export function progressBar(label: string, stream: NodeJS.WriteStream = process.stderr, unit = 'events'): Progress {
  if (!stream.isTTY) return { update: () => undefined, stop: () => undefined };
  const bar = new SingleBar(
    { stream, format: `${label} [{bar}] {percentage}% | {value}/{total} ${unit} | {eta_formatted} left`, hideCursor: true, clearOnComplete: true, fps: 10 },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update(done, total) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.setTotal(total);
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
