/**
 * Capturing regular expressions in linear time (RE2 semantics, via re2js) for the few places that
 * build a pattern with capture groups from user input (custom date formats): a backtracking RegExp
 * there can take exponential time on a crafted format and value.
 */
import { RE2JS } from 're2js';

/** The part of RegExp that callers use: `exec` with `undefined` for groups that did not take part. */
export interface LinearRegExp {
  exec(s: string): Array<string | undefined> | null;
  test(s: string): boolean;
}

/**
 * Compiles `source` (RE2 syntax: no backreferences or lookaround) for whole-string matching when it
 * is anchored with `^…$`, as the callers' patterns are.
 */
export function linearRegExp(source: string): LinearRegExp {
  const re = RE2JS.compile(source);
  const groups = re.groupCount();
  return {
    exec(s: string) {
      const m = re.matcher(s);
      if (!m.find()) return null;
      const out: Array<string | undefined> = [];
      for (let i = 0; i <= groups; i++) out.push(m.group(i) ?? undefined);
      return out;
    },
    test: (s: string) => re.matcher(s).find(),
  };
}
