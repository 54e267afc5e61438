import type { BenchOptions, Row } from './types';

export async function run(_o: BenchOptions): Promise<Row[]> {
  return [];
}
