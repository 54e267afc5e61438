import type { Corpus } from './corpus';
import type { Row } from './stats';

export type { Row } from './stats';

export interface BenchOptions {
  /** Documents of the shared corpus index. */
  docs: number;
  quick: boolean;
  /** Interleaved rounds for side-by-side figures (medians are reported). */
  rounds: number;
  /** The shared node with the corpus index, built on first use. */
  corpus: Corpus;
  /** Progress lines (stderr), not figures. */
  note: (line: string) => void;
}

export type Section = (opts: BenchOptions) => Promise<Row[]>;
