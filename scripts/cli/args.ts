/** Parsed command line: positionals in order, `--flag value` / `--flag=value` / boolean `--flag`. */
export interface Args {
  _: string[];
  flags: Record<string, string | true>;
}

/**
 * A small argv parser. `booleans` lists flags that never take a value (`--json`), so the word after
 * them stays positional.
 */
export function parseArgs(argv: string[], booleans: readonly string[] = []): Args {
  const out: Args = { _: [], flags: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--') continue;
    if (!a.startsWith('--')) {
      out._.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq < 0 ? undefined : eq);
    if (eq >= 0) out.flags[name] = a.slice(eq + 1);
    else if (booleans.includes(name) || i + 1 >= argv.length || argv[i + 1].startsWith('--')) out.flags[name] = true;
    else out.flags[name] = argv[++i];
  }
  return out;
}

/** A string flag, or undefined; throws when given without a value. */
export function flag(args: Args, name: string): string | undefined {
  const v = args.flags[name];
  if (v === true) throw new Error(`--${name} needs a value`);
  return v;
}
