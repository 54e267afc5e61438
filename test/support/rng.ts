/**
 * The seeded pseudo-random generator of the tests, the fuzz and the bench loaders (mulberry32):
 * the same seed gives the same corpus, queries and requests on every run, so a failure can be
 * run again.
 *
 * @example
 * const rand = rng(42);
 * const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
 */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
