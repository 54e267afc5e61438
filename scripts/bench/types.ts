import type { Corpus } from './corpus';

/** One figure of `npm run bench`. `target` is informative: nothing fails on it (shared machine). */
export interface Row {
  section: string;
  metric: string;
  value: number;
  unit: string;
  target?: string;
  ok?: boolean;
}

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
