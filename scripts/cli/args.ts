import { parseArgs, type ParseArgsConfig } from 'node:util';

/** A command line the command does not take: the CLIs print it with their usage and exit 64 (ES's USAGE). */
export class UsageError extends Error {
  override name = 'UsageError';
}

export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/**
 * Strict parsing with `node:util` `parseArgs`: an unknown option, an option without its value, a value
 * given to a boolean, or more positionals than `maxPositionals` is a {@link UsageError}.
 *
 * @example
 * cliArgs(['--since', '-15m', 'scroll'], { options: { since: { type: 'string' } }, maxPositionals: 1 })
 * // { values: { since: '-15m' }, positionals: ['scroll'] }
 */
export function cliArgs(argv: string[], spec: { options: OptionSpecs; maxPositionals?: number }): Parsed {
  let parsed: Parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv, spec.options), options: spec.options, strict: true, allowPositionals: true }) as Parsed;
  } catch (e) {
    throw new UsageError((e as Error).message, { cause: e });
  }
  const max = spec.maxPositionals ?? 0;
  if (parsed.positionals.length > max) {
    throw new UsageError(`unexpected argument [${parsed.positionals[max]}]${max === 0 ? ': this command takes no arguments' : ''}`);
  }
  return parsed;
}

/**
 * `--since -15m` -> `--since=-15m`: parseArgs takes a value starting with `-` for an option only in
 * the `=` form, but relative times (`-15m`) and negative numbers are values, never options.
 */
function joinNegativeValues(argv: string[], options: OptionSpecs): string[] {
  const stringOption = (a: string) =>
    Object.entries(options).some(([name, o]) => o.type === 'string' && (a === `--${name}` || (o.short !== undefined && a === `-${o.short}`)));
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (stringOption(argv[i]) && /^-\d/.test(argv[i + 1] ?? '')) out.push(`${argv[i]}=${argv[++i]}`);
    else out.push(argv[i]);
  }
  return out;
}

/** A string option's value (parseArgs typed it already). */
export function str(p: Parsed, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

/** A numeric option (or positional text): a {@link UsageError} unless it is a finite number. */
export function num(text: string | undefined, name: string, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw new UsageError(`${name} must be a number, got [${text}]`);
  return n;
}

/**
 * For commands without sub-commands: parses strictly with `-h/--help` added; prints `usage` and exits
 * 0 on `--help`, prints the error and `usage` and exits 64 on a bad command line (also one `read`
 * finds when it turns the parsed options into values).
 */
export function parseOrExit(name: string, usage: string, argv: string[], spec?: { options?: OptionSpecs; maxPositionals?: number }): Parsed;
export function parseOrExit<T>(name: string, usage: string, argv: string[], spec: { options?: OptionSpecs; maxPositionals?: number }, read: (p: Parsed) => T): T;
export function parseOrExit<T>(name: string, usage: string, argv: string[], spec: { options?: OptionSpecs; maxPositionals?: number } = {}, read?: (p: Parsed) => T): T | Parsed {
  try {
    const p = cliArgs(argv, { options: { ...spec.options, help: { type: 'boolean', short: 'h' } }, maxPositionals: spec.maxPositionals });
    if (p.values.help) {
      process.stdout.write(usage + '\n');
      process.exit(0);
    }
    // `read` turns the options into values (num(), times): its UsageErrors are handled here too.
    return read ? read(p) : p;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${name}: ${e.message}\n${usage}\n`);
    process.exit(64);
  }
}
