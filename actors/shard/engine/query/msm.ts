/** `minimum_should_match` arithmetic (Queries.calculateMinShouldMatch). */

/** ES `minimum_should_match`: `3`, `-1`, `75%`, `-25%`, `2<75%`, `3<-1 5<50%`. */
export function minimumShouldMatchOf(count: number, spec: string): number {
  spec = spec.trim();
  if (spec.includes('<')) {
    let result = count;
    for (const part of spec.split(/\s+/)) {
      const [ub, rest] = part.split('<');
      if (count <= Number(ub)) return result;
      result = minimumShouldMatchOf(count, rest);
    }
    return result;
  }
  let result: number;
  if (spec.endsWith('%')) {
    const calc = Math.fround((count * Number(spec.slice(0, -1))) * Math.fround(1 / 100));
    result = calc < 0 ? count + Math.trunc(calc) : Math.trunc(calc);
  } else {
    const n = Number(spec);
    if (!Number.isInteger(n)) throw new Error(`For input string: "${spec}"`);
    result = n < 0 ? count + n : n;
  }
  return result < 0 ? 0 : result;
}
